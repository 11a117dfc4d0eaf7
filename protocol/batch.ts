/**
 * Batches: `patch/applyBatch` and its `$/progress` stream of receipts.
 *
 * Each patch of a batch is independent — its own parse, plan, commit and receipt, exactly as
 * if sent with `patch/apply`; one rejected patch does not stop the others. Up to
 * `concurrency` patches run at once; patches that share a file apply in index order, patches
 * on other files in parallel.
 */
import { ProgressType } from 'vscode-jsonrpc';
import { z } from 'zod';
import { MAX_BATCH_CONCURRENCY, MAX_BATCH_PATCHES } from './constants.ts';
import { defineRequest } from './define.ts';
import { PatchOptionsSchema, hasOnePatchInput, ONE_PATCH_INPUT, PatchInputSchema, ProgressTokenSchema } from './patch.ts';
import { ReceiptSchema, type Receipt } from './receipt.ts';
import { WorkspaceIdSchema } from './workspace.ts';

export { DEFAULT_BATCH_CONCURRENCY, MAX_BATCH_CONCURRENCY, MAX_BATCH_PATCHES } from './constants.ts';

/** One patch of a batch: `patch`, `operations` or `edits`, with the options `patch/apply` takes. */
export const BatchPatchSchema = z.strictObject({ ...PatchInputSchema.shape, ...PatchOptionsSchema.shape }).refine(hasOnePatchInput, ONE_PATCH_INPUT);

/** Params of `patch/applyBatch`. */
export const ApplyBatchParamsSchema = z.strictObject({
  workspaceId: WorkspaceIdSchema,
  patches: z.array(BatchPatchSchema).min(1).max(MAX_BATCH_PATCHES),
  /** Patches in flight at once (default {@link DEFAULT_BATCH_CONCURRENCY}). */
  concurrency: z.number().int().min(1).max(MAX_BATCH_CONCURRENCY).optional(),
  /**
   * When given, each receipt is sent as `$/progress {token, value: {index, receipt}}` the moment
   * its patch is done (in completion order), and the result carries no `receipts`.
   */
  partialResultToken: ProgressTokenSchema.optional(),
});

/** One finished patch of a batch: its index in `patches` and its receipt. */
export const BatchReceiptSchema = z.object({
  index: z.number().int().nonnegative(),
  receipt: ReceiptSchema,
});

/** Result of `patch/applyBatch`: how the patches ended. */
export const BatchSummarySchema = z.object({
  total: z.number().int().nonnegative(),
  applied: z.number().int().nonnegative(),
  rejected: z.number().int().nonnegative(),
  partial: z.number().int().nonnegative(),
  dryRun: z.number().int().nonnegative(),
  /** Patches re-planned because a file changed on disk under them (`receipt.replanned`). */
  replanned: z.number().int().nonnegative(),
  /** Every receipt, in index order — only when no `partialResultToken` was given. */
  receipts: z.array(ReceiptSchema).max(MAX_BATCH_PATCHES).optional(),
});

export type BatchPatch = z.infer<typeof BatchPatchSchema>;
export type ApplyBatchParams = z.infer<typeof ApplyBatchParamsSchema>;
export type BatchReceipt = z.infer<typeof BatchReceiptSchema>;
export type BatchSummary = z.infer<typeof BatchSummarySchema>;

/**
 * `patch/applyBatch`: applies many independent patches to one workspace; the result is a
 * {@link BatchSummarySchema BatchSummary}. Cancelling the request (or disconnecting) stops
 * patches not yet committed; patches already committed stay.
 */
export const ApplyBatchRequest = defineRequest('patch/applyBatch', ApplyBatchParamsSchema, BatchSummarySchema);

/** The receipt stream of `patch/applyBatch`, for `connection.sendProgress` / `onProgress`. */
export const BatchReceiptProgress = new ProgressType<{ index: number; receipt: Receipt }>();

