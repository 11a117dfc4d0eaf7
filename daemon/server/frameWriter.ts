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

export class FrameWriter extends AbstractMessageWriter implements MessageWriter {
  readonly #output: NodeJS.WritableStream;
  readonly #meter: OutputMeter | undefined;
  #errors = 0;

  constructor(output: NodeJS.WritableStream, meter?: OutputMeter) {
    super();
    this.#output = output;
    this.#meter = meter;
    output.on('error', (error: Error) => this.fireError(error));
    output.on('close', () => this.fireClose());
  }

  write(message: Message): Promise<void> {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    const header = `Content-Length: ${body.byteLength}\r\n\r\n`;
    const frame = Buffer.allocUnsafe(header.length + body.byteLength);
    frame.write(header, 0, 'ascii');
    body.copy(frame, header.length);
    this.#meter?.queued(frame.length);
    return new Promise((resolve, reject) => {
      this.#output.write(frame, (error) => {
        this.#meter?.flushed(frame.length);
        if (error === undefined || error === null) return resolve();
        this.#errors += 1;
        this.fireError(error, message, this.#errors);
        reject(error);
      });
    });
  }

  end(): void {
    this.#output.end();
  }
}
