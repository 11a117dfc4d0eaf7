/**
 * The `patch/applyBatch` flow: every patch runs through the `patch/apply` flow on its own,
 * up to `concurrency` at once, started in index order. Items queue for their locks in index
 * order too (see `turns.ts`), so items sharing a file apply in index order. Each receipt is
 * handed to `onReceipt` as its patch finishes; the summary counts how they ended.
 *
 * Cancellation (or the client going away) stops items not yet started and aborts the ones in
 * flight before they commit; every lock is released as each item unwinds.
 */
import { setMaxListeners } from 'node:events';
import { DEFAULT_BATCH_CONCURRENCY } from '../../protocol/constants.ts';
import type { ApplyBatchParams, BatchPatch, BatchSummary, Receipt } from '../../protocol/index.ts';
import { engineError } from '../engine/index.ts';
import { applyPatch, type ApplyContext } from './applyPatch.ts';
import { RequestCancelledError } from './failures.ts';
import { describeError, type Logger } from './logger.ts';
import { failureOf, ReceiptDraft } from './receipts.ts';
import { createTurns, type Turn } from './turns.ts';

export interface BatchContext extends Omit<ApplyContext, 'turn'> {
  readonly log: Logger;
  /** Called with each receipt as its patch finishes (completion order); awaited before the next item starts. */
  readonly onReceipt: (index: number, receipt: Receipt) => void | Promise<void>;
}

export async function applyBatch(params: ApplyBatchParams, context: BatchContext): Promise<BatchSummary> {
  const { patches } = params;
  // The items share the request's signal, each listening while it waits (for its locks, say): as many at once as run concurrently, each removed as its wait ends.
  setMaxListeners(0, context.signal);
  const turns = createTurns(patches.length);
  const receipts: Receipt[] = [];
  let next = 0;
  const runItems = async (): Promise<void> => {
    for (let index = next++; index < patches.length && !context.signal.aborted; index = next++) {
      const receipt = await applyItem(params.workspaceId, patches[index]!, turns[index]!, context);
      receipts[index] = receipt;
      await context.onReceipt(index, receipt);
    }
  };
  const concurrency = Math.min(params.concurrency ?? DEFAULT_BATCH_CONCURRENCY, patches.length);
  const settled = await Promise.allSettled(Array.from({ length: concurrency }, runItems));
  if (context.signal.aborted) throw new RequestCancelledError();
  const failure = settled.find((result) => result.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
  return summarize(receipts, params.partialResultToken === undefined);
}

/**
 * One patch's receipt; an internal fault becomes that patch's `internal_error` receipt, so the
 * rest of the batch goes on. Cancellation, or the workspace closing under the batch, ends it.
 */
async function applyItem(workspaceId: string, patch: BatchPatch, turn: Turn, context: BatchContext): Promise<Receipt> {
  try {
    return await applyPatch({ ...patch, workspaceId }, { ...context, turn });
  } catch (error) {
    if (context.signal.aborted || context.workspace.closed) throw error;
    context.log.error('batch item failed', describeError(error));
    const draft = new ReceiptDraft(patch.atomic ?? true, patch.format ?? 'auto');
    return draft.rejected(failureOf(engineError('internal_error', 'patchd failed on this patch; see the daemon log.')));
  }
}

function summarize(receipts: readonly Receipt[], withReceipts: boolean): BatchSummary {
  const count = (status: Receipt['status']) => receipts.filter((receipt) => receipt.status === status).length;
  const summary: BatchSummary = {
    total: receipts.length,
    applied: count('applied'),
    rejected: count('rejected'),
    partial: count('partial'),
    dryRun: count('dry_run'),
    replanned: receipts.filter((receipt) => receipt.replanned === true).length,
  };
  if (withReceipts) summary.receipts = [...receipts];
  return summary;
}
