/**
 * `patchd diff [--since ID] [-C DIR] [--json]`: the net diff, in `git diff` format, of every
 * transaction after ID — without it, of every transaction still retained.
 */
import { UnknownTransactionError } from '../server/failures.ts';
import { sessionDiff } from '../server/sessionDiff.ts';
import { parseHistoryArgs, runHistoryCommand, withHistoryWorkspace } from './historyArgs.ts';

export const DIFF_USAGE = 'usage: patchd diff [--since TRANSACTION_ID] [-C DIR] [--json]';

export function runDiff(args: readonly string[]): Promise<number> {
  return runHistoryCommand('diff', DIFF_USAGE, async () => {
    const command = parseHistoryArgs(args, { positionals: 0, flags: ['since'] });
    try {
      const result = await withHistoryWorkspace(command, ({ workspace }) => sessionDiff(workspace, command.since ?? null));
      process.stdout.write(command.json ? `${JSON.stringify(result, null, 2)}\n` : result.diff);
      return 0;
    } catch (error) {
      if (!(error instanceof UnknownTransactionError)) throw error;
      process.stderr.write(`patchd diff: ${error.message}\n`);
      return 1;
    }
  });
}
