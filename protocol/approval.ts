/**
 * Consent: `patch/approve`, a request the daemon sends to a client that opened its workspace
 * with an `approval` policy (see `workspace/open`), before writing a patch — or an undo or redo
 * (`patch/undo`) — that needs it.
 */
import { z } from 'zod';
import { defineRequest } from './define.ts';
import { FileReceiptSchema, MAX_FILES } from './receipt.ts';
import { WorkspaceIdSchema } from './workspace.ts';

/** Params of `patch/approve`: what the patch (or undo) would do, planned on the current files. */
export const ApproveParamsSchema = z.object({
  workspaceId: WorkspaceIdSchema,
  /** The id the patch's (or undo's) receipt will carry. */
  transactionId: z.string(),
  /** The planned file receipts, each with its diff. */
  files: z.array(FileReceiptSchema).max(MAX_FILES),
  /** Set when what is asked about is an undo (or redo): the transaction it undoes. */
  undoOf: z.string().optional(),
});

/** Result of `patch/approve`. */
export const ApproveResultSchema = z.object({
  approved: z.boolean(),
  /** Why not; carried into the `declined` error's message. */
  reason: z.string().max(2000).optional(),
});

export type ApproveParams = z.infer<typeof ApproveParamsSchema>;
export type ApproveResult = z.infer<typeof ApproveResultSchema>;

/**
 * `patch/approve` (daemon → client). The daemon holds no lock while it waits. Approved: the
 * patch is committed (planned again first if a file changed meanwhile, and asked about again
 * if that plan differs). Declined, unanswered within `approvalTimeoutMs`, or the client gone:
 * the receipt is `rejected` with code `declined` and nothing is written.
 */
export const ApproveRequest = defineRequest('patch/approve', ApproveParamsSchema, ApproveResultSchema);
