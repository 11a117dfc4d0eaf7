/**
 * vscode-jsonrpc's message writer for the daemon's output, writing each frame (header and JSON
 * body) in one call. Its stock `StreamMessageWriter` writes the header and the body separately,
 * each awaited: on a pipe (stdout is written synchronously on Linux) that is two system calls
 * and two wake-ups of the client per message. Frames stay whole and in order: each is one
 * write on one stream. Each frame's bytes are metered from its write until the stream is done
 * with them (see `outputThrottle.ts`): nothing here waits for that, but the connection reads and
 * starts nothing new while too many are unsent. Note that stdout, too, buffers in the process
 * (not blocking) once its pipe is full.
 */
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-jsonrpc/node';

/** Told of the bytes handed to the output and of those it is done with. */
export interface OutputMeter {
  queued(bytes: number): void;
  flushed(bytes: number): void;
}

/** Frames handed to the output that the client has not taken. */
export interface UnsentOutput {
  readonly unsentFrames: number;
  readonly unsentBytes: number;
}

interface PendingFrame {
  readonly bytes: number;
  /** Settles the frame's write as done with, unsent. */
  readonly drop: () => void;
}

export class FrameWriter extends AbstractMessageWriter implements MessageWriter {
  readonly #output: NodeJS.WritableStream;
  readonly #meters: readonly OutputMeter[];
  /** Frames handed to the output whose write has not completed, oldest first. */
  readonly #pending = new Set<PendingFrame>();
  #dropping = false;
  #errors = 0;

  constructor(output: NodeJS.WritableStream, meters: readonly OutputMeter[] = []) {
    super();
    this.#output = output;
    this.#meters = meters;
    output.on('error', (error: Error) => this.fireError(error));
    output.on('close', () => this.fireClose());
  }

  get unsent(): UnsentOutput {
    let unsentBytes = 0;
    for (const frame of this.#pending) unsentBytes += frame.bytes;
    return { unsentFrames: this.#pending.size, unsentBytes };
  }

  /** Resolves once the output is done with the frame (or it was dropped, see `drop`). */
  write(message: Message): Promise<void> {
    if (this.#dropping) return Promise.resolve();
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    const header = `Content-Length: ${body.byteLength}\r\n\r\n`;
    const frame = Buffer.allocUnsafe(header.length + body.byteLength);
    frame.write(header, 0, 'ascii');
    body.copy(frame, header.length);
    for (const meter of this.#meters) meter.queued(frame.length);
    return new Promise((resolve, reject) => {
      const pending: PendingFrame = { bytes: frame.length, drop: resolve };
      this.#pending.add(pending);
      this.#output.write(frame, (error) => {
        if (!this.#settle(pending)) return;
        if (error === undefined || error === null) return resolve();
        this.#errors += 1;
        this.fireError(error, message, this.#errors);
        reject(error);
      });
    });
  }

  /**
   * Gives up on the client taking the output: every frame not yet taken counts as done with
   * (its write resolves; the stream may still hold its bytes), and later frames are not written
   * at all. So nothing waits on a client that stopped reading. Returns what was left unsent.
   */
  drop(): UnsentOutput {
    this.#dropping = true;
    const unsent = this.unsent;
    for (const pending of [...this.#pending]) {
      this.#settle(pending);
      pending.drop();
    }
    return unsent;
  }

  end(): void {
    this.#output.end();
  }

  /** The output is done with the frame, or it was dropped: false if it already was. */
  #settle(pending: PendingFrame): boolean {
    if (!this.#pending.delete(pending)) return false;
    for (const meter of this.#meters) meter.flushed(pending.bytes);
    return true;
  }
}
