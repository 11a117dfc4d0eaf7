/**
 * The JSON-RPC wiring of one client connection (the only import of `vscode-jsonrpc/node`):
 * frames in, validated dispatch to the handlers, progress, notifications and responses out,
 * failures turned into JSON-RPC errors. Each request gets an AbortSignal that fires when the
 * client cancels it or goes away (its output closes) — so a client that goes away mid-patch
 * releases every lock it held. A client that only ends its input is still answered, as long as
 * it takes its output (see `outputGrace.ts`).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import {
  CancellationTokenSource, createMessageConnection,
  type CancellationToken, type Logger as RpcLogger, type MessageConnection, type MessageWriter, type NotificationMessage, type ResponseMessage,
} from 'vscode-jsonrpc/node';
import {
  ApproveRequest, ApproveResultSchema, ExitNotification, FileChangedNotification, ProgressNotification,
} from '../../protocol/index.ts';
import { FrameGuardReader, reportingAnswers } from './frameGuard.ts';
import { BrokenStreamError } from './frameSplitter.ts';
import { RequestCancelledError } from './failures.ts';
import { FrameWriter, type UnsentOutput } from './frameWriter.ts';
import { PatchdHandlers, type SessionOutput } from './handlers.ts';
import { describeError, type Logger } from './logger.ts';
import { OUTPUT_GRACE_MS, OutputGrace } from './outputGrace.ts';
import { OUTPUT_LIMITS, OutputThrottle, type OutputLimits, type Release } from './outputThrottle.ts';
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
  /** Bounds on what a client that stops reading may cost (tests set small ones); default `OUTPUT_LIMITS`. */
  readonly outputLimits?: OutputLimits;
  /** How long output may go untaken once the input has ended (see `outputGrace.ts`); default `OUTPUT_GRACE_MS`. */
  readonly outputGraceMs?: number;
}

/** How a session ended. */
export interface SessionEnd {
  /** Set when the input could not be split into frames any more: why (the session then ended like a closed input). */
  readonly brokenStream: string | undefined;
  /** True when the client ended its input and stopped taking its output: what it was still owed was dropped (and logged). */
  readonly outputDropped: boolean;
}

export interface ServerConnection {
  /** Resolves once the input closed (or broke), requests already read were answered, and this session's workspaces were released. */
  readonly closed: Promise<SessionEnd>;
  /** Stops serving (the `closed` promise still resolves). */
  dispose(): void;
  /** Output written and not yet taken by the client. */
  readonly unsent: UnsentOutput;
}

export function serveConnection(options: ConnectionOptions): ServerConnection {
  const { log } = options;
  const throttle = new OutputThrottle(options.outputLimits ?? OUTPUT_LIMITS);
  const graceMs = options.outputGraceMs ?? OUTPUT_GRACE_MS;
  let outputDropped = false;
  const grace = new OutputGrace(graceMs, () => {
    outputDropped = true;
    giveUpOnClient({ writer, reader, frames, ending, log, graceMs });
  });
  const writer = new FrameWriter(options.output, [throttle, grace]);
  const frames = new FramedStreamReader(options.input);
  const reader = guardedReader(frames, writer, log);
  const ending = new SessionEnding();
  throttleInput(throttle, frames, ending.clientGone, log);
  let brokenStream: string | undefined;
  reader.onError((error) => {
    if (error instanceof BrokenStreamError) brokenStream = error.message;
  });
  const connection = createMessageConnection(reader, reportingAnswers(writer, reader), rpcLogger(log));
  const output = sessionOutput(connection, writer, ending.inputEnded, log);
  const handlers = new PatchdHandlers({ registry: options.registry, sessionId: randomUUID(), log, output });
  const inFlight = new Set<Promise<unknown>>();
  routeRequests(connection, createDispatch(handlers), { log, inFlight, throttle, session: ending.clientGone });
  connection.onNotification(ExitNotification.type, () => options.onExit());
  connection.onError(([error]) => {
    if (!(error instanceof BrokenStreamError)) log.warn('connection error', describeError(error));
  });
  frames.onInputEnd(() => grace.inputEnded());
  reader.onClose(() => ending.endInput());
  writer.onClose(() => ending.loseClient());
  writer.onError(() => ending.loseClient());
  const closed = sessionOver(ending, reader, inFlight)
    .then(() => grace.stop())
    .then(() => handlers.dispose())
    .then(() => ({ brokenStream, outputDropped }));
  connection.listen();
  const dispose = (): void => {
    connection.dispose();
    ending.loseClient();
  };
  return { closed, dispose, get unsent() { return writer.unsent; } };
}

interface GivingUp {
  readonly writer: FrameWriter;
  readonly reader: FrameGuardReader;
  readonly frames: FramedStreamReader;
  readonly ending: SessionEnding;
  readonly log: Logger;
  readonly graceMs: number;
}

/** How many of the requests left unanswered the warning names. */
const NAMED_UNANSWERED = 20;

/**
 * The client ended its input and took none of its output for the grace period: what it is owed
 * is dropped (so nothing waits on it any more), said in one warning, and the session ends as if
 * the client were gone: what still runs is cancelled, then its workspaces are released in order.
 */
function giveUpOnClient({ writer, reader, frames, ending, log, graceMs }: GivingUp): void {
  const unanswered = reader.unanswered;
  ending.loseClient();
  const unsent = writer.drop();
  log.warn('output left unsent: the client closed its input and took none of its output for the grace period', {
    graceMs, ...unsent, unansweredRequests: unanswered.length, unansweredIds: unanswered.slice(0, NAMED_UNANSWERED),
    // Requests read ahead while its input was paused, never run.
    inputBytesNotRun: frames.bufferedBytes,
  });
}

/**
 * How a session ends. Its input ending (or breaking) is the client saying it has nothing more to
 * ask, not that it stopped listening: every request already read still runs and is answered
 * (`printf FRAMES | patchd serve`), then the session ends — unless the client then leaves its
 * output untaken for the grace period (`outputGrace.ts`): it is then gone, as below, and what it
 * was owed is dropped. Its output closing or failing is the
 * client gone: nothing can be answered any more, so every request is aborted (releasing its
 * locks) and the session ends at once; `dispose` does the same. On a socket both come together:
 * the client's end also ends the socket's own side (`allowHalfOpen` is off), which then closes.
 */
class SessionEnding {
  readonly #input = new AbortController();
  readonly #client = new AbortController();

  /** Aborts once nothing more will be read: a `patch/approve` still unanswered never will be. */
  get inputEnded(): AbortSignal {
    return this.#input.signal;
  }

  /** Aborts once the client cannot be answered (or the connection was disposed): every request stops. */
  get clientGone(): AbortSignal {
    return this.#client.signal;
  }

  endInput(): void {
    this.#input.abort();
  }

  loseClient(): void {
    this.#input.abort();
    this.#client.abort();
  }
}

/**
 * Resolves once the session is over: its client gone, or its input ended and every request read
 * answered. Whatever still runs then has nobody to answer, so it is aborted, and waited for.
 */
async function sessionOver(ending: SessionEnding, reader: FrameGuardReader, inFlight: ReadonlySet<Promise<unknown>>): Promise<void> {
  await Promise.race([aborted(ending.clientGone), aborted(ending.inputEnded).then(() => reader.allAnswered())]);
  ending.loseClient();
  await drain(inFlight);
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * Progress and notifications go straight to the writer, in order with the responses: once the
 * input has ended vscode-jsonrpc refuses to send anything but responses ("Connection is
 * closed"), yet a request read before the end still streams its receipts before its answer.
 */
function sessionOutput(connection: MessageConnection, writer: MessageWriter, inputEnded: AbortSignal, log: Logger): SessionOutput {
  const notify = (method: string, params: object): Promise<void> => writer.write({ jsonrpc: '2.0', method, params } as NotificationMessage);
  const endOfInput = new AbortWatch(inputEnded);
  return {
    progress: (params) => notify(ProgressNotification.method, params),
    fileChanged: (params) => {
      notify(FileChangedNotification.method, params).catch((error: unknown) => log.debug('file/changed not sent', describeError(error)));
    },
    approve: async (params, signal) => {
      if (inputEnded.aborted) throw new InputEndedError();
      const cancellation = new CancellationTokenSource();
      const cancel = (): void => cancellation.cancel();
      signal.addEventListener('abort', cancel, { once: true });
      const unanswerable = endOfInput.watch(() => new InputEndedError());
      try {
        return ApproveResultSchema.parse(await Promise.race([connection.sendRequest(ApproveRequest.type, params, cancellation.token), unanswerable.rejected]));
      } finally {
        unanswerable.stop();
        signal.removeEventListener('abort', cancel);
        cancellation.dispose();
      }
    },
  };
}

/**
 * Promises that reject when a long-lived signal aborts, all through one listener on it: a
 * listener per watch would pile up on the signal (and past 10, Node prints a plain-text warning).
 */
class AbortWatch {
  readonly #waiting = new Set<() => void>();

  constructor(signal: AbortSignal) {
    signal.addEventListener('abort', () => {
      for (const reject of this.#waiting) reject();
      this.#waiting.clear();
    }, { once: true });
  }

  /** `rejected` rejects with `reason()` once the signal aborts, unless `stop` was called first. */
  watch(reason: () => Error): { readonly rejected: Promise<never>; readonly stop: () => void } {
    let reject!: () => void;
    const rejected = new Promise<never>((_resolve, fail) => (reject = () => fail(reason())));
    rejected.catch(() => {});
    this.#waiting.add(reject);
    return { rejected, stop: () => this.#waiting.delete(reject) };
  }
}

/** Why a `patch/approve` gets no answer: the client's input (its side of the conversation) ended. */
class InputEndedError extends Error {
  override readonly name = 'InputEndedError';

  constructor() {
    super('the client closed its input, so it cannot answer');
  }
}

/** Reads frames (see `streamReader.ts`), answering malformed ones and reused ids itself (see `frameGuard.ts`). */
function guardedReader(frames: FramedStreamReader, writer: MessageWriter, log: Logger): FrameGuardReader {
  const send = (response: ResponseMessage): void => {
    writer.write(response).catch((error: unknown) => log.warn('could not send an error reply', describeError(error)));
  };
  return new FrameGuardReader(frames, { send, log });
}

/**
 * While the client leaves too much output unread, its input is not read either (see
 * `outputThrottle.ts`); once the client is gone (its output dropped, see `giveUpOnClient`), never again.
 */
function throttleInput(throttle: OutputThrottle, frames: FramedStreamReader, clientGone: AbortSignal, log: Logger): void {
  throttle.onChange((over) => {
    if (!over && clientGone.aborted) return;
    log.debug(over ? 'output backlog over the limit: reading paused' : 'output backlog taken: reading resumed', { unsentBytes: throttle.unsentBytes });
    if (over) frames.pause();
    else frames.resume();
  });
}

interface RouteState {
  readonly log: Logger;
  readonly inFlight: Set<Promise<unknown>>;
  /** Holds a request back while the output is over its limit or too many run (see `outputThrottle.ts`). */
  readonly throttle: OutputThrottle;
  /** Aborts when the client is gone (see `SessionEnding`). */
  readonly session: AbortSignal;
}

/** Every request goes through the validated dispatch; every failure through `rpcErrors.ts`. */
function routeRequests(connection: MessageConnection, dispatch: Dispatch, { log, inFlight, throttle, session }: RouteState): void {
  const signals = new RequestSignals(session);
  connection.onRequest((method, params, token) => {
    const started = performance.now();
    const { signal, release } = signals.open(token);
    let givePlaceBack: Release = () => {};
    const work = throttle.acquire(signal)
      .then((place) => {
        givePlaceBack = place;
        // Cancelled, or its client gone, before it could start: it is answered without running.
        if (signal.aborted) throw new RequestCancelledError();
        return dispatch(method, params, signal);
      })
      .catch((error: unknown) => Promise.reject(toResponseError(error, log)))
      .finally(() => {
        givePlaceBack();
        release();
        inFlight.delete(work);
        log.debug('request', { method, ms: Math.round(performance.now() - started) });
      });
    inFlight.add(work);
    return work;
  });
}

/** Waits until every request handler has settled (those still starting included). */
async function drain(inFlight: ReadonlySet<Promise<unknown>>): Promise<void> {
  while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
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
