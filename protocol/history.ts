/**
 * Time travel: `patch/undo`, `session/diff` and `transaction/list`.
 *
 * Every committed transaction leaves a record in the workspace's state dir (written as part of
 * the commit, so it survives restarts and never names a transaction that did not apply). From
 * the records patchd can undo a transaction, show the net diff of several, and list them.
 */
import { z } from 'zod';
import { defineRequest } from './define.ts';
import { ReceiptSchema } from './receipt.ts';
import { MAX_PATH_CHARS, WorkspaceIdSchema } from './workspace.ts';

/** A receipt's `transactionId`. */
export const TransactionIdSchema = z.string().min(1).max(200);

/** Params of `patch/undo`. */
export const UndoParamsSchema = z.strictObject({
  workspaceId: WorkspaceIdSchema,
  /** The transaction to undo (a receipt's `transactionId`; an undo's own id redoes). */
  transactionId: TransactionIdSchema,
  /** Compute the undo's receipt (with its diff) without writing or recording anything. */
  dryRun: z.boolean().optional(),
});

/** Params of `session/diff`. */
export const SessionDiffParamsSchema = z.strictObject({
  workspaceId: WorkspaceIdSchema,
  /**
   * Exclusive: the window is every transaction committed after this one. Without it, every
   * transaction since this daemon first opened the root (by any client).
   */
  since: TransactionIdSchema.optional(),
});

const PathSchema = z.string().max(MAX_PATH_CHARS);

/** How one path changed over the window, net. */
export const SessionFileSchema = z.object({
  path: PathSchema,
  /** The source of a rename. */
  fromPath: PathSchema.optional(),
  op: z.enum(['add', 'update', 'delete', 'rename']),
});

/** How one path changed over the window, net, as `session/diff` lists it. */
export const SessionDiffFileSchema = SessionFileSchema.extend({
  /**
   * `true` when the file is not text on one side or both (NUL bytes, or not UTF-8): `diff`
   * carries it as `git diff --binary` does, as a `GIT binary patch`. Absent for text files.
   */
  binary: z.literal(true).optional(),
});

/** Result of `session/diff`. */
export const SessionDiffResultSchema = z.object({
  /**
   * The net change in `git diff` format (`git apply` reproduces it byte for byte); `""` when
   * nothing changed. A file that is not text is a `GIT binary patch` (literal hunks, with full
   * `index` blob ids), as `git diff --binary` writes it.
   */
  diff: z.string(),
  /** Exactly the paths whose net state changed, sorted by path. */
  files: z.array(SessionDiffFileSchema),
});

/** Params of `transaction/list`. */
export const ListTransactionsParamsSchema = z.strictObject({
  workspaceId: WorkspaceIdSchema,
  /** Most transactions to return (default 50). */
  limit: z.number().int().min(1).max(10_000).optional(),
});

/** One committed transaction. */
export const TransactionSummarySchema = z.object({
  transactionId: z.string(),
  /** When it committed: ISO 8601. */
  at: z.string(),
  /**
   * `partial`: an `atomic: false` patch that stopped part way (only its committed files are
   * listed). `unknown`: no undo record of it can be read (see `damaged`, which is then set), so
   * whether all of it applied is not known.
   */
  status: z.enum(['applied', 'partial', 'unknown']),
  /** The dialect the patch was read as, or `undo`. */
  format: z.string(),
  /** For an undo: the transaction it undid. */
  undoOf: z.string().optional(),
  files: z.array(SessionFileSchema),
  /**
   * Set when an undo record of this transaction is damaged in the state dir: why, naming the
   * record. The listing checks each record it lists as an undo does: cut short, not a record, a
   * pre-image that no longer matches the sha256 recorded with it, or a record of another
   * workspace (copied into this one's history) or under another transaction's name. Such a
   * transaction cannot be undone, and no session diff is told over it. The other fields say
   * what could be read; when none of it could, `status` and `format` are `"unknown"` and
   * `files` is empty.
   */
  damaged: z.string().optional(),
});

/** Result of `transaction/list`. */
export const ListTransactionsResultSchema = z.object({
  /** Newest first. */
  transactions: z.array(TransactionSummarySchema),
});

export type UndoParams = z.infer<typeof UndoParamsSchema>;
export type SessionDiffParams = z.infer<typeof SessionDiffParamsSchema>;
export type SessionFile = z.infer<typeof SessionFileSchema>;
export type SessionDiffFile = z.infer<typeof SessionDiffFileSchema>;
export type SessionDiffResult = z.infer<typeof SessionDiffResultSchema>;
export type ListTransactionsParams = z.infer<typeof ListTransactionsParamsSchema>;
export type TransactionSummary = z.infer<typeof TransactionSummarySchema>;
export type ListTransactionsResult = z.infer<typeof ListTransactionsResultSchema>;

/**
 * `patch/undo`: answers a `Receipt` (`format: "undo"`, inverted ops) of a new transaction that
 * restores every file of `transactionId` to its pre-image. Rejected `stale_file` (nothing
 * written) when a file no longer holds what that transaction left; `unknown_transaction` when
 * the id names no committed transaction of this workspace (or one past retention); `io_error`
 * (nothing written) when one of its undo records is damaged — cut short, not a record, a
 * pre-image that no longer matches the sha256 recorded with it, or a record of another
 * workspace (copied into this one's history) or under another transaction's name. The sender's
 * approval policy (`workspace/open`) covers it as it covers a patch: a path matching a `deny`
 * glob is `permission_denied` (a dry run too), one that needs consent is asked about with
 * `patch/approve` (not for a dry run), and a no is `declined`; nothing is written either way.
 */
export const UndoRequest = defineRequest('patch/undo', UndoParamsSchema, ReceiptSchema);

/**
 * `session/diff`: the net diff of the window. An unknown `since` (or a window whose start
 * retention removed) is -32602 with `data.code === "unknown_transaction"`; a window that cannot
 * be told because an applied patch's undo record is not written yet (no space), or because the
 * undo record of a transaction in it is damaged (cut short, not a record, a pre-image that no
 * longer matches its sha256, another workspace's record; the message names the transaction and
 * the record), `io_error`; a workspace root removed or moved since it was opened, `not_found`.
 */
export const SessionDiffRequest = defineRequest('session/diff', SessionDiffParamsSchema, SessionDiffResultSchema);

/** `transaction/list`: recent committed transactions, newest first, from the state dir. */
export const ListTransactionsRequest = defineRequest('transaction/list', ListTransactionsParamsSchema, ListTransactionsResultSchema);
