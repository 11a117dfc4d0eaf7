/**
 * A client that has closed its input (stdin, or its end of a socket) and does not read its
 * output. While its input is open, a client that stops reading may still come back for its
 * answers, and the connection waits for it as long as it takes (see `outputThrottle.ts`). Once
 * its input has ended it has nothing more to ask, and what the session still owes it is only
 * worth sending while it reads: output it leaves untaken for `graceMs` gives it up, so that the
 * session ends (and its workspaces close) instead of waiting for good on a pipe nobody drains.
 * A client that keeps taking its output, however slowly, or a request still working with
 * nothing to send yet, is never cut off: the grace counts from the last frame taken.
 */
import type { OutputMeter } from './frameWriter.ts';

/** 2.5 s, the grace `patchd mcp` gives its host after stdin closes. */
export const OUTPUT_GRACE_MS = 2_500;

export class OutputGrace implements OutputMeter {
  readonly #graceMs: number;
  readonly #onExpired: () => void;
  #unsentBytes = 0;
  #inputEnded = false;
  #over = false;
  #timer: NodeJS.Timeout | undefined;

  /** `onExpired` is called once, when output has gone untaken for `graceMs` after the input ended. */
  constructor(graceMs: number, onExpired: () => void) {
    this.#graceMs = graceMs;
    this.#onExpired = onExpired;
  }

  queued(bytes: number): void {
    this.#unsentBytes += bytes;
    if (this.#timer === undefined) this.#rearm();
  }

  flushed(bytes: number): void {
    this.#unsentBytes -= bytes;
    this.#rearm();
  }

  /** The client's input ended: from now on, its output gets the grace. */
  inputEnded(): void {
    this.#inputEnded = true;
    this.#rearm();
  }

  /** The session is over: the grace is not needed any more. */
  stop(): void {
    this.#over = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Starts the grace afresh while output is owed after the end of the input; stops it otherwise. */
  #rearm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#over || !this.#inputEnded || this.#unsentBytes === 0) return;
    this.#timer = setTimeout(() => {
      this.stop();
      this.#onExpired();
    }, this.#graceMs);
  }
}
