/**
 * Per-path locks of one workspace. A request names all of its paths at once and joins the
 * queue of each of them in one synchronous step (in sorted order, the one global order), so:
 * - requests on disjoint paths never wait for each other;
 * - requests sharing a path are granted in the order they asked (FIFO per path);
 * - there is no deadlock: a request only ever waits for requests that asked before it, and a
 *   granted request holds every path it needs, so it never waits again.
 * A waiter whose signal aborts leaves every queue at once; a lease is released exactly once.
 */

/** The waiter's signal aborted before every path was granted. */
export class LockAbortedError extends Error {
  override readonly name = 'LockAbortedError';
}

/** Every path of one request, held until `release` (or disposal). */
export interface LockLease extends Disposable {
  /** The locked paths, sorted. */
  readonly paths: readonly string[];
  /** Lets the next waiters in; later calls do nothing. */
  release(): void;
}

interface Waiter {
  readonly keys: readonly string[];
  granted: boolean;
  readonly grant: () => void;
  /** Work that keeps the paths held past the lease's release (see `holdUntil`). */
  readonly holds: Promise<unknown>[];
}

export class LockTable {
  readonly #queues = new Map<string, Waiter[]>();

  /** Resolves once every path is held; rejects with `LockAbortedError` if `signal` aborts first. */
  acquire(paths: Iterable<string>, signal?: AbortSignal): Promise<LockLease> {
    if (signal?.aborted === true) return Promise.reject(new LockAbortedError('Aborted before the locks were requested.'));
    const keys = [...new Set(paths)].sort();
    return new Promise<LockLease>((resolve, reject) => {
      const onAbort = (): void => {
        this.#leave(waiter);
        reject(new LockAbortedError('Aborted while waiting for the file locks.'));
      };
      const waiter: Waiter = {
        keys,
        granted: false,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#leaseFor(waiter));
        },
        holds: [],
      };
      for (const key of keys) this.#queueOf(key).push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#grantIfFirst(waiter);
    });
  }

  /**
   * Keeps `paths` held until `until` settles, even once their lease is released: the holder of
   * all of them keeps them (so whoever waits next still gets them next); when no one holds them
   * all, they are asked for as a new request.
   */
  holdUntil(paths: Iterable<string>, until: Promise<unknown>): void {
    const keys = [...new Set(paths)];
    const holder = keys.length === 0 ? undefined : this.#queues.get(keys[0]!)?.[0];
    if (holder?.granted === true && keys.every((key) => holder.keys.includes(key))) {
      holder.holds.push(until);
      return;
    }
    void this.acquire(keys).then((lease) => until.then(lease.release, lease.release));
  }

  /** How many requests hold or wait for `path`. */
  queued(path: string): number {
    return this.#queues.get(path)?.length ?? 0;
  }

  /** How many paths are held or waited for. */
  get size(): number {
    return this.#queues.size;
  }

  #queueOf(key: string): Waiter[] {
    let queue = this.#queues.get(key);
    if (queue === undefined) this.#queues.set(key, (queue = []));
    return queue;
  }

  #grantIfFirst(waiter: Waiter): void {
    if (waiter.granted || !waiter.keys.every((key) => this.#queues.get(key)?.[0] === waiter)) return;
    waiter.granted = true;
    waiter.grant();
  }

  /** Removes the waiter (holder or not) from its queues, then grants whoever is now first everywhere. */
  #leave(waiter: Waiter): void {
    for (const key of waiter.keys) {
      const queue = this.#queues.get(key) ?? [];
      const at = queue.indexOf(waiter);
      if (at >= 0) queue.splice(at, 1);
      if (queue.length === 0) this.#queues.delete(key);
    }
    for (const key of waiter.keys) {
      const head = this.#queues.get(key)?.[0];
      if (head !== undefined) this.#grantIfFirst(head);
    }
  }

  async #leaveOnceHeld(waiter: Waiter): Promise<void> {
    while (waiter.holds.length > 0) await Promise.allSettled(waiter.holds.splice(0));
    this.#leave(waiter);
  }

  #leaseFor(waiter: Waiter): LockLease {
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      if (waiter.holds.length === 0) this.#leave(waiter);
      else void this.#leaveOnceHeld(waiter);
    };
    return { paths: waiter.keys, release, [Symbol.dispose]: release };
  }
}
