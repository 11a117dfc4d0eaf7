/** `session/diff` and `transaction/list`: the undo records read back as protocol shapes. */
import type { ListTransactionsResult, SessionDiffFile, SessionDiffResult, TransactionSummary } from '../../protocol/index.ts';
import { formatGitDiff, isBinary, type GitChange, type GitSide } from '../engine/gitDiff.ts';
import { decodeUtf8Text } from '../workspace/files.ts';
import type { NetChange, PathState, TransactionEntry, Workspace } from '../workspace/workspace.ts';
import { FileRequestError, UnknownTransactionError } from './failures.ts';

/** The net diff since `since` (exclusive), or since this daemon first opened the root; `null`: every retained transaction. */
export async function sessionDiff(workspace: Workspace, since: string | null | undefined): Promise<SessionDiffResult> {
  const changes = await workspace.sessionChanges(since);
  if (changes === undefined) throw new UnknownTransactionError(since ?? '');
  if (!changes.ok) throw new FileRequestError(changes.error);
  const sides = changes.value.map(({ path, fromPath, before, after }): GitChange => ({ before: sideOf(fromPath ?? path, before), after: sideOf(path, after) }));
  return { diff: formatGitDiff(sides), files: changes.value.map((change, index) => sessionFileOf(change, sides[index]!)) };
}

export async function listTransactions(workspace: Workspace, limit: number): Promise<ListTransactionsResult> {
  return { transactions: (await workspace.transactions(limit)).map(summaryOf) };
}

/** A side as git sees it: text by patchd's rule (no NUL, valid UTF-8), binary otherwise. */
function sideOf(path: string, state: PathState): GitSide | null {
  return state === null ? null : { path, bytes: state.bytes, text: decodeUtf8Text(state.bytes), mode: state.owner.mode };
}

function sessionFileOf({ path, fromPath, before, after }: NetChange, sides: GitChange): SessionDiffFile {
  const binary = isBinary(sides.before) || isBinary(sides.after) ? { binary: true as const } : {};
  if (fromPath !== undefined) return { path, fromPath, op: 'rename', ...binary };
  return { path, op: before === null ? 'add' : after === null ? 'delete' : 'update', ...binary };
}

function summaryOf({ transactionId, at, status, format, undoOf, files, damaged }: TransactionEntry): TransactionSummary {
  const summary: TransactionSummary = { transactionId, at: new Date(at).toISOString(), status, format, files: files.map((file) => ({ ...file })) };
  if (undoOf !== undefined) summary.undoOf = undoOf;
  if (damaged !== undefined) summary.damaged = damaged;
  return summary;
}
