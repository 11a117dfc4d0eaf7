/**
 * Run by undoCrash.test.ts as a separate process: undoes transaction <id> and SIGKILLs itself
 * right before rename number <killAt> of the undo, leaving it half done with its journal.
 * argv: <root> <stateDir> <transactionId> <killAt>
 */
import { undoTransaction } from '../../daemon/server/undoPatch.ts';
import { Workspace } from '../../daemon/workspace/workspace.ts';

const [root, stateDir, transactionId, killAt] = process.argv.slice(2);
if (root === undefined || stateDir === undefined || transactionId === undefined || killAt === undefined) {
  throw new Error('usage: undoCrashChild <root> <stateDir> <transactionId> <killAt>');
}
const workspace = await Workspace.open(root, {
  stateDir,
  hooks: { beforeRename: (index) => { if (index === Number(killAt)) process.kill(process.pid, 'SIGKILL'); } },
});
const receipt = await undoTransaction({ workspaceId: 'ws', transactionId }, { workspace, signal: new AbortController().signal });
process.stderr.write(`undoCrashChild: the undo finished (${receipt.status}) without being killed\n`);
process.exit(3);
