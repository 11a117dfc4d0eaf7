/** `patchd undo TRANSACTION_ID [-C DIR] [--dry-run] [--json]`: exit 0 undone (or dry run), 1 rejected, 2 usage or internal error. */
import { undoTransaction } from '../server/undoPatch.ts';
import { runHistoryCommand, withHistoryWorkspace, type HistorySpec } from './historyArgs.ts';
import { paletteFor, renderReceipt } from './render.ts';

const UNDO: HistorySpec = {
  name: 'undo',
  usage: 'usage: patchd undo TRANSACTION_ID [-C DIR] [--dry-run] [--json] [--state-dir DIR]',
  about: 'Undoes a committed transaction (an id from patchd log) as a new one: every file it touched goes\nback to what it held before; undoing an undo redoes. Refused, nothing written, when a file\nno longer holds what the transaction left. Exit status: 0 undone (or would be), 1 refused,\n2 a usage mistake or an internal error.',
  positionals: 1,
  options: { 'dry-run': { type: 'boolean', help: 'show what the undo would do; write nothing' } },
};

export function runUndo(args: readonly string[]): Promise<number> {
  return runHistoryCommand(UNDO, args, async (command) => {
    const transactionId = command.positionals[0]!;
    const receipt = await withHistoryWorkspace(command, ({ workspace, signal }) => (
      undoTransaction({ workspaceId: 'cli', transactionId, dryRun: command.dryRun }, { workspace, signal })
    ));
    process.stdout.write(command.json ? `${JSON.stringify(receipt, null, 2)}\n` : renderReceipt(receipt, paletteFor(process.stdout)));
    return receipt.status === 'applied' || receipt.status === 'dry_run' ? 0 : 1;
  });
}
