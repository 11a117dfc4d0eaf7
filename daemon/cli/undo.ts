/** `patchd undo TRANSACTION_ID [-C DIR] [--dry-run] [--json]`: exit 0 undone (or dry run), 1 rejected, 2 usage or internal error. */
import { undoTransaction } from '../server/undoPatch.ts';
import { parseHistoryArgs, runHistoryCommand, withHistoryWorkspace } from './historyArgs.ts';
import { paletteFor, renderReceipt } from './render.ts';

export const UNDO_USAGE = 'usage: patchd undo TRANSACTION_ID [-C DIR] [--dry-run] [--json]';

export function runUndo(args: readonly string[]): Promise<number> {
  return runHistoryCommand('undo', UNDO_USAGE, async () => {
    const command = parseHistoryArgs(args, { positionals: 1, flags: ['dry-run'] });
    const transactionId = command.positionals[0]!;
    const receipt = await withHistoryWorkspace(command, ({ workspace, signal }) => (
      undoTransaction({ workspaceId: 'cli', transactionId, dryRun: command.dryRun }, { workspace, signal })
    ));
    process.stdout.write(command.json ? `${JSON.stringify(receipt, null, 2)}\n` : renderReceipt(receipt, paletteFor(process.stdout)));
    return receipt.status === 'applied' || receipt.status === 'dry_run' ? 0 : 1;
  });
}
