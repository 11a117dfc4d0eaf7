/** `patch/applyBatch` from the client side: the entries a caller may pass, and the receipt stream. */
import {
  ApplyBatchRequest, BatchReceiptProgress, BatchReceiptSchema, PatchOptionsSchema,
  type BatchPatch, type BatchReceipt, type BatchSummary, type PatchOptions,
} from '../protocol/index.ts';
import { ProtocolError } from './errors.ts';
import type { CallOptions, RpcChannel } from './rpc.ts';
import { streamOf } from './stream.ts';
import type { Change } from './workspace.ts';

/** One patch of {@link Workspace.applyMany}: a {@link Change}, or a patch with its own options (`{patch, expectedSha256ByPath, …}`). */
export type BatchEntry = Change | BatchPatch;

/** Options of {@link Workspace.applyMany}; the per-patch ones are defaults that each entry may override. */
export interface ApplyManyOptions extends CallOptions, PatchOptions {
  /** Patches in flight at once on the daemon (default 8, at most 64). */
  readonly concurrency?: number | undefined;
}

export function streamBatch(
  rpc: RpcChannel, workspaceId: string, entries: readonly BatchEntry[], options: ApplyManyOptions,
): AsyncGenerator<BatchReceipt, BatchSummary, undefined> {
  // Every per-patch option, named once in the protocol (a list spelled out here had lost `reverse`).
  const defaults = Object.fromEntries(Object.keys(PatchOptionsSchema.shape).map((key) => [key, options[key as keyof PatchOptions]])) as PatchOptions;
  const patches = entries.map((entry) => ({ ...defaults, ...toBatchPatch(entry) }));
  return streamOf(async (push: (receipt: BatchReceipt) => void) => {
    let invalid: ProtocolError | undefined;
    const progress = rpc.listenForProgress(BatchReceiptProgress, (value) => {
      const parsed = BatchReceiptSchema.safeParse(value);
      if (parsed.success) push(parsed.data);
      else invalid ??= new ProtocolError('The daemon streamed a batch receipt that does not match the protocol.');
    });
    try {
      const params = { workspaceId, patches, concurrency: options.concurrency, partialResultToken: progress.token };
      const summary = await rpc.request(ApplyBatchRequest, params, options);
      if (invalid !== undefined) throw invalid;
      return summary;
    } finally {
      progress.dispose();
    }
  });
}

function toBatchPatch(entry: BatchEntry): BatchPatch {
  if (typeof entry === 'string') return { patch: entry };
  if (Array.isArray(entry)) return { operations: [...entry] };
  return { ...(entry as BatchPatch) };
}
