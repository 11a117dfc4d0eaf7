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
 */
export { PatchClient, type ConnectOptions, type SpawnOptions } from './client.ts';
export { Workspace, type ApplyOptions, type Change } from './workspace.ts';
export type { CallOptions } from './rpc.ts';
export type { StderrMode } from './daemonProcess.ts';
export {
  ConnectionClosedError, DaemonExitedError, PatchdClientError, ProtocolError, RequestAbortedError, RequestTimeoutError, RpcError,
} from './errors.ts';
export {
  ERROR_CODES, ERROR_HINTS, FORMATS, RpcErrorCodes,
  type Diagnostic, type ErrorCode, type FileReceipt, type FormatName, type HunkReceipt, type ReadFileResult, type Receipt,
  type ReceiptError, type ReceiptStatus, type RpcErrorData, type StructuredEdit, type V4AOperation,
} from '../protocol/index.ts';
