/**
 * Failures of a request itself (not of a patch): thrown by handlers, turned into JSON-RPC
 * errors by `rpcErrors.ts`. A patch that cannot be applied is never one of these.
 */
import type { EngineError } from '../engine/index.ts';
import { quoteClipped } from './echo.ts';

/**
 * The `workspaceId` is not open (for this client) — or `closedWhileWaiting`: it was open when
 * the request arrived, and was closed (`workspace/close`, or its last client leaving) before the
 * request could finish; nothing the request had not yet committed was written.
 */
export class UnknownWorkspaceError extends Error {
  override readonly name = 'UnknownWorkspaceError';
  readonly code = 'unknown_workspace';
  constructor(readonly workspaceId: string, readonly closedWhileWaiting = false) {
    super(closedWhileWaiting
      ? `The workspace ${JSON.stringify(workspaceId)} was closed while this request waited; what it had not committed by then was not written.`
      : `No open workspace has id ${JSON.stringify(workspaceId)}; open it with workspace/open first.`);
  }

  get hint(): string {
    return this.closedWhileWaiting
      ? 'Open the root again with workspace/open and resend the request with the new workspaceId; transaction/list shows what was committed.'
      : 'Open the root with workspace/open and use the workspaceId it returns.';
  }
}

/** No handler for the method. */
export class MethodNotFoundError extends Error {
  override readonly name = 'MethodNotFoundError';
  constructor(readonly method: string) {
    super(`Unknown method ${quoteClipped(method)}.`);
  }
}

/** The client cancelled the request. */
export class RequestCancelledError extends Error {
  override readonly name = 'RequestCancelledError';
  constructor() {
    super('The request was cancelled.');
  }
}

/** A request arrived after `shutdown`. */
export class ShuttingDownError extends Error {
  override readonly name = 'ShuttingDownError';
  constructor(method: string) {
    super(`The server is shutting down and no longer accepts ${method}.`);
  }
}

/** `file/read` could not read the file; carries the engine-style error (code, hint, path). */
export class FileRequestError extends Error {
  override readonly name = 'FileRequestError';
  constructor(readonly error: EngineError) {
    super(error.message);
  }
}

/** `session/diff` was given a `since` that names no committed transaction of the workspace. */
export class UnknownTransactionError extends Error {
  override readonly name = 'UnknownTransactionError';
  readonly code = 'unknown_transaction';
  constructor(readonly transactionId: string) {
    super(`No committed transaction of this workspace has the id ${JSON.stringify(transactionId)} (or it is past retention).`);
  }
}
