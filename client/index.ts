/**
 * patchd client library.
 *
 * @example
 * import { PatchClient } from 'patchd/client';
 *
 * await using client = await PatchClient.spawn();
 * await using workspace = await client.openWorkspace('/path/to/repo');
 * const receipt = await workspace.apply(patchText, { onFile: (file) => console.log(file.op, file.path) });
 * if (receipt.status === 'rejected') console.log(receipt.error?.code, receipt.error?.hint);
 *
 * // A shared daemon (`patchd serve --socket /tmp/patchd.sock`), many patches at once:
 * await using shared = await PatchClient.connect({ socket: '/tmp/patchd.sock' });
 * const repo = await shared.openWorkspace('/path/to/repo');
 * for await (const { index, receipt } of repo.applyMany(patches)) console.log(index, receipt.status);
 */
export { PatchClient, type ApproveHandler, type ConnectOptions, type OpenWorkspaceOptions, type SocketConnectOptions, type SpawnOptions } from './client.ts';
export { Workspace, type ApplyOptions, type Change, type FileChange } from './workspace.ts';
export type { ApplyManyOptions, BatchEntry } from './batch.ts';
export type { CallOptions } from './rpc.ts';
export type { StderrMode } from './daemonProcess.ts';
export {
  ConnectionClosedError, DaemonExitedError, PatchdClientError, ProtocolError, RequestAbortedError, RequestTimeoutError, RpcError,
} from './errors.ts';
export {
  ERROR_CODES, ERROR_HINTS, FORMATS, RpcErrorCodes,
  type BatchPatch, type BatchReceipt, type BatchSummary, type Diagnostic, type ErrorCode, type FileReceipt, type FormatName,
  type HunkReceipt, type ReadFileResult, type Receipt, type ReceiptError, type ReceiptStatus, type RpcErrorData, type StructuredEdit,
  type V4AOperation, type SessionDiffResult, type SessionDiffFile, type SessionFile, type TransactionSummary, type ApprovalPolicy, type ApproveParams,
  type ApproveResult,
} from '../protocol/index.ts';
