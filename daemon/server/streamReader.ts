/**
 * Reads JSON-RPC messages from a byte stream for vscode-jsonrpc, in place of its
 * `StreamMessageReader`, which on an unreadable header drops the header and carries on inside
 * the body, takes a negative Content-Length as a length, and buffers an endless header or a
 * giant body without bound: the daemon then never answers again. Here a stream that cannot be
 * split into frames stops: the reader fires a `BrokenStreamError`, then closes, and reads no more.
 * `pause` stops reading (the stream, and frames already split), `resume` goes on where it was.
 */
import { AbstractMessageReader, Disposable, type DataCallback, type Message } from 'vscode-jsonrpc';
import { BrokenStreamError, FrameSplitter } from './frameSplitter.ts';

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

  /** Stops reading: no frame is delivered, and no byte read, until `resume`. */
  pause(): void {
    if (this.#closed || this.#paused) return;
    this.#paused = true;
    this.#input.pause();
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
    this.#deliverBuffered(callback);
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
    this.fireClose();
  }
}
