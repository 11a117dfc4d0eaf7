/**
 * Run by recovery.test.ts as a separate process: commits a five-file plan and SIGKILLs itself
 * right before rename number `killAt`, leaving a half-applied tree and its journal behind.
 * argv: <root> <stateDir> <killAt> [single]   (`single`: a one-file plan instead)
 */
import { Workspace } from '../../daemon/workspace/workspace.ts';
import { CRASH_PLAN, planOf, snapshotAndCommit, updateFile } from './fixtures.ts';

const [root, stateDir, killAt, variant] = process.argv.slice(2);
if (root === undefined || stateDir === undefined || killAt === undefined) throw new Error('usage: crashChild <root> <stateDir> <killAt>');

const workspace = await Workspace.open(root, {
  stateDir,
  hooks: { beforeRename: (index) => { if (index === Number(killAt)) process.kill(process.pid, 'SIGKILL'); } },
});
await snapshotAndCommit(workspace, variant === 'single' ? planOf(updateFile('two.txt', 'only\n')) : CRASH_PLAN);
process.stderr.write('crashChild: the commit finished without being killed\n');
process.exit(3);
