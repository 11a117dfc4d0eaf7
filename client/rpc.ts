/**
 * A JSON-RPC channel with what vscode-jsonrpc leaves to the caller: per-call time limits,
 * AbortSignal support, results validated against `protocol/`, and every pending call rejected
 * the moment the connection closes.
 */
import {
  CancellationTokenSource, ConnectionError, ResponseError,
  type CancellationToken, type MessageConnection, type NotificationType, type ProgressType, type RequestType,
} from 'vscode-jsonrpc/node';
import { prettifyError, type z } from 'zod';
import {
  RpcErrorCodes, RpcErrorDataSchema,
  type Notification0Definition, type NotificationDefinition, type ProgressToken, type Request0Definition, type RequestDefinition,
} from '../protocol/index.ts';
import { ConnectionClosedError, ProtocolError, RequestAbortedError, RequestTimeoutError, RpcError } from './errors.ts';

/** Per-call options. */
export interface CallOptions {
  /** Reject with `RequestTimeoutError` (and cancel on the daemon) after this long. Default: the client's `requestTimeoutMs`. */
  readonly timeoutMs?: number | undefined;
  /** Reject with `RequestAbortedError` (and cancel on the daemon) when aborted; aborted already, the call is not sent. */
  readonly signal?: AbortSignal | undefined;
}

type Send = (token: CancellationToken) => Promise<unknown>;

export class RpcChannel {
  readonly #connection: MessageConnection;
  readonly #defaultTimeoutMs: number;
  readonly #pending = new Set<(error: Error) => void>();
  readonly #notificationHandlers = new Map<string, Set<(params: unknown) => void>>();
  #closedBy: ConnectionClosedError | undefined;
  #progressTokens = 0;

  constructor(connection: MessageConnection, defaultTimeoutMs: number) {
    this.#connection = connection;
    this.#defaultTimeoutMs = defaultTimeoutMs;
    connection.listen();
  }

  /** Why the channel closed, or undefined while open. */
  get closedBy(): ConnectionClosedError | undefined {
    return this.#closedBy;
  }

  request<P extends z.ZodType, R extends z.ZodType>(definition: RequestDefinition<P, R>, params: z.infer<P>, options: CallOptions = {}): Promise<z.infer<R>> {
    // vscode-jsonrpc's conditional param type does not resolve for a generic P; the definition ties P to the params anyway.
    const type = definition.type as RequestType<unknown, unknown, void>;
    return this.#call(definition.method, definition.result, (token) => this.#connection.sendRequest(type, params, token), options);
  }

  request0<R extends z.ZodType>(definition: Request0Definition<R>, options: CallOptions = {}): Promise<z.infer<R>> {
    return this.#call(definition.method, definition.result, (token) => this.#connection.sendRequest(definition.type, token), options);
  }

  async notify0(definition: Notification0Definition): Promise<void> {
    if (this.#closedBy !== undefined) throw this.#closedBy;
    await this.#connection.sendNotification(definition.type);
  }

  /** Listens for `$/progress` values of `type` under a fresh token (values arrive unvalidated). */
  listenForProgress<T>(type: ProgressType<T>, handler: (value: unknown) => void): { readonly token: ProgressToken; dispose(): void } {
    const token = `patchd-progress-${++this.#progressTokens}`;
    const listener = this.#connection.onProgress(type, token, handler);
    return { token, dispose: () => listener.dispose() };
  }

  /** Calls `handler` with the params of every `definition` notification that matches its schema; returns the unsubscribe function. */
  onNotification<P extends z.ZodType>(definition: NotificationDefinition<P>, handler: (params: z.infer<P>) => void): () => void {
    let handlers = this.#notificationHandlers.get(definition.method);
    if (handlers === undefined) {
      const registered = new Set<(params: unknown) => void>();
      this.#notificationHandlers.set(definition.method, (handlers = registered));
      // vscode-jsonrpc keeps one handler per method, so this channel fans out itself.
      const type = definition.type as NotificationType<unknown>;
      this.#connection.onNotification(type, (params: unknown) => registered.forEach((notify) => notify(params)));
    }
    const validated = (params: unknown): void => {
      const parsed = definition.params.safeParse(params);
      if (parsed.success) handler(parsed.data);
    };
    handlers.add(validated);
    return () => handlers.delete(validated);
  }

  /**
   * Answers the daemon's `definition` requests with `handler` (params validated first; invalid
   * params are answered -32602). One handler per method: a later one replaces it.
   */
  onRequest<P extends z.ZodType, R extends z.ZodType>(definition: RequestDefinition<P, R>, handler: (params: z.infer<P>) => Promise<z.infer<R>>): void {
    const type = definition.type as RequestType<unknown, unknown, void>;
    this.#connection.onRequest(type, async (params: unknown) => {
      const parsed = definition.params.safeParse(params);
      if (!parsed.success) throw new ResponseError(RpcErrorCodes.InvalidParams, `Invalid ${definition.method} params.`);
      return handler(parsed.data);
    });
  }

  /** Closes the channel: every pending and later call fails with `reason`. Idempotent. */
  close(reason: ConnectionClosedError): void {
    if (this.#closedBy !== undefined) return;
    this.#closedBy = reason;
    for (const fail of [...this.#pending]) fail(reason);
    this.#connection.dispose();
  }

  async #call<R extends z.ZodType>(method: string, schema: R, send: Send, options: CallOptions): Promise<z.infer<R>> {
    if (this.#closedBy !== undefined) throw this.#closedBy;
    // Not sent: its cancellation would follow it, and the daemon could run it (and write) before that arrived.
    if (options.signal?.aborted === true) throw new RequestAbortedError(method, { cause: options.signal.reason });
    const raw = await new Promise<unknown>((resolve, reject) => {
      const call = new PendingCall(method, options.timeoutMs ?? this.#defaultTimeoutMs, options.signal, (settle) => {
        this.#pending.delete(fail);
        settle();
      });
      const fail = (error: Error) => call.finish(() => reject(error));
      this.#pending.add(fail);
      call.start(fail);
      send(call.token).then((value) => call.finish(() => resolve(value)), (error: unknown) => fail(this.#clientError(method, error)));
    });
    return validated(method, schema, raw);
  }

  #clientError(method: string, error: unknown): Error {
    if (error instanceof ResponseError) {
      const data = RpcErrorDataSchema.safeParse(error.data);
      return new RpcError(method, error.code, error.message, data.success ? data.data : undefined);
    }
    if (error instanceof ConnectionError) return this.#closedBy ?? new ConnectionClosedError(`${method} failed: ${error.message}`);
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** One call's time limit, abort listener and cancellation token; settles once. */
class PendingCall {
  readonly #source = new CancellationTokenSource();
  readonly #method: string;
  readonly #timeoutMs: number;
  readonly #signal: AbortSignal | undefined;
  readonly #onSettle: (settle: () => void) => void;
  #timer: NodeJS.Timeout | undefined;
  #abort: (() => void) | undefined;
  #settled = false;

  constructor(method: string, timeoutMs: number, signal: AbortSignal | undefined, onSettle: (settle: () => void) => void) {
    this.#method = method;
    this.#timeoutMs = timeoutMs;
    this.#signal = signal;
    this.#onSettle = onSettle;
  }

  get token(): CancellationToken {
    return this.#source.token;
  }

  /** Arms the time limit and the abort signal; both cancel the request on the daemon. */
  start(fail: (error: Error) => void): void {
    const cancelWith = (error: Error) => {
      this.#source.cancel();
      fail(error);
    };
    this.#timer = setTimeout(() => cancelWith(new RequestTimeoutError(this.#method, this.#timeoutMs)), this.#timeoutMs);
    this.#abort = () => cancelWith(new RequestAbortedError(this.#method, { cause: this.#signal?.reason }));
    this.#signal?.addEventListener('abort', this.#abort, { once: true });
  }

  finish(settle: () => void): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#timer);
    if (this.#abort !== undefined) this.#signal?.removeEventListener('abort', this.#abort);
    this.#source.dispose();
    this.#onSettle(settle);
  }
}

function validated<R extends z.ZodType>(method: string, schema: R, raw: unknown): z.infer<R> {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ProtocolError(`${method} answered with an unexpected result:\n${prettifyError(parsed.error)}`);
  return parsed.data;
}
