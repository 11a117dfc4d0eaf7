/**
 * A workspace opened through a {@link PatchClient}: apply patches (one, or many at once), read
 * files, hear about outside changes, close.
 */
import {
  ApplyPatchRequest, CloseWorkspaceRequest, FileChangedNotification, FileReceiptProgress, FileReceiptSchema, ListTransactionsRequest,
  ReadFileRequest, SessionDiffRequest, UndoRequest,
  type ApplyParams, type BatchReceipt, type DamagedLogSegment, type Recovery, type BatchSummary, type FileReceipt, type FormatName, type ReadFileResult, type Receipt,
  type SessionDiffResult, type StructuredEdit, type TransactionSummary, type V4AOperation,
} from '../protocol/index.ts';
import { streamBatch, type ApplyManyOptions, type BatchEntry } from './batch.ts';
import { ConnectionClosedError, ProtocolError } from './errors.ts';
import type { CallOptions, RpcChannel } from './rpc.ts';
import { streamOf } from './stream.ts';

/** A file this client read or patched changed outside patchd: its new sha256, or null when it was deleted. */
export interface FileChange {
  readonly path: string;
  readonly sha256: string | null;
}

/**
 * What {@link Workspace.apply} takes: patch text in any dialect (unified / git diff, `*** Begin
 * Patch` envelope, SEARCH/REPLACE blocks, an `apply_patch` heredoc), V4A operations, or
 * `{ edits }` — str_replace-style edits, inserts and whole-file writes.
 */
export type Change = string | readonly V4AOperation[] | { readonly edits: readonly StructuredEdit[] };

/** Options of {@link Workspace.apply} and {@link Workspace.applyStream}. */
export interface ApplyOptions extends CallOptions {
  /** Dialect of the patch; `auto` (default) detects it. Operations are always `v4a`. */
  readonly format?: FormatName | undefined;
  /** Compute the receipt without writing (`status: "dry_run"`). */
  readonly dryRun?: boolean | undefined;
  /** All files or none (default `true`); `false` may end `partial`. */
  readonly atomic?: boolean | undefined;
  /** `exact` turns off whitespace and punctuation tolerance. */
  readonly fuzz?: 'default' | 'exact' | undefined;
  /** Leading path components to strip from unified diff paths (`patch -pN`); worked out when absent. */
  readonly strip?: number | undefined;
  /** Apply the inverse of the patch (`git apply -R`); `not_reversible` when it does not show both sides. */
  readonly reverse?: boolean | undefined;
  /** Pre-images: path → lowercase sha256, or `""` for "must not exist". Mismatch → `stale_file`. */
  readonly expectedSha256ByPath?: Readonly<Record<string, string>> | undefined;
  /** Pre-images as `read()` versions: path → version. Mismatch → `stale_file`. */
  readonly baseVersions?: Readonly<Record<string, string>> | undefined;
  /**
   * Called with each file's receipt as the daemon streams it, before `apply` resolves (not
   * for a rejected patch). If it throws, `apply` rejects with that error once the call is
   * over — the patch itself may have been applied.
   */
  readonly onFile?: ((file: FileReceipt) => void) | undefined;
}

export class Workspace implements AsyncDisposable {
  readonly #rpc: RpcChannel;
  #closed = false;

  /** @internal Created by `PatchClient.openWorkspace`. */
  constructor(
    rpc: RpcChannel,
    /** The daemon's handle for this workspace (shared by every client that opened the same root). */
    readonly id: string,
    /** The realpath of the root. */
    readonly root: string,
    /** Unfinished commits (of a killed daemon or patchd command) that opening this workspace recovered; told to its first opener after the crash only. */
    readonly recovered: readonly Recovery[] = [],
    /** Commit log segments that opening this workspace found damaged (a commit in flight there may be left half-applied); told as `recovered` is. */
    readonly damagedLog: readonly DamagedLogSegment[] = [],
  ) {
    this.#rpc = rpc;
  }

  /**
   * Applies a {@link Change}: a string is patch text, an array is V4A operations, `{ edits }`
   * are structured edits. Resolves with the receipt — also when the patch is
   * rejected (`status: "rejected"`, `error.code`, `error.hint`); rejects only when the call
   * itself fails (closed connection, time limit, invalid options).
   */
  async apply(patch: Change, options: ApplyOptions = {}): Promise<Receipt> {
    const params = this.#applyParams(patch, options);
    const { onFile } = options;
    if (onFile === undefined) return this.#rpc.request(ApplyPatchRequest, params, options);
    let streamError: unknown;
    const files = this.#rpc.listenForProgress(FileReceiptProgress, (value) => {
      try {
        onFile(parseFileReceipt(value));
      } catch (error) {
        streamError ??= error;
      }
    });
    try {
      const receipt = await this.#rpc.request(ApplyPatchRequest, { ...params, partialResultToken: files.token }, options);
      if (streamError !== undefined) throw streamError;
      return receipt;
    } finally {
      files.dispose();
    }
  }

  /**
   * {@link apply} as an async generator: yields each `FileReceipt` as it arrives, then returns
   * the `Receipt` (`const receipt = (await it.next()).value` once `done`). Leaving the loop
   * early does not cancel the patch; pass `signal` for that.
   *
   * @example
   * const files = workspace.applyStream(patch);
   * for (let step = await files.next(); ; step = await files.next()) {
   *   if (step.done) { console.log(step.value.status); break; }
   *   console.log(step.value.path);
   * }
   */
  applyStream(patch: Change, options: ApplyOptions = {}): AsyncGenerator<FileReceipt, Receipt, undefined> {
    return streamOf((push: (file: FileReceipt) => void) => this.apply(patch, {
      ...options,
      onFile: (file) => {
        options.onFile?.(file);
        push(file);
      },
    }));
  }

  /**
   * Applies many independent patches in one `patch/applyBatch` call, `concurrency` at a time on
   * the daemon: yields `{index, receipt}` as each patch finishes (completion order), then
   * returns the {@link BatchSummary}. Patches sharing a file apply in index order. Leaving the
   * loop early does not stop the batch; pass `signal` for that (patches already committed stay).
   * Give a `timeoutMs` that fits the whole batch.
   *
   * @example
   * for await (const { index, receipt } of workspace.applyMany(patches, { concurrency: 8 })) {
   *   console.log(index, receipt.status);
   * }
   */
  applyMany(patches: readonly BatchEntry[], options: ApplyManyOptions = {}): AsyncGenerator<BatchReceipt, BatchSummary, undefined> {
    return streamBatch(this.#rpc, this.id, patches, options);
  }

  /**
   * Calls `listener` whenever a file this client read or patched in this workspace changes
   * outside patchd (an editor's save, a delete, another tool) — never for patchd's own
   * commits. Returns the unsubscribe function.
   */
  onFileChanged(listener: (change: FileChange) => void): () => void {
    return this.#rpc.onNotification(FileChangedNotification, ({ workspaceId, path, sha256 }) => {
      if (workspaceId === this.id) listener({ path, sha256 });
    });
  }

  /**
   * Reads a file: text, sha256 (for `expectedSha256ByPath`) and version (for `baseVersions`).
   * A missing, binary or forbidden file rejects with an `RpcError` whose `data.code` is the
   * receipt error code (`not_found`, `binary_file`, `path_escape`, …).
   */
  read(path: string, options: CallOptions = {}): Promise<ReadFileResult> {
    return this.#rpc.request(ReadFileRequest, { workspaceId: this.id, path }, options);
  }

  /**
   * Undoes a committed transaction (a receipt's `transactionId`) as a new one whose receipt has
   * `format: "undo"`; undoing that redoes. Resolves with the receipt — `rejected` with
   * `stale_file` when a file changed since the transaction (nothing is written),
   * `unknown_transaction`, or `io_error` when its undo record is damaged. `dryRun` shows the
   * undo's diff without writing.
   */
  undo(transactionId: string, options: CallOptions & { readonly dryRun?: boolean | undefined } = {}): Promise<Receipt> {
    return this.#rpc.request(UndoRequest, { workspaceId: this.id, transactionId, dryRun: options.dryRun }, options);
  }

  /**
   * The net change, in `git diff` format, of every transaction committed after `since`
   * (exclusive) — by default since the daemon first opened this root, by any client — with the
   * paths whose net state changed; a file that is not UTF-8 text is a git binary patch, and its
   * entry has `binary: true`. An unknown `since` rejects with an `RpcError` whose `data.code` is
   * `unknown_transaction`; a window holding a transaction whose undo record is damaged, `io_error`.
   */
  sessionDiff(options: CallOptions & { readonly since?: string | undefined } = {}): Promise<SessionDiffResult> {
    return this.#rpc.request(SessionDiffRequest, { workspaceId: this.id, since: options.since }, options);
  }

  /** Recent committed transactions of this workspace (all clients, across restarts), newest first; `damaged` marks one whose undo record is damaged. */
  async transactions(options: CallOptions & { readonly limit?: number | undefined } = {}): Promise<TransactionSummary[]> {
    return (await this.#rpc.request(ListTransactionsRequest, { workspaceId: this.id, limit: options.limit }, options)).transactions;
  }

  /** Releases this client's hold on the workspace. Idempotent; a no-op once the client is closed. */
  async close(options: CallOptions = {}): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#rpc.request(CloseWorkspaceRequest, { workspaceId: this.id }, options);
    } catch (error) {
      if (!(error instanceof ConnectionClosedError)) throw error;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #applyParams(patch: Change, options: ApplyOptions): ApplyParams {
    const input = typeof patch === 'string' ? { patch } : 'edits' in patch ? { edits: [...patch.edits] } : { operations: [...patch] };
    const { format, dryRun, atomic, fuzz, strip, reverse, expectedSha256ByPath, baseVersions } = options;
    return { workspaceId: this.id, ...input, format, dryRun, atomic, fuzz, strip, reverse, expectedSha256ByPath, baseVersions };
  }
}

function parseFileReceipt(value: unknown): FileReceipt {
  const parsed = FileReceiptSchema.safeParse(value);
  if (!parsed.success) throw new ProtocolError('The daemon streamed a file receipt that does not match the protocol.');
  return parsed.data;
}
