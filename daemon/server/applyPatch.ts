/**
 * The `patch/apply` flow: parse (pool) → lock every path the patch names → snapshot → check
 * the caller's pre-images → plan (pool) → commit → receipt. The commit verifies under the
 * same locks that the disk still holds the snapshot; when a change made outside patchd got
 * in between, a patch without preconditions is planned again on the new bytes, once, and one
 * with preconditions is `stale_file`. A dry run takes no locks and writes nothing. From the
 * plan on — approval included — the road to disk is the one an undo takes (`approvalFlow.ts`).
 *
 * Every way a patch can fail ends in a `rejected` receipt; only cancellation (including the
 * client going away) and internal faults throw — and the locks are released either way.
 */
import type { ApplyParams, Receipt } from '../../protocol/index.ts';
import type { ParsedPatch, PatchInput, Plan } from '../engine/index.ts';
import type { Workspace } from '../workspace/workspace.ts';
import type { Turn } from './turns.ts';
import type { ApprovalGate } from './approval.ts';
import { commitChange, deniedFailure, previewChange, type Change, type Snapshots } from './approvalFlow.ts';
import type { Logger } from './logger.ts';
import { parseForWorkspace, type EngineRunner } from './parsePatch.ts';
import { checkExpectations, collectExpectations, type Checked, type Expectations } from './preconditions.ts';
import { failureOf, ReceiptDraft } from './receipts.ts';

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
    const denied = deniedFailure(context.approval, job.value.paths);
    if (denied !== undefined) return draft.rejected(denied);
    const change = patchChange(job.value, context, draft);
    if (params.dryRun === true) {
      context.turn?.done();
      return await previewChange(change);
    }
    return await commitChange(change, context.approval);
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

function patchChange(job: Job, context: ApplyContext, draft: ReceiptDraft): Change<Planned> {
  return {
    what: 'patch',
    context,
    draft,
    paths: job.paths,
    request: { workspaceId: job.params.workspaceId },
    readsFresh: false,
    pinned: job.expected.size > 0,
    planOn: (snapshots) => planOn(job, snapshots, context),
    commit: ({ plan, snapshots }) => context.workspace.commit(plan, { atomic: job.params.atomic ?? true, snapshots, transactionId: draft.transactionId }),
  };
}

async function planOn(job: Job, snapshots: Snapshots, context: ApplyContext): Promise<Checked<Planned>> {
  const holds = checkExpectations(job.expected, snapshots);
  if (!holds.ok) return holds;
  const plan = await context.pool.plan(job.parsed, snapshots, { fuzz: job.params.fuzz }, context.signal);
  return plan.ok ? { ok: true, value: { plan: plan.value, snapshots } } : { ok: false, failure: failureOf(plan.error) };
}
