/**
 * Requests read and not yet answered, and a wait until none is left: what a session whose input
 * has ended still owes its client before it stops (`frameGuard.ts`, and the MCP stdio transport).
 * One id may be owed more than once: an MCP host may reuse an id while its first request runs
 * (the frame guard refuses that instead). Each request may hold something until it is answered
 * (in the MCP transport, its place among the requests running).
 */
export class UnansweredRequests<Id, Held = void> {
  /** What each request owed under an id holds, oldest first. */
  readonly #byId = new Map<Id, Held[]>();
  readonly #whenAllAnswered: (() => void)[] = [];

  has(id: Id): boolean {
    return this.#byId.has(id);
  }

  /** The ids still owed an answer, oldest first. */
  get ids(): Id[] {
    return [...this.#byId.keys()];
  }

  /** Request `id` was read; it holds `held` until it is answered. */
  add(id: Id, held: Held): void {
    const owed = this.#byId.get(id);
    if (owed === undefined) this.#byId.set(id, [held]);
    else owed.push(held);
  }

  /**
   * The answer to request `id` was written (or failed to be), or none is owed for it any more:
   * the oldest request owed under `id` is settled. Returns what it held (undefined when none was
   * owed under `id`).
   */
  answered(id: Id): Held | undefined {
    const owed = this.#byId.get(id);
    if (owed === undefined) return undefined;
    const held = owed.shift();
    if (owed.length === 0) this.#byId.delete(id);
    if (this.#byId.size === 0) for (const wake of this.#whenAllAnswered.splice(0)) wake();
    return held;
  }

  /** Resolves once every request read so far has been answered. */
  allAnswered(): Promise<void> {
    if (this.#byId.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#whenAllAnswered.push(resolve));
  }
}
