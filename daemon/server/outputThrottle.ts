/**
 * Backpressure, per connection. A client that sends requests and stops reading the answers
 * (a stuck or hostile client, a paused socket) must cost the daemon a bounded amount of memory:
 * twenty small `file/read` requests of a 4 MiB file are 80 MiB of answers. So the output a
 * connection has written but the client has not taken yet is metered; while it is over the
 * limit the connection takes no more requests from its input (reading at most
 * `READ_AHEAD_BYTES` ahead, see `streamReader.ts`) and starts none, and it goes on once the
 * client has taken half of it. Requests already running finish (their answers wait with the
 * rest), and at most `maxRunningRequests` run at once, so a burst of requests read before any
 * answer was written cannot all start either. A client that reads as it goes never meets
 * either bound: its output is taken as fast as it is written.
 */

export interface OutputLimits {
  /**
   * Output written but not yet taken by the client, over which the connection stops reading and
   * starting requests. 16 MiB: far above what a reading client ever leaves waiting (a socket or
   * pipe buffer's worth), a few of the largest answers patchd commonly sends (a file and its
   * receipt diff), and small beside the daemon's memory.
   */
  readonly maxUnsentBytes: number;
  /**
   * Requests of one connection running at once; more wait their turn in arrival order. 64, as
   * many as the patches of one batch in flight (`MAX_BATCH_CONCURRENCY`): throughput comes from
   * the workspace's pool and the disk long before that, and a client that stops reading holds
   * at most this many answers beyond the limit above.
   */
  readonly maxRunningRequests: number;
}

export const OUTPUT_LIMITS: OutputLimits = {
  maxUnsentBytes: 16 * 1024 * 1024,
  maxRunningRequests: 64,
};

/** Gives back a running request's place. */
export type Release = () => void;

export class OutputThrottle {
  readonly #limits: OutputLimits;
  #unsent = 0;
  #over = false;
  #running = 0;
  readonly #waiting: (() => void)[] = [];
  readonly #listeners: ((over: boolean) => void)[] = [];

  constructor(limits: OutputLimits = OUTPUT_LIMITS) {
    this.#limits = limits;
  }

  /** Whether unsent output is over the limit (and not yet back to half of it). */
  get over(): boolean {
    return this.#over;
  }

  /** Output written but not yet taken by the client, in bytes. */
  get unsentBytes(): number {
    return this.#unsent;
  }

  /** Calls `listener` each time the output goes over the limit (true) and comes back (false). */
  onChange(listener: (over: boolean) => void): void {
    this.#listeners.push(listener);
  }

  /** `bytes` were handed to the output. */
  queued(bytes: number): void {
    this.#unsent += bytes;
    if (!this.#over && this.#unsent > this.#limits.maxUnsentBytes) this.#set(true);
  }

  /** `bytes` handed to the output earlier have left (or failed to). */
  flushed(bytes: number): void {
    this.#unsent -= bytes;
    if (this.#over && this.#unsent <= this.#limits.maxUnsentBytes / 2) this.#set(false);
  }

  /**
   * Resolves when a request may start — fewer than the limit running, output within its limit —
   * with the function that gives its place back. In arrival order. A request whose `signal`
   * aborts while it waits goes at once, taking no place (it is to end, not to run).
   */
  acquire(signal: AbortSignal): Promise<Release> {
    const place = this.tryAcquire();
    if (place !== undefined) return Promise.resolve(place);
    if (signal.aborted) return Promise.resolve(() => {});
    return new Promise((resolve) => {
      const onAbort = (): void => {
        const index = this.#waiting.indexOf(start);
        if (index >= 0) this.#waiting.splice(index, 1);
        resolve(() => {});
      };
      const start = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(this.#take());
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(start);
    });
  }

  /** A place at once, when a request may start now and none waits before it; else undefined (then `acquire` waits its turn). */
  tryAcquire(): Release | undefined {
    return this.#waiting.length === 0 && this.#mayStart() ? this.#take() : undefined;
  }

  #mayStart(): boolean {
    return !this.#over && this.#running < this.#limits.maxRunningRequests;
  }

  #take(): Release {
    this.#running += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#running -= 1;
      this.#startWaiting();
    };
  }

  #startWaiting(): void {
    while (this.#waiting.length > 0 && this.#mayStart()) this.#waiting.shift()!();
  }

  #set(over: boolean): void {
    this.#over = over;
    for (const listener of this.#listeners) listener(over);
    if (!over) this.#startWaiting();
  }
}
