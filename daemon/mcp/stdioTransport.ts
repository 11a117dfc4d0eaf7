/**
 * MCP over stdio: one JSON-RPC message per line. The SDK's `StdioServerTransport` is not used
 * because of how it meets a large request: it joins every chunk read so far to each new one
 * (seconds of copying for a patch of tens of megabytes), and a line over its buffer size (10 MiB
 * by default) closes the transport — the server then ended at once, exit 0, the request
 * unanswered. patchd accepts patches of 16 Mi characters, up to several bytes each once JSON
 * escapes them (the daemon's own frames take up to `FRAME_LIMITS.maxBodyBytes`, and so does a line
 * here). Here chunks are kept as read and joined once per line; a line over
 * `maxLineBytes` is skipped to its end and answered with an error (when its id can be found),
 * and the server goes on serving.
 *
 * A host that writes requests and does not read the answers costs a bounded amount of memory, as
 * a client of the daemon does (the same `OutputThrottle`, see `outputThrottle.ts`): the answers
 * written and not yet taken are metered, and while they are over `maxUnsentBytes`, or
 * `maxRunningRequests` requests are unanswered, no line is read (the input is paused where it
 * is) until the host takes half of them, or a request is answered. A request counts as answered
 * once its answer is handed to the output, not once the host takes it: a host that writes a
 * batch before it reads anything is held only when the answers waiting for it are over the bound.
 * A request the host cancels (`notifications/cancelled`) is owed no answer (the SDK sends none).
 * What is still owed is known here only: `allAnswered` is what a server stopping waits for.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, JSONRPCMessageSchema, type JSONRPCMessage, type JSONRPCRequest, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { errorReply, replyIdOf } from '../server/errorReply.ts';
import { FRAME_LIMITS } from '../server/frameSplitter.ts';
import { OUTPUT_LIMITS, OutputThrottle, type OutputLimits, type Release } from '../server/outputThrottle.ts';
import { UnansweredRequests } from '../server/unansweredRequests.ts';

/** How much of a skipped line's start and end is kept to find its id. */
const KEPT_EDGE_BYTES = 512;

const NEWLINE = 0x0a;

export interface StdioTransportOptions {
  readonly maxLineBytes?: number;
  /** Bounds on what a host that stops reading may cost (tests set small ones); default `OUTPUT_LIMITS`. */
  readonly outputLimits?: OutputLimits;
}

/** What `onbacklog` is told. */
export interface Backlog {
  /** Answers handed to the output and not yet taken by the host, in bytes. */
  readonly unsentBytes: number;
  /** Requests handed on to the server so far. */
  readonly requestsHandedOn: number;
}

export class StdioTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  /** Told each time the output backlog goes over its limit (reading pauses) and is taken back to half of it (reading resumes). */
  onbacklog?: ((over: boolean, backlog: Backlog) => void) | undefined;
  /** Resolves once the input ended and every line read from it was handed on. */
  readonly inputEnded: Promise<void>;

  readonly #input: Readable;
  readonly #output: Writable;
  readonly #maxLineBytes: number;
  readonly #throttle: OutputThrottle;
  /** Input read but not yet split into lines: kept while reading is held. */
  #unread: Buffer[] = [];
  /** A request read while it could not start: handed on, and reading goes on, once it can. */
  #held: JSONRPCRequest | undefined;
  /** Requests handed on and still owed an answer, each holding its place (a host may reuse an id). */
  readonly #unanswered = new UnansweredRequests<RequestId, Release>();
  #requestsHandedOn = 0;
  #inputPaused = false;
  #inputDone = false;
  readonly #endInput: () => void;
  /** Aborts on close: a request waiting for a place waits no more. */
  readonly #closing = new AbortController();
  /** The current line's chunks, while it is within the limit. */
  #chunks: Buffer[] = [];
  #lineBytes = 0;
  /** Set while skipping a line over the limit: its first and last bytes, to find its id. */
  #skipped: { head: Buffer; tail: Buffer } | undefined;
  #started = false;
  #closed = false;
  /** Settles when the output drains (or closes): one promise for every send waiting on it. */
  #drained: Promise<void> | undefined;

  constructor(input: Readable, output: Writable, options: StdioTransportOptions = {}) {
    this.#input = input;
    this.#output = output;
    this.#maxLineBytes = options.maxLineBytes ?? FRAME_LIMITS.maxBodyBytes;
    this.#throttle = new OutputThrottle(options.outputLimits ?? OUTPUT_LIMITS);
    let endInput!: () => void;
    this.inputEnded = new Promise((resolve) => (endInput = resolve));
    this.#endInput = endInput;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('StdioTransport already started');
    this.#started = true;
    this.#throttle.onChange(this.#onBacklog);
    this.#input.on('data', this.#onData).on('end', this.#onInputEnd).on('close', this.#onInputEnd);
    this.#input.on('error', this.#onInputError);
    // The host went away (EPIPE): told, and the transport closes; never an uncaught error (kept after close: a write may still fail).
    this.#output.on('error', this.#onOutputError);
  }

  /** Resolves once the line is handed over (or the output drained, or closed); rejects once the transport is closed. */
  send(message: JSONRPCMessage): Promise<void> {
    const sent = this.#write(message);
    if (isResponse(message)) this.#settle(message.id);
    return sent;
  }

  /** Resolves once every request handed on so far has been answered, or cancelled by the host. */
  allAnswered(): Promise<void> {
    return this.#unanswered.allAnswered();
  }

  #write(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('The MCP stdio transport is closed.'));
    const line = `${JSON.stringify(message)}\n`;
    const bytes = Buffer.byteLength(line);
    this.#throttle.queued(bytes);
    if (this.#output.write(line, () => this.#throttle.flushed(bytes))) return Promise.resolve();
    return (this.#drained ??= new Promise<void>((resolve) => {
      const done = (): void => {
        this.#output.off('drain', done).off('close', done);
        this.#drained = undefined;
        resolve();
      };
      this.#output.on('drain', done).on('close', done);
    }));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#closing.abort();
    this.#input.off('data', this.#onData).off('end', this.#onInputEnd).off('close', this.#onInputEnd);
    this.#input.off('error', this.#onInputError);
    if (this.#input.listenerCount('data') === 0) this.#input.pause();
    this.#chunks = [];
    this.#unread = [];
    this.#held = undefined;
    this.#skipped = undefined;
    this.onclose?.();
  }

  readonly #onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onOutputError = (error: Error): void => {
    this.onerror?.(error);
    void this.close();
  };

  readonly #onData = (chunk: Buffer | string): void => {
    this.#unread.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    this.#readOn();
  };

  readonly #onInputEnd = (): void => {
    this.#inputDone = true;
    if (this.#unread.length === 0 && this.#held === undefined) this.#endInput();
  };

  readonly #onBacklog = (over: boolean): void => {
    this.onbacklog?.(over, { unsentBytes: this.#throttle.unsentBytes, requestsHandedOn: this.#requestsHandedOn });
    if (over) this.#pauseInput();
    else this.#readOn();
  };

  /** Splits what was read into lines and hands them on while requests may start; stops the input where it stands when they may not. */
  #readOn(): void {
    while (this.#unread.length > 0) {
      if (this.#closed || this.#held !== undefined || this.#throttle.over) return this.#pauseInput();
      const chunk = this.#unread[0]!;
      const end = chunk.indexOf(NEWLINE);
      if (end === -1) {
        this.#unread.shift();
        this.#append(chunk);
        continue;
      }
      if (end + 1 === chunk.length) this.#unread.shift();
      else this.#unread[0] = chunk.subarray(end + 1);
      this.#append(chunk.subarray(0, end));
      this.#endLine();
    }
    if (this.#closed || this.#held !== undefined) return this.#pauseInput();
    if (this.#inputDone) return this.#endInput();
    if (this.#inputPaused) {
      this.#inputPaused = false;
      this.#input.resume();
    }
  }

  #pauseInput(): void {
    if (this.#inputPaused || this.#closed) return;
    this.#inputPaused = true;
    this.#input.pause();
  }

  #handOn(message: JSONRPCMessage): void {
    if (isRequest(message)) {
      const place = this.#throttle.tryAcquire();
      if (place === undefined) return this.#hold(message);
      this.#takePlace(message.id, place);
    } else if (isCancellation(message)) {
      // The SDK sends no answer to a cancelled request: it is owed none, and its place is given back here.
      this.#settle(message.params.requestId);
    }
    this.onmessage?.(message);
  }

  #hold(request: JSONRPCRequest): void {
    this.#held = request;
    this.#pauseInput();
    void this.#throttle.acquire(this.#closing.signal).then((place) => {
      if (this.#closed) return place();
      this.#held = undefined;
      this.#takePlace(request.id, place);
      this.onmessage?.(request);
      this.#readOn();
    });
  }

  #takePlace(id: RequestId, place: Release): void {
    this.#requestsHandedOn += 1;
    this.#unanswered.add(id, place);
  }

  /** A request `id` was answered or cancelled: owed no more, its place given back. */
  #settle(id: RequestId): void {
    this.#unanswered.answered(id)?.();
  }

  #append(piece: Buffer): void {
    if (piece.length === 0) return;
    this.#lineBytes += piece.length;
    if (this.#skipped !== undefined) {
      this.#skipped.tail = lastBytes(Buffer.concat([this.#skipped.tail, piece]), KEPT_EDGE_BYTES);
      return;
    }
    if (this.#lineBytes <= this.#maxLineBytes) {
      this.#chunks.push(piece);
      return;
    }
    const sofar = Buffer.concat([...this.#chunks, piece]);
    this.#skipped = { head: Buffer.from(sofar.subarray(0, KEPT_EDGE_BYTES)), tail: lastBytes(sofar, KEPT_EDGE_BYTES) };
    this.#chunks = [];
  }

  #endLine(): void {
    const skipped = this.#skipped;
    const lineBytes = this.#lineBytes;
    const line = skipped === undefined ? Buffer.concat(this.#chunks) : undefined;
    this.#chunks = [];
    this.#lineBytes = 0;
    this.#skipped = undefined;
    if (skipped !== undefined) return this.#refuseOversized(skipped, lineBytes);
    const text = line!.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.onerror?.(new Error('A line of input is not JSON; it was ignored.'));
      return this.#reply(null, ErrorCode.ParseError, 'Parse error: the line is not JSON.');
    }
    const message = JSONRPCMessageSchema.safeParse(value);
    if (message.success) return this.#handOn(message.data);
    this.onerror?.(new Error('A line of input is not a JSON-RPC message; it was ignored.'));
    this.#reply(replyIdOf(value), ErrorCode.InvalidRequest, 'Invalid request: not a JSON-RPC 2.0 message.');
  }

  #refuseOversized(skipped: { head: Buffer; tail: Buffer }, lineBytes: number): void {
    const id = requestIdOf(skipped.head.toString('utf8'), skipped.tail.toString('utf8'));
    const size = sizeText(lineBytes);
    const limit = sizeText(this.#maxLineBytes);
    this.onerror?.(new Error(`A message of ${size} is over the ${limit} this server reads; it was skipped${id === undefined ? ' (no id found to answer)' : ''}.`));
    const message = `limit_exceeded: the request is ${size}, over the ${limit} this server reads in one message (patches may be up to 16 Mi characters); nothing was done. Send smaller patches.`;
    if (id !== undefined) this.#reply(id, ErrorCode.InvalidRequest, message);
  }

  #reply(id: RequestId | null, code: number, message: string): void {
    // JSON-RPC answers a request whose id cannot be read with id null; the SDK's message type has no room for that.
    // Written, not sent: it answers no request that was handed on, so it gives back no place.
    void this.#write(errorReply(id, code, message) as unknown as JSONRPCMessage);
  }
}

function isRequest(message: JSONRPCMessage): message is JSONRPCRequest {
  return 'method' in message && 'id' in message;
}

function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } {
  return !('method' in message) && 'id' in message && (typeof message.id === 'string' || typeof message.id === 'number');
}

function isCancellation(message: JSONRPCMessage): message is JSONRPCMessage & { params: { requestId: RequestId } } {
  if (!('method' in message) || 'id' in message || message.method !== 'notifications/cancelled') return false;
  const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
  return typeof requestId === 'string' || typeof requestId === 'number';
}

function sizeText(bytes: number): string {
  return bytes < 1024 * 1024 ? `${bytes} bytes` : `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

function lastBytes(bytes: Buffer, count: number): Buffer {
  return Buffer.from(bytes.subarray(Math.max(0, bytes.length - count)));
}

const ID_VALUE = String.raw`(-?\d+|"(?:[^"\\]|\\.){0,200}")`;
/** The SDK's clients write the id last (`{…, "jsonrpc": "2.0", "id": 7}`); other clients often first. */
const ID_AT_END = new RegExp(String.raw`"id"\s*:\s*${ID_VALUE}\s*\}\s*$`);
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID_VALUE}`);

/** The id of a request too large to parse, from its first and last bytes; undefined for a notification, or when it cannot be told. */
export function requestIdOf(head: string, tail: string): RequestId | undefined {
  const found = ID_AT_END.exec(tail) ?? ID_AT_START.exec(head);
  if (found === null) return undefined;
  try {
    const id: unknown = JSON.parse(found[1]!);
    return typeof id === 'number' || typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}
