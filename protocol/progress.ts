/**
 * `$/progress`, declared once: the stream of `patch/apply` (a {@link FileReceiptSchema FileReceipt}
 * per file) and of `patch/applyBatch` (a {@link BatchReceiptSchema BatchReceipt} per patch), told
 * apart by the request whose `partialResultToken` is `token`.
 */
import { z } from 'zod';
import { BatchReceiptSchema } from './batch.ts';
import { defineNotification } from './define.ts';
import { ProgressTokenSchema } from './patch.ts';
import { FileReceiptSchema } from './receipt.ts';

/** Params of a `$/progress` notification. */
export const ProgressParamsSchema = z.object({
  token: ProgressTokenSchema,
  value: z.union([FileReceiptSchema, BatchReceiptSchema]),
});

export type ProgressParams = z.infer<typeof ProgressParamsSchema>;

/** `$/progress`: one receipt of a running `patch/apply` or `patch/applyBatch`. */
export const ProgressNotification = defineNotification('$/progress', ProgressParamsSchema);
