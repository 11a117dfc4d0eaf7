/**
 * Reads JSON-RPC messages from a byte stream for vscode-jsonrpc, in place of its
 * `StreamMessageReader`, which on an unreadable header drops the header and carries on inside
 * the body, takes a negative Content-Length as a length, and buffers an endless header or a
 * giant body without bound: the daemon then never answers again. Here a stream that cannot be
 * split into frames stops: the reader fires a `BrokenStreamError`, then closes, and reads no more.
 * `pause` stops delivering frames, `resume` goes on where it was. While paused, the stream is
 * still read up to `READ_AHEAD_BYTES` ahead, and no further: so that its end is seen (`onInputEnd`).
 */
import { AbstractMessageReader, Disposable, Emitter, type DataCallback, type Event, type Message } from 'vscode-jsonrpc';
import { BrokenStreamError, FrameSplitter } from './frameSplitter.ts';

/**
 * How far a paused reader reads ahead. A client whose input is paused (it leaves too much output
 * unread, see `outputThrottle.ts`) and which then closes it must be seen to have closed it: a
 * paused stream is not read, and its end would only be seen once the client read again, never if
 * it does not (see `outputGrace.ts`). 1 MiB: hundreds of ordinary requests, small beside the
 * output a paused connection holds.
 */
export const READ_AHEAD_BYTES = 1024 * 1024;

/** A frame whose body is not JSON: it gets -32700 and the stream goes on. */
export class UnreadableBodyError extends Error {
  override readonly name = 'UnreadableBodyError';
}

export class FramedStreamReader extends AbstractMessageReader {
  readonly #input: NodeJS.ReadableStream;
  readonly #splitter = new FrameSplitter();
  #closed = false;
  #paused = false;
  /** The input ended while paused: frames still buffered are delivered on resume, then it closes. */
  #endWhenResumed = false;
  #inputEnded = false;
  readonly #inputEnd = new Emitter<void>();
  #callback: DataCallback | undefined;
  #stopListening: () => void = () => {};

  constructor(input: NodeJS.ReadableStream) {
    super();
    this.#input = input;
  }

  listen(callback: DataCallback): Disposable {
    this.#callback = callback;
    const onData = (chunk: Buffer | string) => this.#read(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk, callback);
    const onEnd = () => this.#end();
    const onError = (error: Error) => this.fireError(error);
    this.#input.on('data', onData).on('end', onEnd).on('close', onEnd).on('error', onError);
    this.#stopListening = () => {
      this.#input.off('data', onData).off('end', onEnd).off('close', onEnd);
    };
    // The error listener stays until disposal: an unheard stream error would crash the daemon.
    return Disposable.create(() => {
      this.#stopListening();
      this.#input.off('error', onError);
    });
  }

  /**
   * Fires once no more input will be read: the stream ended (while paused, before the frames
   * read ahead are delivered: the reader closes after them) or broke.
   */
  get onInputEnd(): Event<void> {
    return this.#inputEnd.event;
  }

  /** Bytes read and not yet delivered as frames. */
  get bufferedBytes(): number {
    return this.#splitter.bufferedBytes;
  }

  /** Stops delivering frames until `resume`; the stream is read no more than `READ_AHEAD_BYTES` ahead. */
  pause(): void {
    if (this.#closed || this.#paused) return;
    this.#paused = true;
    this.#holdIfReadAhead();
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    if (this.#closed) return;
    if (this.#callback !== undefined) this.#deliverBuffered(this.#callback);
    if (this.#paused) return;
    if (this.#endWhenResumed) this.#end();
    else this.#input.resume();
  }

  #read(chunk: Buffer, callback: DataCallback): void {
    if (this.#closed) return;
    this.#splitter.append(chunk);
    if (this.#paused) this.#holdIfReadAhead();
    else this.#deliverBuffered(callback);
  }

  #holdIfReadAhead(): void {
    if (this.#splitter.bufferedBytes >= READ_AHEAD_BYTES) this.#input.pause();
  }

  #deliverBuffered(callback: DataCallback): void {
    try {
      while (!this.#paused && !this.#closed) {
        const body = this.#splitter.next();
        if (body === undefined) return;
        this.#deliver(body, callback);
      }
    } catch (error) {
      if (!(error instanceof BrokenStreamError)) throw error;
      this.#break(error);
    }
  }

  #deliver(body: Buffer, callback: DataCallback): void {
    let message: Message;
    try {
      message = JSON.parse(body.toString('utf8')) as Message;
    } catch (error) {
      this.fireError(new UnreadableBodyError(`Parse error: ${(error as Error).message}`));
      return;
    }
    callback(message);
  }

  #end(): void {
    if (this.#closed) return;
    this.#noMoreInput();
    if (this.#paused) {
      this.#endWhenResumed = true;
      return;
    }
    if (this.#splitter.midFrame) this.#break(new BrokenStreamError('the input ended inside a frame'));
    else this.#close();
  }

  #break(error: BrokenStreamError): void {
    if (this.#closed) return;
    this.#input.pause();
    this.fireError(error);
    this.#close();
  }

  #close(): void {
    this.#closed = true;
    this.#stopListening();
    this.#noMoreInput();
    this.fireClose();
  }

  #noMoreInput(): void {
    if (this.#inputEnded) return;
    this.#inputEnded = true;
    this.#inputEnd.fire();
  }
}
