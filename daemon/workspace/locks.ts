/**
 * Per-path locks of one workspace. A request names all of its paths at once and joins the
 * queue of each of them in one synchronous step (in sorted order, the one global order), so:
 * - requests on disjoint paths never wait for each other;
 * - requests sharing a path are granted in the order they asked (FIFO per path);
 * - there is no deadlock: a request only ever waits for requests that asked before it, and a
 *   granted request holds every path it needs, so it never waits again.
 * A waiter whose signal aborts leaves every queue at once; a lease is released exactly once.
 *
 * A request names paths as it spells them; each is locked under its key (`keyOf`: in a
 * workspace, a look at the disk that gives every spelling of one file the same key). The table
 * remembers which key each queued request locked a spelling under, so that work done for that
 * request (`holdUntil`) or waiting behind it (`acquireBehind`) need not look again.
 */

/** The waiter's signal aborted before every path was granted. */
export class LockAbortedError extends Error {
  override readonly name = 'LockAbortedError';
}

/** Every path of one request, held until `release` (or disposal). */
export interface LockLease extends Disposable {
  /** The keys the paths are locked under, sorted. */
  readonly paths: readonly string[];
  /** Lets the next waiters in; later calls do nothing. */
  release(): void;
}

interface Waiter {
  readonly keys: readonly string[];
  /** Each path as the request spelled it, and the key it is locked under. */
  readonly spellings: ReadonlyMap<string, string>;
  granted: boolean;
  readonly grant: () => void;
  /** Work that keeps the paths held past the lease's release (see `holdUntil`). */
  readonly holds: Promise<unknown>[];
}

export class LockTable {
  readonly #queues = new Map<string, Waiter[]>();
  /** Spelling → the queued requests that named it, in the order they asked. */
  readonly #spelled = new Map<string, Waiter[]>();
  readonly #keyOf: (path: string) => string;

  /** `keyOf` names the lock of a path; by default the path itself. */
  constructor(keyOf: (path: string) => string = (path) => path) {
    this.#keyOf = keyOf;
  }

  /** Resolves once every path is held; rejects with `LockAbortedError` if `signal` aborts first. */
  acquire(paths: Iterable<string>, signal?: AbortSignal): Promise<LockLease> {
    return this.#enqueue(paths, signal, this.#keyOf);
  }

  /**
   * As `acquire`, but a path some queued request spelled the same way takes the key that request
   * locked it under, without working it out again: for a request that only has to come after the
   * ones already made for the path (the key can differ only if a directory on the path was
   * replaced by a link, or back, since they asked).
   */
  acquireBehind(paths: Iterable<string>, signal?: AbortSignal): Promise<LockLease> {
    return this.#enqueue(paths, signal, (path) => this.#spelled.get(path)?.at(-1)?.spellings.get(path) ?? this.#keyOf(path));
  }

  /**
   * Keeps `paths` held until `until` settles, even once their lease is released: the holder of
   * all of them keeps them (so whoever waits next still gets them next); when no one holds them
   * all, they are asked for as a new request. The holder is found by the paths as it spelled
   * them, with no key worked out; only for other spellings are the keys looked for.
   */
  holdUntil(paths: Iterable<string>, until: Promise<unknown>): void {
    const spellings = [...new Set(paths)];
    const first = spellings[0];
    const holder = first === undefined ? undefined : this.#spelled.get(first)?.find((waiter) => waiter.granted && spellings.every((path) => waiter.spellings.has(path)));
    if (holder !== undefined) {
      holder.holds.push(until);
      return;
    }
    const keyed = new Map(spellings.map((path) => [path, this.#keyOf(path)]));
    const keys = [...new Set(keyed.values())];
    const keyHolder = keys.length === 0 ? undefined : this.#queues.get(keys[0]!)?.[0];
    if (keyHolder?.granted === true && keys.every((key) => keyHolder.keys.includes(key))) {
      keyHolder.holds.push(until);
      return;
    }
    void this.#enqueue(spellings, undefined, (path) => keyed.get(path)!).then((lease) => until.then(lease.release, lease.release));
  }

  /** How many requests hold or wait for the lock named `key`. */
  queued(key: string): number {
    return this.#queues.get(key)?.length ?? 0;
  }

  /** How many keys are held or waited for. */
  get size(): number {
    return this.#queues.size;
  }

  #enqueue(paths: Iterable<string>, signal: AbortSignal | undefined, keyOf: (path: string) => string): Promise<LockLease> {
    if (signal?.aborted === true) return Promise.reject(new LockAbortedError('Aborted before the locks were requested.'));
    const spellings = new Map<string, string>();
    for (const path of paths) if (!spellings.has(path)) spellings.set(path, keyOf(path));
    const keys = [...new Set(spellings.values())].sort();
    return new Promise<LockLease>((resolve, reject) => {
      const onAbort = (): void => {
        this.#leave(waiter);
        reject(new LockAbortedError('Aborted while waiting for the file locks.'));
      };
      const waiter: Waiter = {
        keys,
        spellings,
        granted: false,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.#leaseFor(waiter));
        },
        holds: [],
      };
      for (const key of keys) queueIn(this.#queues, key).push(waiter);
      for (const path of spellings.keys()) queueIn(this.#spelled, path).push(waiter);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#grantIfFirst(waiter);
    });
  }

  #grantIfFirst(waiter: Waiter): void {
    if (waiter.granted || !waiter.keys.every((key) => this.#queues.get(key)?.[0] === waiter)) return;
    waiter.granted = true;
    waiter.grant();
  }

  /** Removes the waiter (holder or not) from its queues, then grants whoever is now first everywhere. */
  #leave(waiter: Waiter): void {
    for (const key of waiter.keys) leaveQueue(this.#queues, key, waiter);
    for (const path of waiter.spellings.keys()) leaveQueue(this.#spelled, path, waiter);
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

function queueIn(queues: Map<string, Waiter[]>, name: string): Waiter[] {
  let queue = queues.get(name);
  if (queue === undefined) queues.set(name, (queue = []));
  return queue;
}

function leaveQueue(queues: Map<string, Waiter[]>, name: string, waiter: Waiter): void {
  const queue = queues.get(name) ?? [];
  const at = queue.indexOf(waiter);
  if (at >= 0) queue.splice(at, 1);
  if (queue.length === 0) queues.delete(name);
}
