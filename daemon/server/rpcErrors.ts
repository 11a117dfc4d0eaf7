/**
 * The one place failures become JSON-RPC errors. Invalid params, unknown workspaces and bad
 * roots are -32602 (with `data.code`), unknown methods -32601, an unusable state dir -32000
 * (the daemon's setup, with a hint), a filesystem call that failed outside any patch (reading
 * the history with no descriptor left, say) -32000 `io_error`, anything unexpected -32603 with
 * a plain message — the stack goes to the log, never onto the wire.
 */
import { ResponseError } from 'vscode-jsonrpc';
import { ZodError } from 'zod';
import { ERROR_HINTS, RpcErrorCodes, type RpcErrorData } from '../../protocol/index.ts';
import { TaskCancelledError } from '../pool/pool.ts';
import { describeFsError } from '../workspace/ioErrors.ts';
import { StateDirError } from '../workspace/stateDir.ts';
import {
  FileRequestError, MethodNotFoundError, RequestCancelledError, ShuttingDownError, UnknownTransactionError, UnknownWorkspaceError,
} from './failures.ts';
import { clip, quoteClipped } from './echo.ts';
import { describeError, type Logger } from './logger.ts';

export function toResponseError(error: unknown, log: Logger): ResponseError<RpcErrorData | undefined> {
  if (error instanceof ResponseError) return error as ResponseError<RpcErrorData | undefined>;
  if (error instanceof ZodError) return invalidParams(`Invalid params: ${summarizeIssues(error)}`, { code: 'invalid_params', issues: issuesOf(error) });
  if (error instanceof UnknownWorkspaceError) return invalidParams(error.message, { code: 'unknown_workspace', hint: error.hint });
  if (hasCode(error, 'bad_root')) return invalidParams(error.message, { code: 'bad_root' });
  if (error instanceof StateDirError) {
    log.error('state directory unusable', { stateDir: error.stateDir, error: error.message });
    return new ResponseError(RpcErrorCodes.ServerSetup, error.message, { code: error.code, hint: error.hint });
  }
  if (error instanceof UnknownTransactionError) return invalidParams(error.message, { code: 'unknown_transaction', hint: ERROR_HINTS.unknown_transaction });
  if (error instanceof FileRequestError) return fileError(error);
  if (error instanceof MethodNotFoundError) return new ResponseError(RpcErrorCodes.MethodNotFound, error.message);
  if (error instanceof RequestCancelledError || error instanceof TaskCancelledError) {
    return new ResponseError(RpcErrorCodes.RequestCancelled, 'The request was cancelled.');
  }
  if (error instanceof ShuttingDownError) return new ResponseError(RpcErrorCodes.InvalidRequest, error.message, { code: 'shutting_down' });
  if (isSystemError(error)) {
    log.error('filesystem error', describeError(error));
    // The code and the call only: the error's own message names absolute paths (the state dir), which stay private.
    return new ResponseError(RpcErrorCodes.ServerSetup, `A filesystem call (${error.syscall}) failed: ${describeFsError(error)}.`, { code: 'io_error', hint: FILESYSTEM_HINT });
  }
  log.error('internal error', describeError(error));
  return new ResponseError(RpcErrorCodes.InternalError, 'Internal error in patchd; see the daemon log.');
}

const FILESYSTEM_HINT = 'The filesystem failed under patchd (too many open files, a full disk, an I/O error); nothing was changed. Retry once the cause is fixed.';

/** A failed system call as Node reports it: an errno code and the call's name. */
function isSystemError(error: unknown): error is Error & { readonly code: string; readonly syscall: string } {
  return error instanceof Error && typeof (error as { code?: unknown }).code === 'string' && typeof (error as { syscall?: unknown }).syscall === 'string';
}

function invalidParams(message: string, data: RpcErrorData): ResponseError<RpcErrorData> {
  return new ResponseError(RpcErrorCodes.InvalidParams, message, data);
}

function fileError({ error }: FileRequestError): ResponseError<RpcErrorData> {
  const data: RpcErrorData = { code: error.code, hint: error.hint, ...(error.path === undefined ? {} : { path: error.path }) };
  return invalidParams(error.message, data);
}

/** The longest issue message told (zod's own are shorter; longer ones echo what the client sent). */
const MAX_ISSUE_MESSAGE_CHARS = 300;

/** Each issue's path and message, with what they echo of the params (keys, values) cut short (see `echo.ts`). */
function issuesOf(error: ZodError): { path: string; message: string }[] {
  return error.issues.slice(0, 100).map((issue) => ({ path: issue.path.map((segment) => clip(String(segment))).join('.'), message: messageOf(issue) }));
}

function messageOf(issue: ZodError['issues'][number]): string {
  if (issue.code !== 'unrecognized_keys') return clip(issue.message, MAX_ISSUE_MESSAGE_CHARS);
  const { keys } = issue;
  const more = keys.length > 5 ? ` and ${keys.length - 5} more` : '';
  return `Unrecognized key${keys.length === 1 ? '' : 's'}: ${keys.slice(0, 5).map(quoteClipped).join(', ')}${more}`;
}

function summarizeIssues(error: ZodError): string {
  return issuesOf(error).slice(0, 5).map(({ path, message }) => (path === '' ? message : `${path}: ${message}`)).join('; ');
}

function hasCode(error: unknown, code: string): error is Error {
  return error instanceof Error && (error as { code?: unknown }).code === code;
}
