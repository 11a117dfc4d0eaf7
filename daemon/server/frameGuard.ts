/**
 * Answers frames vscode-jsonrpc would only log: a body that is not JSON gets -32700, JSON that
 * is not a JSON-RPC message gets -32600 (both with `id: null` unless one can be read). The
 * connection keeps reading after either: a bad body in a sound frame never ends the session
 * (a broken frame header does, see `streamReader.ts`).
 */
import { Message, type DataCallback, type Disposable, type MessageReader, type ResponseMessage } from 'vscode-jsonrpc';
import { RpcErrorCodes } from '../../protocol/index.ts';
import { UnreadableBodyError } from './streamReader.ts';

export type SendResponse = (response: ResponseMessage) => void;

export class FrameGuardReader implements MessageReader {
  readonly #inner: MessageReader;
  readonly #send: SendResponse;

  constructor(inner: MessageReader, send: SendResponse) {
    this.#inner = inner;
    this.#send = send;
    inner.onError((error) => {
      if (error instanceof UnreadableBodyError) send(errorResponse(null, RpcErrorCodes.ParseError, error.message));
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
      if (isWellFormed(message)) callback(message);
      else this.#send(errorResponse(idOf(message), RpcErrorCodes.InvalidRequest, 'Invalid request: not a JSON-RPC 2.0 request, notification or response.'));
    });
  }

  dispose(): void {
    this.#inner.dispose();
  }
}

function isWellFormed(message: Message): boolean {
  if (Message.isRequest(message) || Message.isResponse(message)) return true;
  if (!Message.isNotification(message)) return false;
  // vscode-jsonrpc reads `params.id` / `params.token` of these without checking.
  const needsParams = message.method === '$/cancelRequest' || message.method === '$/progress';
  return !needsParams || (typeof message.params === 'object' && message.params !== null);
}

function idOf(message: Message): string | number | null {
  const id = (message as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

function errorResponse(id: string | number | null, code: number, message: string): ResponseMessage {
  return { jsonrpc: '2.0', id, error: { code, message } };
}
