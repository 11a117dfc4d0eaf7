/**
 * The ids of requests read and not yet answered, and a wait until none is left: what a session
 * whose input has ended still owes its client before it stops (`frameGuard.ts`, and the MCP
 * server's `pendingRequests.ts`).
 */
export class UnansweredRequests<Id> {
  readonly #ids = new Set<Id>();
  readonly #whenAllAnswered: (() => void)[] = [];

  has(id: Id): boolean {
    return this.#ids.has(id);
  }

  /** Request `id` was read. */
  add(id: Id): void {
    this.#ids.add(id);
  }

  /** The answer to request `id` was written (or failed to be). */
  answered(id: Id): void {
    if (!this.#ids.delete(id) || this.#ids.size > 0) return;
    for (const wake of this.#whenAllAnswered.splice(0)) wake();
  }

  /** Resolves once every request read so far has been answered. */
  allAnswered(): Promise<void> {
    if (this.#ids.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#whenAllAnswered.push(resolve));
  }
}
