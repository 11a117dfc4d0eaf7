/**
 * patchd wire contract, version 1: every method and notification with its zod schemas and its
 * vscode-jsonrpc message type, the receipt shapes, and the error codes with their hints.
 * Imported by both the daemon and the client; nothing else declares these shapes.
 *
 * | method             | params                 | result                |
 * | ------------------ | ---------------------- | --------------------- |
 * | `initialize`       | `InitializeParams`     | `InitializeResult`    |
 * | `workspace/open`   | `OpenWorkspaceParams`  | `OpenWorkspaceResult` |
 * | `workspace/close`  | `CloseWorkspaceParams` | `null`                |
 * | `patch/apply`      | `ApplyParams`          | `Receipt`             |
 * | `patch/applyBatch` | `ApplyBatchParams`     | `BatchSummary`        |
 * | `file/read`        | `ReadFileParams`       | `ReadFileResult`      |
 * | `patch/undo`       | `UndoParams`           | `Receipt`             |
 * | `session/diff`     | `SessionDiffParams`    | `SessionDiffResult`   |
 * | `transaction/list` | `ListTransactionsParams` | `ListTransactionsResult` |
 * | `shutdown`         | —                      | `null`                |
 *
 * The params of every request the daemon takes are strict objects: an unknown key (a misspelled
 * `dryrun`) is -32602 naming it, never silently ignored. Except `initialize`'s: the handshake is
 * where a newer client learns the daemon's `protocolVersion`, so it must get through to an older
 * daemon whatever the client adds to it. What the daemon sends (results, notifications,
 * `patch/approve` params) stays open to added fields, for the same reason the other way round.
 *
 * Notifications: `exit` (client → daemon); `$/progress` with a `FileReceipt` (`patch/apply`)
 * or a `BatchReceipt` (`patch/applyBatch`), and `file/changed` (daemon → client). Request
 * daemon → client: `patch/approve` (`ApproveParams` → `ApproveResult`).
 */
export * from './define.ts';
export * from './errors.ts';
export * from './formats.ts';
export * from './lifecycle.ts';
export * from './workspace.ts';
export * from './patch.ts';
export * from './batch.ts';
export * from './progress.ts';
export * from './file.ts';
export * from './history.ts';
export * from './approval.ts';
export * from './receipt.ts';

