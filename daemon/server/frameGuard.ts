/**
 * Answers frames vscode-jsonrpc would only log: a body that is not JSON gets -32700, JSON that
 * is not a JSON-RPC message gets -32600 (both with `id: null` unless one can be read). The
 * connection keeps reading after either: a bad body in a sound frame never ends the session
 * (a broken frame header does, see `streamReader.ts`).
 *
 * It also keeps from vscode-jsonrpc what it would choke on: a `$/` notification it reads itself
 * whose params it cannot use is dropped (a notification gets no reply) and logged; a request
 * whose id is that of a request still in flight gets -32600 at once. vscode-jsonrpc keys its
 * queue and its cancellation by `String(id)`, so such a request would silently take the place
 * of the first (which then never runs, or never answers) — and 9 and "9", two ids to JSON-RPC,
 * are one to it. An id is in flight from when its request is read until its response is
 * written (`answered`).
 */
import {
  Message, type DataCallback, type Disposable, type MessageReader, type MessageWriter, type NotificationMessage, type ResponseMessage,
} from 'vscode-jsonrpc';
import { RpcErrorCodes } from '../../protocol/index.ts';
import { quoteClipped } from './echo.ts';
import { errorReply, replyIdOf } from './errorReply.ts';
import type { Logger } from './logger.ts';
import { UnreadableBodyError } from './streamReader.ts';
import { UnansweredRequests } from './unansweredRequests.ts';

export type SendResponse = (response: ResponseMessage) => void;

export interface FrameGuardOptions {
  /** Sends the guard's own replies (they bypass the connection). */
  readonly send: SendResponse;
  readonly log: Logger;
}

export class FrameGuardReader implements MessageReader {
  readonly #inner: MessageReader;
  readonly #send: SendResponse;
  readonly #log: Logger;
  #droppedNotifications = 0;
  /** `String(id)` of every request passed on and not yet answered. */
  readonly #inFlight = new UnansweredRequests<string>();

  constructor(inner: MessageReader, { send, log }: FrameGuardOptions) {
    this.#inner = inner;
    this.#send = send;
    this.#log = log;
    inner.onError((error) => {
      if (error instanceof UnreadableBodyError) send(errorReply(null, RpcErrorCodes.ParseError, error.message));
    });
  }

  get onError() {
    return this.#inner.onError;
  }

  get onClose() {
    return this.#inner.onClose;
  }

  get onPartialMessage() {
    return this.#inner.onPartialMessage;
  }

  listen(callback: DataCallback): Disposable {
    return this.#inner.listen((message) => {
      if (!isWellFormed(message)) {
        this.#send(errorReply(replyIdOf(message), RpcErrorCodes.InvalidRequest, 'Invalid request: not a JSON-RPC 2.0 request, notification or response.'));
        return;
      }
      if (Message.isNotification(message) && !hasUsableParams(message)) return this.#drop(message);
      if (Message.isRequest(message)) {
        const key = String(message.id);
        if (this.#inFlight.has(key)) {
          this.#send(errorReply(message.id, RpcErrorCodes.InvalidRequest, `Invalid request: id ${quoteClipped(message.id)} is already in use by a request in flight.`));
          return;
        }
        this.#inFlight.add(key);
      }
      callback(message);
    });
  }

  /** The response to request `id` was written (or failed to be): the id is free again. */
  answered(id: string | number | null): void {
    if (id !== null) this.#inFlight.answered(String(id));
  }

  /** `String(id)` of every request read and not yet answered, oldest first. */
  get unanswered(): string[] {
    return this.#inFlight.ids;
  }

  /** Resolves once every request read so far has its response written. */
  allAnswered(): Promise<void> {
    return this.#inFlight.allAnswered();
  }

  dispose(): void {
    this.#inner.dispose();
  }

  /** A malformed notification is dropped; the first of a connection is logged as a warning, later ones at debug level (no flood). */
  #drop({ method }: NotificationMessage): void {
    this.#droppedNotifications += 1;
    const fields = { method, why: BUILT_IN_NOTIFICATIONS.get(method)?.needs };
    if (this.#droppedNotifications === 1) this.#log.warn('ignored a notification whose params are unusable (later ones from this client are logged at debug level)', fields);
    else this.#log.debug('ignored a notification whose params are unusable', fields);
  }
}

/**
 * The connection's writer, telling `guard` when each response has been written (or failed to
 * be), so that its id is free again. The guard's own replies bypass it: they answer a frame
 * the connection never saw.
 */
export function reportingAnswers(writer: MessageWriter, guard: FrameGuardReader): MessageWriter {
  return {
    onError: writer.onError,
    onClose: writer.onClose,
    write: (message) => {
      const written = writer.write(message);
      if (Message.isResponse(message)) {
        const answered = (): void => guard.answered(message.id);
        written.then(answered, answered);
      }
      return written;
    },
    end: () => writer.end(),
    dispose: () => writer.dispose(),
  };
}

function isWellFormed(message: Message): boolean {
  // vscode-jsonrpc reads a message of any `jsonrpc` (or none) as 2.0; JSON-RPC 2.0 asks for exactly "2.0".
  if (message.jsonrpc !== '2.0') return false;
  return Message.isRequest(message) || Message.isResponse(message) || Message.isNotification(message);
}

type JsonObject = { readonly [key: string]: unknown };

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);
/** A JSON-RPC id vscode-jsonrpc can key by (`null` it refuses with a throw). */
const isId = (value: unknown): value is string | number => typeof value === 'string' || typeof value === 'number';

/**
 * The `$/` notifications vscode-jsonrpc reads itself, ahead of any handler of ours, and what each
 * must carry (`lib/common/connection.js`). A cancel's `params.id` becomes its request-queue key
 * inside the reader's data callback: a missing or null id throws there, out of the input
 * stream's `data` event, and would kill the daemon. `$/progress` reads `params.token` (or a
 * positional `[token, value]`); `$/logTrace` reads `params.message` while tracing. `$/setTrace`
 * is only ever sent by vscode-jsonrpc, never read, so it needs no check.
 */
const BUILT_IN_NOTIFICATIONS = new Map<string, { readonly needs: string; readonly usable: (params: unknown) => boolean }>([
  ['$/cancelRequest', { needs: 'params {id: number | string}', usable: (params) => isObject(params) && isId(params.id) }],
  ['$/progress', {
    needs: 'params {token: number | string, value}',
    usable: (params) => (isObject(params) && isId(params.token)) || (Array.isArray(params) && params.length === 2 && isId(params[0])),
  }],
  ['$/logTrace', { needs: 'params {message: string}', usable: (params) => isObject(params) && typeof params.message === 'string' }],
]);

function hasUsableParams(message: NotificationMessage): boolean {
  return BUILT_IN_NOTIFICATIONS.get(message.method)?.usable(message.params) ?? true;
}
