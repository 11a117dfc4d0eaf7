/**
 * The `patch/undo` flow: load the transaction's records → lock every path they touch →
 * snapshot → check each path still holds what the transaction left → commit the pre-images as
 * a new transaction (`format: "undo"`) → receipt. An undo writes files as a patch does, so from
 * the plan on it takes the road a patch takes (`approvalFlow.ts`): the session's approval policy
 * refuses or asks about it the same way, and a commit that finds a file changed under it is
 * tried again as a patch's is — planning again checks anew that every path holds what the
 * transaction left. A dry run takes no locks, asks nobody and writes nothing.
 */
import type { Receipt, UndoParams } from '../../protocol/index.ts';
import { engineError } from '../engine/index.ts';
import { planUndo, pathsOf, type UndoPlan } from '../workspace/undo.ts';
import { sha256Hex, type CommitOutcome, type LoadedRecord, type Workspace } from '../workspace/workspace.ts';
import type { ApprovalGate } from './approval.ts';
import { commitChange, deniedFailure, previewChange, type Change, type Snapshots } from './approvalFlow.ts';
import type { Checked } from './preconditions.ts';
import { failureOf, ReceiptDraft } from './receipts.ts';

export interface UndoContext {
  readonly workspace: Workspace;
  /** Aborted when the client cancels or disconnects; checked before anything is written. */
  readonly signal: AbortSignal;
  /** The sending client's approval policy on this workspace (see `approval.ts`); none: never ask. */
  readonly approval?: ApprovalGate | undefined;
}

interface Planned {
  readonly plan: UndoPlan;
  readonly snapshots: Snapshots;
}

export async function undoTransaction(params: UndoParams, context: UndoContext): Promise<Receipt> {
  const draft = new ReceiptDraft(true, 'undo');
  const loaded = await draft.timed('parseMs', () => context.workspace.recordsOf(params.transactionId));
  // A damaged record (cut short, not a record, a pre-image that fails its sha256): io_error naming it, nothing written.
  if (!loaded.ok) return draft.rejected(failureOf(loaded.error));
  const records = loaded.value;
  if (records.length === 0) {
    const message = `No committed transaction of this workspace has the id ${JSON.stringify(params.transactionId)}: it is past retention, of another `
      + 'workspace, or it changed no file (a patch that writes nothing, such as one of mode lines only, leaves nothing to undo).';
    return draft.rejected(failureOf(engineError('unknown_transaction', message)));
  }
  const paths = pathsOf(records);
  const denied = deniedFailure(context.approval, paths);
  if (denied !== undefined) return draft.rejected(denied);
  const change = undoChange(params, records, paths, context, draft);
  if (params.dryRun === true) return previewChange(change);
  return commitChange(change, context.approval);
}

function undoChange(params: UndoParams, records: readonly LoadedRecord[], paths: readonly string[], context: UndoContext, draft: ReceiptDraft): Change<Planned> {
  return {
    what: 'undo',
    context,
    draft,
    paths,
    request: { workspaceId: params.workspaceId, undoOf: params.transactionId },
    readsFresh: true,
    pinned: false,
    planOn: async (snapshots) => planOn(records, snapshots),
    commit: (planned) => commitUndo(context.workspace, params.transactionId, draft.transactionId, planned),
  };
}

function planOn(records: readonly LoadedRecord[], snapshots: Snapshots): Checked<Planned> {
  const plan = planUndo(records, snapshots);
  if (plan.ok) return { ok: true, value: { plan: plan.value, snapshots } };
  const now = plan.error.path === undefined ? undefined : snapshots.get(plan.error.path);
  if (now === undefined) return { ok: false, failure: failureOf(plan.error) };
  return { ok: false, failure: { error: plan.error, currentSha256: now.kind === 'file' ? sha256Hex(now.bytes) : null } };
}

function commitUndo(workspace: Workspace, undoOf: string, transactionId: string, { plan, snapshots }: Planned): Promise<CommitOutcome> {
  const undoPlan = { dialect: 'unified' as const, files: plan.files, diagnostics: [], ignoredMetadata: [] };
  return workspace.commit(undoPlan, { atomic: true, snapshots, transactionId, format: 'undo', undoOf, owners: plan.owners, directoryOwners: plan.directoryOwners });
}
