/** Splits a byte stream into `Content-Length` frames, strictly: anything else is recorded as a violation. */

export interface JsonRpcFrame {
  readonly jsonrpc?: string;
  readonly id?: string | number | null;
  readonly method?: string;
  readonly params?: unknown;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: { readonly code?: string } };
}

const HEADER = /^Content-Length: (\d+)(\r\nContent-Type: [^\r\n]+)?$/i;

export class FrameReader {
  /** Descriptions of bytes that were not a well-formed frame. */
  readonly violations: string[] = [];
  #buffer = Buffer.alloc(0);

  /** Adds bytes; returns the frames they completed. */
  push(chunk: Buffer): JsonRpcFrame[] {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    const frames: JsonRpcFrame[] = [];
    for (let frame = this.#next(); frame !== undefined; frame = this.#next()) {
      if (frame !== null) frames.push(frame);
    }
    return frames;
  }

  /** Bytes that never formed a complete frame. */
  get leftover(): number {
    return this.#buffer.length;
  }

  /** The next frame, null for a skipped malformed one, undefined when more bytes are needed. */
  #next(): JsonRpcFrame | null | undefined {
    const end = this.#buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const header = this.#buffer.subarray(0, end).toString('ascii');
    const length = HEADER.exec(header)?.[1];
    if (length === undefined) {
      this.violations.push(`bad header ${JSON.stringify(header)}`);
      this.#buffer = this.#buffer.subarray(end + 4);
      return null;
    }
    const bodyEnd = end + 4 + Number(length);
    if (this.#buffer.length < bodyEnd) return undefined;
    const body = this.#buffer.subarray(end + 4, bodyEnd).toString('utf8');
    this.#buffer = this.#buffer.subarray(bodyEnd);
    return this.#parse(body);
  }

  #parse(body: string): JsonRpcFrame | null {
    try {
      return JSON.parse(body) as JsonRpcFrame;
    } catch {
      this.violations.push(`body is not JSON: ${JSON.stringify(body.slice(0, 200))}`);
      return null;
    }
  }
}
