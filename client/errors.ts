/**
 * Errors the client throws. Three kinds stay apart:
 * - the daemon answered with a JSON-RPC error ({@link RpcError}: invalid params, unknown
 *   workspace, unknown method, internal fault);
 * - the call never got an answer ({@link ConnectionClosedError}, {@link DaemonExitedError},
 *   {@link RequestTimeoutError}, {@link RequestAbortedError}) or got one that breaks the
 *   protocol ({@link ProtocolError});
 * - a patch that cannot be applied is neither: it is a `Receipt` with `status: "rejected"`.
 */
import type { RpcErrorData } from '../protocol/index.ts';

/** Base class of every error this client throws. */
export class PatchdClientError extends Error {
  override name = 'PatchdClientError';
}

/** The connection to the daemon is closed: pending and later calls fail with this. */
export class ConnectionClosedError extends PatchdClientError {
  override name = 'ConnectionClosedError';
}

/** The spawned daemon process exited (or could not start); pending and later calls fail with this. */
export class DaemonExitedError extends ConnectionClosedError {
  override name = 'DaemonExitedError';

  constructor(
    /** Exit code, or null when killed by a signal or never started. */
    readonly exitCode: number | null,
    /** The signal that killed it, if any. */
    readonly signal: NodeJS.Signals | null,
    /** The last lines the daemon wrote to stderr (when stderr was captured). */
    readonly stderrTail: string,
    options?: ErrorOptions,
  ) {
    super(describeExit(exitCode, signal, stderrTail), options);
  }
}

function describeExit(exitCode: number | null, signal: NodeJS.Signals | null, stderrTail: string): string {
  const how = signal !== null ? `was killed by ${signal}` : exitCode !== null ? `exited with code ${exitCode}` : 'is gone';
  const tail = stderrTail.trim() === '' ? '' : `; last stderr: ${stderrTail.trim().split('\n').slice(-3).join(' | ')}`;
  return `The patchd daemon ${how}${tail}.`;
}

/** No answer within the call's time limit; the request was cancelled on the daemon. */
export class RequestTimeoutError extends PatchdClientError {
  override name = 'RequestTimeoutError';

  constructor(readonly method: string, readonly timeoutMs: number) {
    super(`${method} got no answer within ${timeoutMs} ms.`);
  }
}

/** The caller's AbortSignal fired; the request was cancelled on the daemon. */
export class RequestAbortedError extends PatchdClientError {
  override name = 'RequestAbortedError';

  constructor(readonly method: string, options?: ErrorOptions) {
    super(`${method} was aborted.`, options);
  }
}

/** The daemon answered with a JSON-RPC error. */
export class RpcError extends PatchdClientError {
  override name = 'RpcError';

  constructor(
    readonly method: string,
    /** JSON-RPC code: -32602 invalid params, -32601 unknown method, -32603 internal, … (see `RpcErrorCodes`). */
    readonly code: number,
    message: string,
    /** `data.code` tells causes apart: `unknown_workspace`, `bad_root`, `invalid_params`, `not_found`, … */
    readonly data?: RpcErrorData,
  ) {
    super(message);
  }
}

/** The daemon's answer does not match the protocol (schema mismatch or unknown protocol version). */
export class ProtocolError extends PatchdClientError {
  override name = 'ProtocolError';
}
