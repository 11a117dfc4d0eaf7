/**
 * The `patch/apply` flow: parse (pool) → snapshot the named files → check the caller's
 * pre-images → plan (pool) → commit unless dry run → receipt. Every way a patch can fail ends
 * in a `rejected` receipt; only cancellation and internal faults throw.
 */
import type { ApplyParams, FileReceipt, Receipt } from '../../protocol/index.ts';
import type { FileSnapshot, ParsedPatch, PatchInput, Plan, PlannedFile } from '../engine/index.ts';
import type { EnginePool } from '../pool/pool.ts';
import type { CommitOutcome, Workspace } from '../workspace/workspace.ts';
import { RequestCancelledError } from './failures.ts';
import { checkExpectations, collectExpectations, type Checked } from './preconditions.ts';
import { assignCreatedDirs, failureOf, ReceiptDraft, toFileReceipt } from './receipts.ts';

export interface ApplyContext {
  readonly workspace: Workspace;
  readonly pool: EnginePool;
  /** Aborted when the client cancels; checked before anything is written. */
  readonly signal: AbortSignal;
}

type Snapshots = ReadonlyMap<string, FileSnapshot>;

interface Prepared {
  readonly parsed: ParsedPatch;
  readonly snapshots: Snapshots;
}

export async function applyPatch(params: ApplyParams, context: ApplyContext): Promise<Receipt> {
  const draft = new ReceiptDraft(params.atomic ?? true, params.format ?? 'auto');
  const prepared = await prepare(params, context, draft);
  if (!prepared.ok) return draft.rejected(prepared.failure);
  const { parsed, snapshots } = prepared.value;
  const plan = await draft.timed('planMs', () => context.pool.plan(parsed, snapshots, { fuzz: params.fuzz }, context.signal));
  if (!plan.ok) return draft.rejected(failureOf(plan.error));
  if (params.dryRun === true) return draft.finish('dry_run', fileReceipts(plan.value.files, snapshots));
  if (context.signal.aborted) throw new RequestCancelledError();
  const atomic = params.atomic ?? true;
  const { transactionId } = draft;
  const outcome = await draft.timed('commitMs', () => context.workspace.commit(plan.value, { atomic, snapshots, transactionId }));
  return commitReceipt(draft, plan.value, snapshots, outcome);
}

/** Parses the patch and reads what it names, checking the caller's pre-images. */
async function prepare(params: ApplyParams, context: ApplyContext, draft: ReceiptDraft): Promise<Checked<Prepared>> {
  const parsed = await draft.timed('parseMs', () => context.pool.parse(patchInput(params), context.signal));
  if (!parsed.ok) return { ok: false, failure: failureOf(parsed.error) };
  const { dialect, diagnostics, ignoredMetadata } = parsed.value.parsed;
  draft.noteParsed({ format: dialect, diagnostics, ignoredMetadata });
  return draft.timed('planMs', async () => {
    const expected = await collectExpectations(params, context.workspace);
    if (!expected.ok) return expected;
    const snapshots = await context.workspace.snapshot([...new Set([...parsed.value.paths, ...expected.value.keys()])]);
    if (!snapshots.ok) return { ok: false, failure: failureOf(snapshots.error) };
    const fresh = checkExpectations(expected.value, snapshots.value);
    return fresh.ok ? { ok: true, value: { parsed: parsed.value.parsed, snapshots: snapshots.value } } : fresh;
  });
}

function patchInput({ patch, operations, edits, format }: ApplyParams): PatchInput {
  return { patch, operations, edits, format };
}

function commitReceipt(draft: ReceiptDraft, plan: Plan, snapshots: Snapshots, outcome: CommitOutcome): Receipt {
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
