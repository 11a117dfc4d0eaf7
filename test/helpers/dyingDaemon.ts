/**
 * `patchd serve` that SIGKILLs itself at a chosen instant of a commit, standing in for a daemon
 * killed there (kill -9, the OOM killer); injected from the test, never from the product. Spawn it
 * with `DYING_DAEMON` in place of the daemon's own entry and `PATCHD_TEST_DIE_AT=<n>`: it dies
 * right before the n-th instant (from 0) its commits reach. The instants of a commit are, in
 * order, each of its hooks (before each rename, before it is logged done) and each system call it
 * makes through its `DiskCalls` (`diskCalls.ts`) that changes what is on disk: creating or writing
 * a file (a log frame, a temp, the undo record), a rename, an unlink. Not its fsyncs, closes and
 * opens for reading: a killed process's writes stay in the page cache, so a kill right before one
 * of those leaves what a kill right after the call before it leaves. Counted only while a commit
 * runs, so a workspace's opening (and recovery) is never cut short. A daemon whose commits reach
 * fewer instants runs on: its commit ends normally.
 */
import { fileURLToPath } from 'node:url';
import { claimStdout } from '../../daemon/server/stdoutGuard.ts';
import type { DiskCalls } from '../../daemon/workspace/diskCalls.ts';
import type { CommitHooks } from '../../daemon/workspace/workspace.ts';

export const DYING_DAEMON: readonly string[] = ['--import', import.meta.resolve('tsx'), fileURLToPath(import.meta.url), 'serve'];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dieAt = Number(process.env.PATCHD_TEST_DIE_AT);
  if (!Number.isInteger(dieAt) || dieAt < 0) throw new Error('PATCHD_TEST_DIE_AT names no instant');
  const wire = claimStdout();
  const { nodeDiskCalls } = await import('../../daemon/workspace/diskCalls.ts');
  const { openWorkspacesWith, runCommitsThrough } = await import('./workspaceInjection.ts');
  let committing = 0;
  let instant = 0;
  /** Runs at each instant: dies at the chosen one. */
  const reach = (): void => {
    if (committing === 0 || instant++ !== dieAt) return;
    process.kill(process.pid, 'SIGKILL');
  };
  const reachUnlessReading = (flags: string): void => {
    if (flags !== 'r') reach();
  };
  const dyingDisk: DiskCalls = {
    ...nodeDiskCalls,
    open: (path, flags, mode) => (reachUnlessReading(flags), nodeDiskCalls.open(path, flags, mode)),
    openSync: (path, flags, mode) => (reachUnlessReading(flags), nodeDiskCalls.openSync(path, flags, mode)),
    writevSync: (fd, chunks) => (reach(), nodeDiskCalls.writevSync(fd, chunks)),
    writev: (fd, chunks) => (reach(), nodeDiskCalls.writev(fd, chunks)),
    rename: (from, to) => (reach(), nodeDiskCalls.rename(from, to)),
    renameSync: (from, to) => (reach(), nodeDiskCalls.renameSync(from, to)),
    unlink: (path) => (reach(), nodeDiskCalls.unlink(path)),
    unlinkSync: (path) => (reach(), nodeDiskCalls.unlinkSync(path)),
  };
  const hooks: CommitHooks = { beforeRename: reach, beforeDone: reach };

  openWorkspacesWith({ disk: dyingDisk, hooks });
  runCommitsThrough(async (_workspace, _options, commit) => {
    committing += 1;
    try {
      return await commit();
    } finally {
      committing -= 1;
    }
  });
  const { serve } = await import('../../daemon/cli/serve.ts');
  const failed = await serve(process.argv.slice(3), wire);
  if (failed !== undefined) process.exit(failed);
}
