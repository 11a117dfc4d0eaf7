/**
 * `patchd diff [--since ID] [-C DIR] [--json]`: the net diff, in `git diff` format, of every
 * transaction after ID — without it, of every transaction still retained.
 */
import { FileRequestError, UnknownTransactionError } from '../server/failures.ts';
import { sessionDiff } from '../server/sessionDiff.ts';
import { runHistoryCommand, withHistoryWorkspace, type HistorySpec } from './historyArgs.ts';

const DIFF: HistorySpec = {
  name: 'diff',
  usage: 'usage: patchd diff [--since TRANSACTION_ID] [-C DIR] [--json] [--state-dir DIR]',
  about: 'Prints the net change, in git diff format, of every transaction committed after --since (an id\nfrom patchd log), or of every one still retained. Files that are not UTF-8 text are git binary\npatches. Exit status: 0 printed, 1 an unknown --since or a change that cannot be told (a damaged\nundo record: patchd log marks it), 2 a usage mistake or an internal error.',
  positionals: 0,
  options: { since: { type: 'string', value: 'TRANSACTION_ID', help: 'only what the transactions after this one changed' } },
};

export function runDiff(args: readonly string[]): Promise<number> {
  return runHistoryCommand(DIFF, args, async (command) => {
    try {
      const result = await withHistoryWorkspace(command, ({ workspace }) => sessionDiff(workspace, command.since ?? null));
      process.stdout.write(command.json ? `${JSON.stringify(result, null, 2)}\n` : result.diff);
      return 0;
    } catch (error) {
      if (!(error instanceof UnknownTransactionError) && !(error instanceof FileRequestError)) throw error;
      const hint = error instanceof FileRequestError ? `\n${error.error.hint}` : '';
      process.stderr.write(`patchd diff: ${error.message}${hint}\n`);
      return 1;
    }
  });
}
