/**
 * The JSON-RPC wiring of one client connection (the only import of `vscode-jsonrpc/node`):
 * frames in, validated dispatch to the handlers, progress, notifications and responses out,
 * failures turned into JSON-RPC errors. Each request gets an AbortSignal that fires when the
 * client cancels it or when the connection closes — so a client that goes away mid-patch
 * releases every lock it held.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  CancellationTokenSource, createMessageConnection,
  type CancellationToken, type Logger as RpcLogger, type MessageConnection, type MessageWriter, type ResponseMessage,
} from 'vscode-jsonrpc/node';
import {
  ApproveRequest, ApproveResultSchema, BatchReceiptProgress, ExitNotification, FileChangedNotification, FileReceiptProgress,
} from '../../protocol/index.ts';
import { FrameGuardReader, reportingAnswers } from './frameGuard.ts';
import { BrokenStreamError } from './frameSplitter.ts';
import { FrameWriter } from './frameWriter.ts';
import { PatchdHandlers, type SessionOutput } from './handlers.ts';
import { describeError, type Logger } from './logger.ts';
import type { WorkspaceRegistry } from './registry.ts';
import { createDispatch, type Dispatch } from './router.ts';
import { toResponseError } from './rpcErrors.ts';
import { FramedStreamReader } from './streamReader.ts';

export interface ConnectionOptions {
  readonly input: NodeJS.ReadableStream;
  readonly output: NodeJS.WritableStream;
  readonly registry: WorkspaceRegistry;
  readonly log: Logger;
  /** The client sent `exit`. */
  readonly onExit: () => void;
}

/** How a session ended. */
export interface SessionEnd {
  /** Set when the input could not be split into frames any more: why (the session then ended like a closed input). */
  readonly brokenStream: string | undefined;
}

export interface ServerConnection {
  /** Resolves once the input closed (or broke), requests already read were answered, and this session's workspaces were released. */
  readonly closed: Promise<SessionEnd>;
  /** Stops serving (the `closed` promise still resolves). */
  dispose(): void;
}

export function serveConnection(options: ConnectionOptions): ServerConnection {
  const { log } = options;
  const writer = new FrameWriter(options.output);
  const reader = guardedReader(options.input, writer, log);
  let brokenStream: string | undefined;
  reader.onError((error) => {
    if (error instanceof BrokenStreamError) brokenStream = error.message;
  });
  const connection = createMessageConnection(reader, reportingAnswers(writer, reader), rpcLogger(log));
  const handlers = new PatchdHandlers({ registry: options.registry, sessionId: randomUUID(), log, output: sessionOutput(connection, log) });
  const session = new AbortController();
  const inFlight = new Set<Promise<unknown>>();
  routeRequests(connection, createDispatch(handlers), { log, inFlight, session: session.signal });
  connection.onNotification(ExitNotification.type, () => options.onExit());
  connection.onError(([error]) => {
    if (!(error instanceof BrokenStreamError)) log.warn('connection error', describeError(error));
  });
  const ending = endOfSession(session);
  const closed = ending.ended
    .then(() => drain(inFlight))
    .then(() => handlers.dispose())
    .then(() => ({ brokenStream }));
  // A disposed connection fires no close event, so dispose ends the session itself.
  connection.onClose(ending.end);
  connection.listen();
  const dispose = (): void => {
    connection.dispose();
    ending.end();
  };
  return { closed, dispose };
}

/** The session ends once: its requests' signals abort, then `ended` resolves. */
function endOfSession(session: AbortController): { readonly ended: Promise<void>; readonly end: () => void } {
  let resolve!: () => void;
  const ended = new Promise<void>((done) => (resolve = done));
  return {
    ended,
    end: () => {
      session.abort();
      resolve();
    },
  };
}

function sessionOutput(connection: MessageConnection, log: Logger): SessionOutput {
  return {
    fileProgress: (token, value) => connection.sendProgress(FileReceiptProgress, token, value),
    batchProgress: (token, value) => connection.sendProgress(BatchReceiptProgress, token, value),
    fileChanged: (params) => {
      connection.sendNotification(FileChangedNotification.type, params).catch((error: unknown) => log.debug('file/changed not sent', describeError(error)));
    },
    approve: async (params, signal) => {
      const cancellation = new CancellationTokenSource();
      signal.addEventListener('abort', () => cancellation.cancel(), { once: true });
      try {
        return ApproveResultSchema.parse(await connection.sendRequest(ApproveRequest.type, params, cancellation.token));
      } finally {
        cancellation.dispose();
      }
    },
  };
}

/** Reads frames (see `streamReader.ts`), answering malformed ones and reused ids itself (see `frameGuard.ts`). */
function guardedReader(input: NodeJS.ReadableStream, writer: MessageWriter, log: Logger): FrameGuardReader {
  const send = (response: ResponseMessage): void => {
    writer.write(response).catch((error: unknown) => log.warn('could not send an error reply', describeError(error)));
  };
  return new FrameGuardReader(new FramedStreamReader(input), { send, log });
}

interface RouteState {
  readonly log: Logger;
  readonly inFlight: Set<Promise<unknown>>;
  /** Aborts when the connection closes. */
  readonly session: AbortSignal;
}

/** Every request goes through the validated dispatch; every failure through `rpcErrors.ts`. */
function routeRequests(connection: MessageConnection, dispatch: Dispatch, { log, inFlight, session }: RouteState): void {
  const signals = new RequestSignals(session);
  connection.onRequest((method, params, token) => {
    const started = performance.now();
    const { signal, release } = signals.open(token);
    const work = dispatch(method, params, signal)
      .catch((error: unknown) => Promise.reject(toResponseError(error, log)))
      .finally(() => {
        release();
        inFlight.delete(work);
        log.debug('request', { method, ms: Math.round(performance.now() - started) });
      });
    inFlight.add(work);
    return work;
  });
}

/**
 * Waits until requests already received are answered. Input that ends right after its last
 * frame (`printf … | patchd serve`) closes before vscode-jsonrpc has dispatched those frames
 * (it does so a few event-loop turns later), so idle turns are counted too.
 */
async function drain(inFlight: ReadonlySet<Promise<unknown>>): Promise<void> {
  for (let idleTurns = 0; idleTurns < 10; ) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (inFlight.size === 0) idleTurns += 1;
    else {
      idleTurns = 0;
      await Promise.allSettled([...inFlight]);
    }
  }
}

/**
 * The signals of a session's requests: each aborts when its client cancels it or when the
 * session ends. One listener on the session's signal aborts every live request, so the session
 * signal carries one listener however many requests are in flight (a listener per request
 * would pass Node's limit of 10 and print a plain-text warning on stderr). Not
 * `AbortSignal.any`: on Node 20 every call leaves a dependant on the long-lived session signal.
 */
class RequestSignals {
  readonly #session: AbortSignal;
  readonly #live = new Set<AbortController>();

  constructor(session: AbortSignal) {
    this.#session = session;
    session.addEventListener('abort', () => {
      for (const controller of this.#live) controller.abort();
      this.#live.clear();
    }, { once: true });
  }

  /** A request's signal, and `release` to call once it is answered. */
  open(token: CancellationToken): { signal: AbortSignal; release: () => void } {
    const controller = new AbortController();
    if (token.isCancellationRequested || this.#session.aborted) {
      controller.abort();
      return { signal: controller.signal, release: () => {} };
    }
    this.#live.add(controller);
    const cancellation = token.onCancellationRequested(() => controller.abort());
    const release = (): void => {
      cancellation.dispose();
      this.#live.delete(controller);
    };
    return { signal: controller.signal, release };
  }
}

function rpcLogger(log: Logger): RpcLogger {
  return {
    error: (message) => log.warn(message),
    warn: (message) => log.warn(message),
    info: (message) => log.debug(message),
    log: (message) => log.debug(message),
  };
}
