/** `patchd log [-C DIR] [--limit N] [--json]`: the workspace's committed transactions, newest first. */
import type { TransactionSummary } from '../../protocol/index.ts';
import { listTransactions } from '../server/sessionDiff.ts';
import { runHistoryCommand, withHistoryWorkspace, type HistorySpec } from './historyArgs.ts';
import { paletteFor, type Palette } from './render.ts';

const LOG: HistorySpec = {
  name: 'log',
  usage: 'usage: patchd log [-C DIR] [--limit N] [--json] [--state-dir DIR]',
  about: 'Lists the workspace\'s committed transactions, newest first: those of every patchd process\nsharing the state root (the daemon\'s included), up to retention.',
  positionals: 0,
  options: { limit: { type: 'string', short: 'n', value: 'N', help: 'at most N transactions (1 to 10000; default 50)' } },
};

export function runLog(args: readonly string[]): Promise<number> {
  return runHistoryCommand(LOG, args, async (command) => {
    const { transactions } = await withHistoryWorkspace(command, ({ workspace }) => listTransactions(workspace, command.limit ?? 50));
    process.stdout.write(command.json ? `${JSON.stringify({ transactions }, null, 2)}\n` : renderLog(transactions, paletteFor(process.stdout)));
    return 0;
  });
}

export function renderLog(transactions: readonly TransactionSummary[], colors: Palette): string {
  if (transactions.length === 0) return 'no transactions\n';
  return transactions.map((transaction) => {
    const undo = transaction.undoOf === undefined ? '' : ` of ${transaction.undoOf}`;
    const status = transaction.status === 'applied' ? '' : ` ${colors.red(transaction.status === 'partial' ? 'partial' : 'status unknown')}`;
    const damaged = transaction.damaged === undefined ? '' : ` ${colors.red('damaged')}`;
    const head = `${colors.yellow(transaction.transactionId)} ${colors.dim(transaction.at)} ${transaction.format}${undo}${status}${damaged}`;
    const files = transaction.files.map((file) => `  ${file.op.padEnd(6)} ${file.fromPath === undefined ? '' : `${file.fromPath} -> `}${file.path}`);
    // Why, under the files it could read: it cannot be undone, nor a diff told over it.
    const why = transaction.damaged === undefined ? [] : [`  ${colors.red(`${transaction.damaged}; it cannot be undone, nor a diff told over it`)}`];
    return [head, ...files, ...why].join('\n');
  }).join('\n') + '\n';
}
