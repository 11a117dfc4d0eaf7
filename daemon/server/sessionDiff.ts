/** `session/diff` and `transaction/list`: the undo records read back as protocol shapes. */
import type { ListTransactionsResult, SessionDiffResult, SessionFile, TransactionSummary } from '../../protocol/index.ts';
import { formatGitDiff, type GitSide } from '../engine/gitDiff.ts';
import type { NetChange, PathState, TransactionEntry, Workspace } from '../workspace/workspace.ts';
import { FileRequestError, UnknownTransactionError } from './failures.ts';

/** The net diff since `since` (exclusive), or since this daemon first opened the root; `null`: every retained transaction. */
export async function sessionDiff(workspace: Workspace, since: string | null | undefined): Promise<SessionDiffResult> {
  const changes = await workspace.sessionChanges(since);
  if (changes === undefined) throw new UnknownTransactionError(since ?? '');
  if (!changes.ok) throw new FileRequestError(changes.error);
  const diff = formatGitDiff(changes.value.map(({ path, fromPath, before, after }) => ({
    before: sideOf(fromPath ?? path, before),
    after: sideOf(path, after),
  })));
  return { diff, files: changes.value.map(sessionFileOf) };
}

export async function listTransactions(workspace: Workspace, limit: number): Promise<ListTransactionsResult> {
  return { transactions: (await workspace.transactions(limit)).map(summaryOf) };
}

function sideOf(path: string, state: PathState): GitSide | null {
  return state === null ? null : { path, text: Buffer.from(state.bytes).toString('utf8'), mode: state.owner.mode };
}

function sessionFileOf({ path, fromPath, before, after }: NetChange): SessionFile {
  if (fromPath !== undefined) return { path, fromPath, op: 'rename' };
  return { path, op: before === null ? 'add' : after === null ? 'delete' : 'update' };
}

function summaryOf({ transactionId, at, status, format, undoOf, files }: TransactionEntry): TransactionSummary {
  const summary: TransactionSummary = { transactionId, at: new Date(at).toISOString(), status, format, files: files.map((file) => ({ ...file })) };
  if (undoOf !== undefined) summary.undoOf = undoOf;
  return summary;
}
