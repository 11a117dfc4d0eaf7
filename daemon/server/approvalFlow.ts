/**
 * The road to disk that a patch (`applyPatch.ts`) and an undo (`undoPatch.ts`) share once each
 * knows its paths and how to plan and commit itself (a `Change`):
 *
 * - a path the session's approval policy denies refuses it, dry run too (`deniedFailure`);
 * - a change that needs consent is planned without locks, asked about, then locked and planned
 *   again, and committed only when that plan makes the change approved — else asked again; no
 *   lock is held while the client decides (`commitChange`);
 * - any other is locked, planned and committed.
 *
 * A commit that finds a file changed under its plan (`stale_file`, nothing written) is retried:
 * an approved change goes round again under fresh locks, an unasked one is planned again once on
 * the new bytes — unless the caller pinned the pre-images, then it is `stale_file` naming the
 * file's current sha256.
 */
import type { ApproveParams, FileReceipt, Receipt } from '../../protocol/index.ts';
import type { EngineError, FileSnapshot, PlannedFile } from '../engine/index.ts';
import { LockAbortedError } from '../workspace/locks.ts';
import { sha256Hex, type CommitOutcome, type LockLease, type Workspace } from '../workspace/workspace.ts';
import { performance } from 'node:perf_hooks';
import { approvedChange, declinedError, deniedError, keptChangingError, MAX_APPROVAL_ROUNDS, type ApprovalGate } from './approval.ts';
import { RequestCancelledError } from './failures.ts';
import type { Logger } from './logger.ts';
import type { Checked } from './preconditions.ts';
import { assignCreatedDirs, failureOf, toFileReceipt, type PatchFailure, type ReceiptDraft } from './receipts.ts';
import type { Turn } from './turns.ts';

export type Snapshots = ReadonlyMap<string, FileSnapshot>;

/** A plan and the snapshots it was made on. */
export interface PlannedChange {
  readonly plan: { readonly files: readonly PlannedFile[] };
  readonly snapshots: Snapshots;
}

export interface ChangeContext {
  readonly workspace: Workspace;
  /** Aborted when the client cancels or disconnects; checked before anything is written. */
  readonly signal: AbortSignal;
  /** When set, the change queues for its locks only after `turn.ready` (batch items lock in index order). */
  readonly turn?: Turn | undefined;
  /** Debug logs: which paths were locked, and how long it waited for them. */
  readonly log?: Logger | undefined;
}

/** What a patch and an undo do their own way on the road to disk. */
export interface Change<P extends PlannedChange> {
  readonly what: 'patch' | 'undo';
  readonly context: ChangeContext;
  readonly draft: ReceiptDraft;
  /** Every path to lock and read. */
  readonly paths: readonly string[];
  /** What `patch/approve` says besides the transaction and its files. */
  readonly request: Pick<ApproveParams, 'workspaceId' | 'undoOf'>;
  /** Every plan reads the paths from disk rather than through the content cache. */
  readonly readsFresh: boolean;
  /** The caller pinned pre-images (preconditions): a stale commit is reported, never planned again unasked. */
  readonly pinned: boolean;
  planOn(snapshots: Snapshots): Promise<Checked<P>>;
  /** Writes a plan made under the change's locks. */
  commit(planned: P): Promise<CommitOutcome>;
}

/** Refused by a deny glob of the policy (or by checking them costing too much); undefined: not refused. */
export function deniedFailure(gate: ApprovalGate | undefined, paths: readonly string[]): PatchFailure | undefined {
  const denied = gate?.deniedPath(paths);
  if (denied === undefined) return undefined;
  if (!denied.ok) return failureOf(denied.error);
  return denied.value === undefined ? undefined : failureOf(deniedError(denied.value));
}

/** A dry run: planned without locks, nobody asked, nothing written. */
export async function previewChange<P extends PlannedChange>(change: Change<P>): Promise<Receipt> {
  const planned = await change.draft.timed('planMs', () => planOnDisk(change, { locked: false }));
  if (!planned.ok) return change.draft.rejected(planned.failure);
  return change.draft.finish('dry_run', fileReceipts(planned.value.plan.files, planned.value.snapshots));
}

/** Commits the change, asking the client first when the policy says so. */
export async function commitChange<P extends PlannedChange>(change: Change<P>, gate: ApprovalGate | undefined): Promise<Receipt> {
  const asking = gate?.needsApproval(change.paths);
  if (asking?.ok === false) return change.draft.rejected(failureOf(asking.error));
  if (gate !== undefined && asking?.value === true) return commitApproved(change, gate);
  using _lease = await lockPaths(change.context, change.paths);
  // Awaited here, or the lease would be released as the commit starts rather than once it ends.
  return await commitLocked(change);
}

async function commitLocked<P extends PlannedChange>(change: Change<P>): Promise<Receipt> {
  const planned = await change.draft.timed('planMs', () => planOnDisk(change, { locked: true }));
  if (!planned.ok) return change.draft.rejected(planned.failure);
  const outcome = await commitPlanned(change, planned.value);
  return isStale(outcome) ? replanOnce(change, outcome.error) : commitReceipt(change.draft, planned.value, outcome);
}

/** The disk changed under the plan: plan again on the new bytes (unpinned), or report `stale_file`. */
async function replanOnce<P extends PlannedChange>(change: Change<P>, staleError: EngineError): Promise<Receipt> {
  const { context: { workspace }, draft, paths } = change;
  const fresh = await workspace.snapshot(paths, { fresh: true, locked: true });
  if (!fresh.ok) return draft.rejected(failureOf(fresh.error));
  if (change.pinned) return draft.rejected(staleFailure(staleError, fresh.value));
  draft.noteReplanned(staleError.path, change.what);
  const planned = await draft.timed('planMs', () => planChecked(change, fresh.value));
  if (!planned.ok) return draft.rejected(planned.failure);
  const outcome = await commitPlanned(change, planned.value);
  if (!isStale(outcome)) return commitReceipt(draft, planned.value, outcome);
  const now = await workspace.snapshot(paths, { fresh: true, locked: true });
  return draft.rejected(staleFailure(outcome.error, now.ok ? now.value : new Map()));
}

/**
 * A change that needs consent: plan without locks, ask, then lock and plan again — committed when
 * that plan makes the change the client approved, else asked about again. No lock is held while
 * the client decides.
 */
async function commitApproved<P extends PlannedChange>(change: Change<P>, gate: ApprovalGate): Promise<Receipt> {
  const { draft } = change;
  let approved: string | undefined;
  for (let round = 0; round < MAX_APPROVAL_ROUNDS; round++) {
    if (approved === undefined) {
      const planned = await draft.timed('planMs', () => planOnDisk(change, { locked: false }));
      if (!planned.ok) return draft.rejected(planned.failure);
      const files = fileReceipts(planned.value.plan.files, planned.value.snapshots);
      const answer = await gate.ask({ ...change.request, transactionId: draft.transactionId, files }, change.context.signal);
      if (!answer.approved) return draft.rejected(failureOf(declinedError(change.what, answer.reason)));
      approved = approvedChange(planned.value.plan.files);
    }
    using _lease = await lockPaths(change.context, change.paths);
    const planned = await draft.timed('planMs', () => planOnDisk(change, { locked: true }));
    if (!planned.ok) return draft.rejected(planned.failure);
    if (approvedChange(planned.value.plan.files) !== approved) {
      approved = undefined;
      continue;
    }
    const outcome = await commitPlanned(change, planned.value);
    if (!isStale(outcome)) return commitReceipt(draft, planned.value, outcome);
  }
  return draft.rejected(failureOf(keptChangingError(change.what)));
}

async function lockPaths(context: ChangeContext, paths: readonly string[]): Promise<LockLease> {
  await context.turn?.ready;
  const asked = performance.now();
  const pending = context.workspace.lock(paths, context.signal);
  context.turn?.done();
  try {
    const lease = await pending;
    context.log?.debug('locked', { paths: lease.paths, waitedMs: Math.round(performance.now() - asked) });
    return lease;
  } catch (error) {
    throw error instanceof LockAbortedError ? new RequestCancelledError() : error;
  }
}

async function planOnDisk<P extends PlannedChange>(change: Change<P>, { locked }: { readonly locked: boolean }): Promise<Checked<P>> {
  const snapshots = await change.context.workspace.snapshot(change.paths, { fresh: change.readsFresh, locked });
  if (!snapshots.ok) return { ok: false, failure: failureOf(snapshots.error) };
  return planChecked(change, snapshots.value);
}

/** The change planned on `snapshots`; refused, as its commit would be, when it replaces a directory that holds more than it takes away. */
async function planChecked<P extends PlannedChange>(change: Change<P>, snapshots: Snapshots): Promise<Checked<P>> {
  const planned = await change.planOn(snapshots);
  if (!planned.ok) return planned;
  const fits = await change.context.workspace.checkReplacedDirectories(planned.value.plan, snapshots, change.request.undoOf);
  return fits.ok ? planned : { ok: false, failure: failureOf(fits.error) };
}

async function commitPlanned<P extends PlannedChange>(change: Change<P>, planned: P): Promise<CommitOutcome> {
  if (change.context.signal.aborted) throw new RequestCancelledError();
  return change.draft.timed('commitMs', () => change.commit(planned));
}

/** Nothing was written because a file changed under the plan. */
function isStale(outcome: CommitOutcome): outcome is Extract<CommitOutcome, { status: 'rejected' }> {
  return outcome.status === 'rejected' && outcome.error.code === 'stale_file';
}

function staleFailure(error: EngineError, current: Snapshots): PatchFailure {
  const snapshot = error.path === undefined ? undefined : current.get(error.path);
  if (snapshot === undefined) return { error };
  return { error, currentSha256: snapshot.kind === 'file' ? sha256Hex(snapshot.bytes) : null };
}

function commitReceipt(draft: ReceiptDraft, { plan, snapshots }: PlannedChange, outcome: CommitOutcome): Receipt {
  switch (outcome.status) {
    case 'applied':
      return draft.finish('applied', fileReceipts(plan.files, snapshots, outcome.createdDirs));
    case 'rejected':
      return draft.rejected(failureOf(outcome.error));
    case 'partial': {
      const committed = plan.files.filter((file) => outcome.committed.includes(file.path));
      return draft.finish('partial', fileReceipts(committed, snapshots, outcome.createdDirs), failureOf(outcome.error));
    }
  }
}

function fileReceipts(files: readonly PlannedFile[], snapshots: Snapshots, createdDirs: readonly string[] = []): FileReceipt[] {
  const dirs = assignCreatedDirs(files, createdDirs);
  return files.map((file) => toFileReceipt(file, snapshots, dirs.get(file)));
}
