/**
 * Commits reported applied before they were durable: a small one-file commit is reported once
 * its post-image is in the commit log and renamed into place, and writes its record and fsyncs
 * the file and its directory afterwards (`transaction.ts`). Until that ends its paths stay
 * locked — the next commit of the path, or the re-check of a watch, waits — so the log never
 * holds two unsettled commits of one file; closing the workspace waits for all of it.
 */
export class Settling {
  readonly #running = new Set<Promise<void>>();
  readonly #hold: (paths: readonly string[], until: Promise<void>) => void;
  readonly #onFailure: (error: unknown) => void | Promise<void>;

  /** `onFailure` is awaited, the paths still locked: what it repairs is in place before their next commit. */
  constructor(hold: (paths: readonly string[], until: Promise<void>) => void, onFailure: (error: unknown) => void | Promise<void>) {
    this.#hold = hold;
    this.#onFailure = onFailure;
  }

  /** `work` makes the commit of `paths` durable; it is called with their locks still held, which it keeps until it ends. */
  add(paths: readonly string[], work: Promise<void>): void {
    const running: Promise<void> = work.catch((error: unknown) => this.#onFailure(error)).catch(() => undefined).finally(() => this.#running.delete(running));
    this.#running.add(running);
    this.#hold(paths, running);
  }

  /** Resolves once every commit reported so far is durable and recorded (or has failed to become so, reported through `onFailure`). */
  async settled(): Promise<void> {
    await Promise.all([...this.#running]);
  }

  /** Resolves once nothing is left to settle, later commits included. */
  async drain(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
  }
}
