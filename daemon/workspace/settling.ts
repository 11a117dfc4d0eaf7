/**
 * Commits reported applied before they were durable: a small one-file commit is reported once
 * its post-image is in the commit log and renamed into place, and writes its record and fsyncs
 * the file and its directory afterwards (`transaction.ts`). Until that ends its paths stay
 * locked — the next commit of the path, or the re-check of a watch, waits — so the log never
 * holds two unsettled commits of one file; closing the workspace waits for all of it.
 *
 * A settle whose only failure was its record (no space, say) is tried again later: after the
 * next settle that succeeds, and before every history query and the close. Its paths are not
 * held meanwhile: recovery tells such a commit from a later one of the same file.
 */
export class Settling {
  readonly #running = new Set<Promise<void>>();
  readonly #retries = new Set<() => Promise<void>>();
  readonly #retriesRunning = new Map<() => Promise<void>, Promise<void>>();
  readonly #hold: (paths: readonly string[], until: Promise<void>) => void;
  readonly #onFailure: (error: unknown) => void | Promise<void>;

  /** `onFailure` is awaited, the paths still locked: what it repairs is in place before their next commit. */
  constructor(hold: (paths: readonly string[], until: Promise<void>) => void, onFailure: (error: unknown) => void | Promise<void>) {
    this.#hold = hold;
    this.#onFailure = onFailure;
  }

  /**
   * `work` makes the commit of `paths` durable; it is called with their locks still held, which it
   * keeps until it ends. The retries a success starts are not part of it: they would hold this
   * commit's paths while records of other commits are written.
   */
  add(paths: readonly string[], work: Promise<void>): void {
    const running: Promise<void> = work.then(() => void this.#retryPending(), (error: unknown) => {
      if (error instanceof RetryLater) this.#retries.add(error.retry);
      return this.#onFailure(error);
    }).catch(() => undefined).finally(() => this.#running.delete(running));
    this.#running.add(running);
    this.#hold(paths, running);
  }

  /** How many reported commits wait for their record to be written (see `RetryLater`). */
  get retrying(): number {
    return this.#retries.size;
  }

  /**
   * Resolves once every commit reported so far is durable and recorded, or has failed to become
   * so (reported through `onFailure`; a record that still cannot be written stays to retry).
   */
  async settled(): Promise<void> {
    await Promise.all([...this.#running]);
    await this.#retryPending();
  }

  /** Resolves once nothing is left to settle, later commits included; a record that still cannot be written is left to the next open. */
  async drain(): Promise<void> {
    while (this.#running.size > 0) await Promise.all([...this.#running]);
    await this.#retryPending();
  }

  /** A retry already running (from a concurrent pass) is awaited, not started twice; one that fails stays for the next pass. */
  async #retryPending(): Promise<void> {
    if (this.#retries.size === 0) return; // every settle comes here: nothing to build in the usual case
    await Promise.all([...this.#retries].map((retry) => {
      let running = this.#retriesRunning.get(retry);
      if (running === undefined) {
        running = retry().then(() => void this.#retries.delete(retry), () => undefined).finally(() => this.#retriesRunning.delete(retry));
        this.#retriesRunning.set(retry, running);
      }
      return running;
    }));
  }
}

/** Thrown by a settle that can be finished later (`retry`), its commit standing meanwhile. */
export class RetryLater extends Error {
  override name = 'RetryLater';

  constructor(message: string, readonly retry: () => Promise<void>) {
    super(message);
  }
}
