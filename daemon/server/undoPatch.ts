/**
 * The `patch/undo` flow: load the transaction's records → refuse it if the session's approval
 * policy denies one of their paths → lock every path they touch → snapshot → check each path
 * still holds what the transaction left → commit the pre-images as a new transaction
 * (`format: "undo"`) → receipt. An undo writes files as a patch does, so a policy that asks
 * about them asks about the undo the same way (`applyPatch.ts`): planned without locks, asked,
 * then locked, planned again and committed only if that is the change approved. A dry run takes
 * no locks, asks nobody and writes nothing.
 */
import type { Receipt, UndoParams } from '../../protocol/index.ts';
import { engineError, type FileSnapshot } from '../engine/index.ts';
import { LockAbortedError } from '../workspace/locks.ts';
import { planUndo, pathsOf, type UndoPlan } from '../workspace/undo.ts';
import { sha256Hex, type CommitOutcome, type LoadedRecord, type Workspace } from '../workspace/workspace.ts';
import { approvedChange, declinedError, deniedError, keptChangingError, MAX_APPROVAL_ROUNDS, type ApprovalGate } from './approval.ts';
import { RequestCancelledError } from './failures.ts';
import { assignCreatedDirs, failureOf, ReceiptDraft, toFileReceipt, type PatchFailure } from './receipts.ts';

export interface UndoContext {
  readonly workspace: Workspace;
  /** Aborted when the client cancels or disconnects; checked before anything is written. */
  readonly signal: AbortSignal;
  /** The sending client's approval policy on this workspace (see `approval.ts`); none: never ask. */
  readonly approval?: ApprovalGate | undefined;
}

type Snapshots = ReadonlyMap<string, FileSnapshot>;

/** An undo to commit: the transaction undone, its records, and every path they touch. */
interface UndoJob {
  readonly params: UndoParams;
  readonly records: readonly LoadedRecord[];
  readonly paths: readonly string[];
}

export async function undoTransaction(params: UndoParams, context: UndoContext): Promise<Receipt> {
  const { workspace, signal, approval } = context;
  const draft = new ReceiptDraft(true, 'undo');
  const loaded = await draft.timed('parseMs', () => workspace.recordsOf(params.transactionId));
  // A damaged record (cut short, not a record, a pre-image that fails its sha256): io_error naming it, nothing written.
  if (!loaded.ok) return draft.rejected(failureOf(loaded.error));
  const records = loaded.value;
  if (records.length === 0) {
    const message = `No committed transaction of this workspace has the id ${JSON.stringify(params.transactionId)}: it is past retention, of another `
      + 'workspace, or it changed no file (a patch that writes nothing, such as one of mode lines only, leaves nothing to undo).';
    return draft.rejected(failureOf(engineError('unknown_transaction', message)));
  }
  const job: UndoJob = { params, records, paths: pathsOf(records) };
  const denied = approval?.deniedPath(job.paths);
  if (denied?.ok === false) return draft.rejected(failureOf(denied.error));
  if (denied?.value !== undefined) return draft.rejected(failureOf(deniedError(denied.value)));
  if (params.dryRun === true) {
    const planned = await draft.timed('planMs', () => planOnDisk(workspace, job, false));
    return 'failure' in planned ? draft.rejected(planned.failure) : draft.finish('dry_run', fileReceipts(planned.plan, planned.snapshots));
  }
  const asking = approval?.needsApproval(job.paths);
  if (asking?.ok === false) return draft.rejected(failureOf(asking.error));
  if (approval !== undefined && asking?.value === true) return commitApproved(job, context, draft, approval);
  using _lease = await lock(workspace, job.paths, signal);
  const planned = await draft.timed('planMs', () => planOnDisk(workspace, job, true));
  if ('failure' in planned) return draft.rejected(planned.failure);
  return commitPlanned(job, planned, context, draft);
}

/**
 * An undo that needs consent: plan without locks, ask, then lock and plan again — committed when
 * that plan makes the change the client approved, else asked about again. No lock is held while
 * the client decides; a path changed meanwhile makes the undo `stale_file`, as it would unasked.
 */
async function commitApproved(job: UndoJob, context: UndoContext, draft: ReceiptDraft, gate: ApprovalGate): Promise<Receipt> {
  const { workspace, signal } = context;
  let approved: string | undefined;
  for (let round = 0; round < MAX_APPROVAL_ROUNDS; round++) {
    if (approved === undefined) {
      const planned = await draft.timed('planMs', () => planOnDisk(workspace, job, false));
      if ('failure' in planned) return draft.rejected(planned.failure);
      const files = fileReceipts(planned.plan, planned.snapshots);
      const answer = await gate.ask({ workspaceId: job.params.workspaceId, transactionId: draft.transactionId, files, undoOf: job.params.transactionId }, signal);
      if (!answer.approved) return draft.rejected(failureOf(declinedError('undo', answer.reason)));
      approved = approvedChange(planned.plan.files);
    }
    using _lease = await lock(workspace, job.paths, signal);
    const planned = await draft.timed('planMs', () => planOnDisk(workspace, job, true));
    if ('failure' in planned) return draft.rejected(planned.failure);
    if (approvedChange(planned.plan.files) === approved) return commitPlanned(job, planned, context, draft);
    approved = undefined;
  }
  return draft.rejected(failureOf(keptChangingError('undo')));
}

/** Commits a plan made under the undo's locks. */
async function commitPlanned(job: UndoJob, planned: Planned, { workspace, signal }: UndoContext, draft: ReceiptDraft): Promise<Receipt> {
  if (signal.aborted) throw new RequestCancelledError();
  const outcome = await draft.timed('commitMs', () => commitUndo(workspace, job.params.transactionId, draft.transactionId, planned));
  if (outcome.status === 'rejected') return draft.rejected(failureOf(outcome.error));
  return draft.finish('applied', fileReceipts(planned.plan, planned.snapshots, outcome.createdDirs));
}

interface Planned {
  readonly plan: UndoPlan;
  readonly snapshots: Snapshots;
}

async function planOnDisk(workspace: Workspace, { records, paths }: UndoJob, locked: boolean): Promise<Planned | { readonly failure: PatchFailure }> {
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
