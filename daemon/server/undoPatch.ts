/**
 * The `patch/undo` flow: load the transaction's records → lock every path they touch →
 * snapshot → check each path still holds what the transaction left → commit the pre-images as
 * a new transaction (`format: "undo"`) → receipt. A dry run takes no locks and writes nothing.
 */
import type { Receipt, UndoParams } from '../../protocol/index.ts';
import { engineError, type FileSnapshot } from '../engine/index.ts';
import { LockAbortedError } from '../workspace/locks.ts';
import { planUndo, pathsOf, type UndoPlan } from '../workspace/undo.ts';
import { sha256Hex, type CommitOutcome, type LoadedRecord, type Workspace } from '../workspace/workspace.ts';
import { RequestCancelledError } from './failures.ts';
import { assignCreatedDirs, failureOf, ReceiptDraft, toFileReceipt, type PatchFailure } from './receipts.ts';

export interface UndoContext {
  readonly workspace: Workspace;
  /** Aborted when the client cancels or disconnects; checked before anything is written. */
  readonly signal: AbortSignal;
}

type Snapshots = ReadonlyMap<string, FileSnapshot>;

export async function undoTransaction({ transactionId, dryRun }: UndoParams, { workspace, signal }: UndoContext): Promise<Receipt> {
  const draft = new ReceiptDraft(true, 'undo');
  const records = await draft.timed('parseMs', () => workspace.recordsOf(transactionId));
  if (records.length === 0) {
    const message = `No committed transaction of this workspace has the id ${JSON.stringify(transactionId)}: it is past retention, of another `
      + 'workspace, or it changed no file (a patch that writes nothing, such as one of mode lines only, leaves nothing to undo); '
      + 'or one of its undo records can no longer be read whole, and undoing the rest would undo part of it.';
    return draft.rejected(failureOf(engineError('unknown_transaction', message)));
  }
  const paths = pathsOf(records);
  if (dryRun === true) {
    const planned = await draft.timed('planMs', () => planOnDisk(workspace, records, paths, false));
    return 'failure' in planned ? draft.rejected(planned.failure) : draft.finish('dry_run', fileReceipts(planned.plan, planned.snapshots));
  }
  using _lease = await lock(workspace, paths, signal);
  const planned = await draft.timed('planMs', () => planOnDisk(workspace, records, paths, true));
  if ('failure' in planned) return draft.rejected(planned.failure);
  if (signal.aborted) throw new RequestCancelledError();
  const outcome = await draft.timed('commitMs', () => commitUndo(workspace, transactionId, draft.transactionId, planned));
  if (outcome.status === 'rejected') return draft.rejected(failureOf(outcome.error));
  return draft.finish('applied', fileReceipts(planned.plan, planned.snapshots, outcome.createdDirs));
}

interface Planned {
  readonly plan: UndoPlan;
  readonly snapshots: Snapshots;
}

async function planOnDisk(
  workspace: Workspace, records: readonly LoadedRecord[], paths: readonly string[], locked: boolean,
): Promise<Planned | { readonly failure: PatchFailure }> {
  const snapshots = await workspace.snapshot(paths, { fresh: true, locked });
  if (!snapshots.ok) return { failure: failureOf(snapshots.error) };
  const plan = planUndo(records, snapshots.value);
  if (plan.ok) return { plan: plan.value, snapshots: snapshots.value };
  const now = plan.error.path === undefined ? undefined : snapshots.value.get(plan.error.path);
  if (now === undefined) return { failure: failureOf(plan.error) };
  return { failure: { error: plan.error, currentSha256: now.kind === 'file' ? sha256Hex(now.bytes) : null } };
}

async function lock(workspace: Workspace, paths: readonly string[], signal: AbortSignal) {
  try {
    return await workspace.lock(paths, signal);
  } catch (error) {
    throw error instanceof LockAbortedError ? new RequestCancelledError() : error;
  }
}

function commitUndo(workspace: Workspace, undoOf: string, transactionId: string, { plan, snapshots }: Planned): Promise<CommitOutcome> {
  const undoPlan = { dialect: 'unified' as const, files: plan.files, diagnostics: [], ignoredMetadata: [] };
  return workspace.commit(undoPlan, { atomic: true, snapshots, transactionId, format: 'undo', undoOf, owners: plan.owners });
}

function fileReceipts(plan: UndoPlan, snapshots: Snapshots, createdDirs: readonly string[] = []) {
  const dirs = assignCreatedDirs(plan.files, createdDirs);
  return plan.files.map((file) => toFileReceipt(file, snapshots, dirs.get(file)));
}
