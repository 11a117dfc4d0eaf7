/**
 * The `patch/apply` flow: parse (pool) → lock every path the patch names → snapshot → check
 * the caller's pre-images → plan (pool) → commit → receipt. The commit verifies under the
 * same locks that the disk still holds the snapshot; when a change made outside patchd got
 * in between, a patch without preconditions is planned again on the new bytes, once, and one
 * with preconditions is `stale_file`. A dry run takes no locks and writes nothing.
 *
 * Every way a patch can fail ends in a `rejected` receipt; only cancellation (including the
 * client going away) and internal faults throw — and the locks are released either way.
 */
import type { ApplyParams, FileReceipt, Receipt } from '../../protocol/index.ts';
import type { EngineError, FileSnapshot, ParsedPatch, PatchInput, Plan, PlannedFile } from '../engine/index.ts';
import { LockAbortedError } from '../workspace/locks.ts';
import { sha256Hex, type CommitOutcome, type LockLease, type Workspace } from '../workspace/workspace.ts';
import { performance } from 'node:perf_hooks';
import type { Turn } from './turns.ts';
import { approvedChange, declinedError, deniedError, keptChangingError, MAX_APPROVAL_ROUNDS, type ApprovalGate } from './approval.ts';
import { RequestCancelledError } from './failures.ts';
import type { Logger } from './logger.ts';
import { parseForWorkspace, type EngineRunner } from './parsePatch.ts';
import { checkExpectations, collectExpectations, type Checked, type Expectations } from './preconditions.ts';
import { assignCreatedDirs, failureOf, ReceiptDraft, toFileReceipt, type PatchFailure } from './receipts.ts';

export interface ApplyContext {
  readonly workspace: Workspace;
  readonly pool: EngineRunner;
  /** Aborted when the client cancels or disconnects; checked before anything is written. */
  readonly signal: AbortSignal;
  /** When set, the patch queues for its locks only after `turn.ready` (batch items lock in index order). */
  readonly turn?: Turn | undefined;
  /** Debug logs: which paths a patch locked, and how long it waited for them. */
  readonly log?: Logger | undefined;
  /** The sending client's approval policy on this workspace (see `approval.ts`); none: never ask. */
  readonly approval?: ApprovalGate | undefined;
}

type Snapshots = ReadonlyMap<string, FileSnapshot>;

/** A parsed patch and what it needs: its preconditions and every path to lock and read. */
interface Job {
  readonly params: ApplyParams;
  readonly parsed: ParsedPatch;
  readonly expected: Expectations;
  readonly paths: readonly string[];
}

interface Planned {
  readonly plan: Plan;
  readonly snapshots: Snapshots;
}

export async function applyPatch(params: ApplyParams, context: ApplyContext): Promise<Receipt> {
  const draft = new ReceiptDraft(params.atomic ?? true, params.format ?? 'auto');
  try {
    const job = await prepare(params, context, draft);
    if (!job.ok) return draft.rejected(job.failure);
    const gate = context.approval;
    const denied = gate?.deniedPath(job.value.paths);
    if (denied?.ok === false) return draft.rejected(failureOf(denied.error));
    if (denied?.value !== undefined) return draft.rejected(failureOf(deniedError(denied.value)));
    if (params.dryRun === true) {
      context.turn?.done();
      return await dryRun(job.value, context, draft);
    }
    const asking = gate?.needsApproval(job.value.paths);
    if (asking?.ok === false) return draft.rejected(failureOf(asking.error));
    if (gate !== undefined && asking?.value === true) return await commitApproved(job.value, context, draft, gate);
    using _lease = await lockPaths(job.value.paths, context);
    return await commitLocked(job.value, context, draft);
  } finally {
    context.turn?.done();
  }
}

async function prepare(params: ApplyParams, context: ApplyContext, draft: ReceiptDraft): Promise<Checked<Job>> {
  const parsed = await draft.timed('parseMs', () => parseForWorkspace(patchInput(params), context));
  if (!parsed.ok) return { ok: false, failure: failureOf(parsed.error) };
  const { dialect, diagnostics, ignoredMetadata } = parsed.value.parsed;
  draft.noteParsed({ format: dialect, diagnostics, ignoredMetadata });
  const expected = collectExpectations(params);
  if (!expected.ok) return expected;
  const paths = [...new Set([...parsed.value.paths, ...expected.value.keys()])];
  return { ok: true, value: { params, parsed: parsed.value.parsed, expected: expected.value, paths } };
}

function patchInput({ patch, operations, edits, format, strip, reverse }: ApplyParams): PatchInput {
  return { patch, operations, edits, format, strip, reverse };
}

async function lockPaths(paths: readonly string[], context: ApplyContext): Promise<LockLease> {
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

async function dryRun(job: Job, context: ApplyContext, draft: ReceiptDraft): Promise<Receipt> {
  const planned = await draft.timed('planMs', () => snapshotAndPlan(job, context, { locked: false }));
  if (!planned.ok) return draft.rejected(planned.failure);
  return draft.finish('dry_run', fileReceipts(planned.value.plan.files, planned.value.snapshots));
}

async function commitLocked(job: Job, context: ApplyContext, draft: ReceiptDraft): Promise<Receipt> {
  const planned = await draft.timed('planMs', () => snapshotAndPlan(job, context, { locked: true }));
  if (!planned.ok) return draft.rejected(planned.failure);
  const outcome = await commit(job, planned.value, context, draft);
  return isStale(outcome) ? replanOnce(job, context, draft, outcome.error) : commitReceipt(draft, planned.value, outcome);
}

/** The disk changed under the plan: plan again on the new bytes (no preconditions), or report `stale_file`. */
async function replanOnce(job: Job, context: ApplyContext, draft: ReceiptDraft, staleError: EngineError): Promise<Receipt> {
  const fresh = await context.workspace.snapshot(job.paths, { fresh: true, locked: true });
  if (!fresh.ok) return draft.rejected(failureOf(fresh.error));
  if (job.expected.size > 0) return draft.rejected(staleFailure(staleError, fresh.value));
  draft.noteReplanned(staleError.path);
  const planned = await draft.timed('planMs', () => planOn(job, fresh.value, context));
  if (!planned.ok) return draft.rejected(planned.failure);
  const outcome = await commit(job, planned.value, context, draft);
  if (!isStale(outcome)) return commitReceipt(draft, planned.value, outcome);
  const now = await context.workspace.snapshot(job.paths, { fresh: true, locked: true });
  return draft.rejected(staleFailure(outcome.error, now.ok ? now.value : new Map()));
}

/**
 * A patch that needs consent: plan without locks, ask, then lock and plan again — committed when
 * that plan makes the change the client approved, else asked about again. No lock is held while
 * the client decides.
 */
async function commitApproved(job: Job, context: ApplyContext, draft: ReceiptDraft, gate: ApprovalGate): Promise<Receipt> {
  let approved: string | undefined;
  for (let round = 0; round < MAX_APPROVAL_ROUNDS; round++) {
    if (approved === undefined) {
      const planned = await draft.timed('planMs', () => snapshotAndPlan(job, context, { locked: false }));
      if (!planned.ok) return draft.rejected(planned.failure);
      const files = fileReceipts(planned.value.plan.files, planned.value.snapshots);
      const answer = await gate.ask({ workspaceId: job.params.workspaceId, transactionId: draft.transactionId, files }, context.signal);
      if (!answer.approved) return draft.rejected(failureOf(declinedError('patch', answer.reason)));
      approved = approvedChange(planned.value.plan.files);
    }
    using _lease = await lockPaths(job.paths, context);
    const planned = await draft.timed('planMs', () => snapshotAndPlan(job, context, { locked: true }));
    if (!planned.ok) return draft.rejected(planned.failure);
    if (approvedChange(planned.value.plan.files) !== approved) {
      approved = undefined;
      continue;
    }
    const outcome = await commit(job, planned.value, context, draft);
    if (!isStale(outcome)) return commitReceipt(draft, planned.value, outcome);
  }
  return draft.rejected(failureOf(keptChangingError('patch')));
}

async function snapshotAndPlan(job: Job, context: ApplyContext, options: { readonly locked: boolean }): Promise<Checked<Planned>> {
  const snapshots = await context.workspace.snapshot(job.paths, options);
  if (!snapshots.ok) return { ok: false, failure: failureOf(snapshots.error) };
  return planOn(job, snapshots.value, context);
}

async function planOn(job: Job, snapshots: Snapshots, context: ApplyContext): Promise<Checked<Planned>> {
  const holds = checkExpectations(job.expected, snapshots);
  if (!holds.ok) return holds;
  const plan = await context.pool.plan(job.parsed, snapshots, { fuzz: job.params.fuzz }, context.signal);
  return plan.ok ? { ok: true, value: { plan: plan.value, snapshots } } : { ok: false, failure: failureOf(plan.error) };
}

async function commit(job: Job, planned: Planned, context: ApplyContext, draft: ReceiptDraft): Promise<CommitOutcome> {
  if (context.signal.aborted) throw new RequestCancelledError();
  const options = { atomic: job.params.atomic ?? true, snapshots: planned.snapshots, transactionId: draft.transactionId };
  return draft.timed('commitMs', () => context.workspace.commit(planned.plan, options));
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

function commitReceipt(draft: ReceiptDraft, { plan, snapshots }: Planned, outcome: CommitOutcome): Receipt {
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
