/**
 * Splits an input byte stream into `Content-Length` frame bodies, strictly and within bounds.
 * A header that cannot be read leaves no way to find where the next frame starts, so it is
 * fatal (`BrokenStreamError`); a body that is not JSON is not (the framing still holds).
 */

/**
 * The bounds on one frame. A header is a line or two (`Content-Length`, maybe `Content-Type`):
 * 8 KiB is generous. A body carries one request: a patch may be 16 Mi characters
 * (`LIMITS.maxPatchChars`), up to 48 MiB as UTF-8, so 64 MiB leaves room for its JSON.
 */
export const FRAME_LIMITS = {
  maxHeaderBytes: 8 * 1024,
  maxBodyBytes: 64 * 1024 * 1024,
} as const;

/** The input cannot be split into frames any more: where the next frame starts is unknown. */
export class BrokenStreamError extends Error {
  override readonly name = 'BrokenStreamError';
}

const TERMINATOR = Buffer.from('\r\n\r\n', 'ascii');
const HEADER_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*([\x20-\x7e]*?)[ \t]*$/;
const DECIMAL = /^\d{1,16}$/;

export class FrameSplitter {
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** The body length of the frame being read, once its header is read. */
  #bodyLength: number | undefined;

  append(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
  }

  /** The next complete body, or undefined until more bytes arrive. Throws `BrokenStreamError`. */
  next(): Buffer | undefined {
    if (this.#bodyLength === undefined) {
      const header = this.#takeHeader();
      if (header === undefined) return undefined;
      this.#bodyLength = contentLength(header);
    }
    if (this.#buffered < this.#bodyLength) return undefined;
    const body = this.#take(this.#bodyLength);
    this.#bodyLength = undefined;
    return body;
  }

  /** Bytes appended and not yet taken as frames. */
  get bufferedBytes(): number {
    return this.#buffered;
  }

  /** Whether a frame has begun and not ended (input ending now would cut it). */
  get midFrame(): boolean {
    return this.#buffered > 0 || this.#bodyLength !== undefined;
  }

  #takeHeader(): string | undefined {
    const window = this.#peek(Math.min(this.#buffered, FRAME_LIMITS.maxHeaderBytes + TERMINATOR.length));
    const end = window.indexOf(TERMINATOR);
    if (end >= 0) {
      this.#take(end + TERMINATOR.length);
      return window.subarray(0, end).toString('latin1');
    }
    if (window.length > FRAME_LIMITS.maxHeaderBytes) {
      throw new BrokenStreamError(`a frame header is longer than ${FRAME_LIMITS.maxHeaderBytes} bytes`);
    }
    return undefined;
  }

  #peek(bytes: number): Buffer {
    if (this.#chunks.length > 1 && this.#chunks[0]!.length < bytes) this.#chunks = [Buffer.concat(this.#chunks)];
    return (this.#chunks[0] ?? Buffer.alloc(0)).subarray(0, bytes);
  }

  #take(bytes: number): Buffer {
    const whole = this.#peek(bytes);
    const first = this.#chunks[0];
    if (first !== undefined) {
      if (first.length === bytes) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(bytes);
    }
    this.#buffered -= bytes;
    return whole;
  }
}

/** The body length a header block declares; throws `BrokenStreamError` for anything unreadable. */
function contentLength(header: string): number {
  let length: number | undefined;
  for (const line of header.split('\r\n')) {
    const [, name, value] = HEADER_LINE.exec(line) ?? [];
    if (name === undefined || value === undefined) throw new BrokenStreamError(`a frame header line is not "Name: value": ${quote(line)}`);
    if (name.toLowerCase() !== 'content-length') continue;
    if (length !== undefined) throw new BrokenStreamError('a frame header has two Content-Length lines');
    if (!DECIMAL.test(value)) throw new BrokenStreamError(`a frame's Content-Length is not a whole number of bytes: ${quote(value)}`);
    length = Number(value);
  }
  if (length === undefined) throw new BrokenStreamError(`a frame header has no Content-Length: ${quote(header)}`);
  if (length > FRAME_LIMITS.maxBodyBytes) {
    throw new BrokenStreamError(`a frame's Content-Length ${length} exceeds the limit of ${FRAME_LIMITS.maxBodyBytes} bytes`);
  }
  return length;
}

function quote(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}
