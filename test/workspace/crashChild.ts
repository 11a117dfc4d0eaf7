/**
 * Run by recovery.test.ts, commitLog.test.ts, tidy.test.ts and typeChange.test.ts as a separate process that SIGKILLs itself at a precise instant,
 * leaving whatever a killed daemon would leave behind.
 * argv: <root> <stateDir> <when> [single|tidy|tidyFirst|fileToDirectory|directoryToFile|settledFirst|revertsEarlier|undoesLatest|thenChanged|thenReverted|thenRecreated] [bootId]   (bootId: the boot the daemon runs in, `unknown` for none)
 *   when = rename:<n>   commit the five-file plan (`single`: a one-file plan), die right before rename n
 *          drop         commit the five-file plan, die right before it is logged done (after its renames, directory fsyncs and record write)
 *          reported     commit the five-file plan, die as soon as it is reported applied (a one-file commit: before its fsyncs)
 *          done         commit the five-file plan, die once it is reported applied and durable (before the log's checkpoint)
 *          restore:<n>  only open the workspace (recovering what an earlier child left), die before the restore rename n
 *          keep         only open the workspace, die before the log's hand-over renames a journal file into journal/
 *   settledFirst: the five-file plan, after a one-file commit of keep.txt that settles first (both logged in one segment)
 *   revertsEarlier: a one-file commit of two.txt back to `two`, after a one-file commit of two.txt to `only` that settles
 *                first (both logged in one segment): a revert made right after the change it reverts
 *   undoesLatest: a one-file commit of two.txt back to `two` as the undo of the newest transaction (made before, by another process)
 *   thenChanged, thenReverted: the five-file plan, then, once it settled, a one-file commit of two.txt to other bytes, or back to
 *                its pre-image, which settles too (both logged in one segment)
 *   thenRecreated: the same, the later commit adding four.txt (which the five-file plan deleted) again, with other bytes
 */
import type { DiskCalls } from '../../daemon/workspace/diskCalls.ts';
import { nodeDiskCalls } from '../../daemon/workspace/diskCalls.ts';
import { Workspace, type WorkspaceOptions } from '../../daemon/workspace/workspace.ts';
import { addFile, CRASH_PLAN, deleteFile, planOf, snapshotAndCommit, TYPE_CHANGE_PLANS, updateFile } from './fixtures.ts';

const [root, stateDir, when, variant, bootId] = process.argv.slice(2);
if (root === undefined || stateDir === undefined || when === undefined) throw new Error('usage: crashChild <root> <stateDir> <when> [single]');
const [point, count] = when.split(':');
/** What is committed, and settled, before the commit under test. */
const firstPlans = { settledFirst: planOf(updateFile('keep.txt', 'kept\n')), revertsEarlier: planOf(updateFile('two.txt', 'only\n')) };
const firstPlan = firstPlans[variant as keyof typeof firstPlans];
/** Dies only in the commit under test, not in the one made before it. */
let armed = firstPlan === undefined;
const die = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};

/** The disk calls of a daemon that dies at the chosen call. */
function dyingDisk(): DiskCalls {
  let restores = 0;
  return {
    ...nodeDiskCalls,
    rename: (from, to) => (point === 'keep' && from.endsWith('.journal.tmp') ? die() : nodeDiskCalls.rename(from, to)),
    renameSync: (from, to) => {
      const restoring = from.endsWith('-restore.patchd.tmp');
      return point === 'restore' && restoring && restores++ === Number(count) ? die() : nodeDiskCalls.renameSync(from, to);
    },
  };
}

const options: WorkspaceOptions = {
  stateDir,
  ...(bootId === undefined ? {} : { bootId: bootId === 'unknown' ? null : bootId }),
  disk: dyingDisk(),
  hooks: {
    beforeRename: (index) => (armed && point === 'rename' && index === Number(count) ? die() : undefined),
    beforeDone: () => (armed && point === 'drop' ? die() : undefined),
  },
};
const workspace = await Workspace.open(root, options);
/** The one-file commit made after the five-file plan settled. */
const laterPlans = {
  thenChanged: planOf(updateFile('two.txt', 'changed later\n')),
  thenReverted: planOf(updateFile('two.txt', 'two\n')),
  thenRecreated: planOf(addFile('four.txt', 'four again\n')),
};
const laterPlan = laterPlans[variant as keyof typeof laterPlans];
const plans = {
  single: planOf(updateFile('two.txt', 'only\n')),
  // Empties d/e (and so d/e goes when tidied) but not d.
  tidy: planOf(updateFile('two.txt', '2\n'), deleteFile('d/e/last.txt')),
  // The same, d/e emptied by the first rename.
  tidyFirst: planOf(deleteFile('d/e/last.txt'), updateFile('two.txt', '2\n')),
  revertsEarlier: planOf(updateFile('two.txt', 'two\n')),
  undoesLatest: planOf(updateFile('two.txt', 'two\n')),
  ...TYPE_CHANGE_PLANS,
};
if (firstPlan !== undefined) {
  await snapshotAndCommit(workspace, firstPlan);
  await workspace.settled();
  armed = true;
}
const undoOf = variant === 'undoesLatest' ? (await workspace.transactions(1))[0]?.transactionId : undefined;
if (point !== 'restore' && point !== 'keep') await snapshotAndCommit(workspace, plans[variant as keyof typeof plans] ?? CRASH_PLAN, true, undoOf);
if (point === 'reported') die();
await workspace.settled();
if (laterPlan !== undefined) {
  await snapshotAndCommit(workspace, laterPlan);
  await workspace.settled();
}
if (point === 'done') die();
process.stderr.write(`crashChild: finished without being killed at ${when}\n`);
process.exit(3);
