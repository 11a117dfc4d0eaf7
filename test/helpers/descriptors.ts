/**
 * Running this process out of file descriptors, for tests of what a commit does when a look at
 * a file fails for a reason that is not the file's: the soft limit is lowered (prlimit, from
 * util-linux) and filled. Until `release()`, every open in this process fails with EMFILE — so
 * the caller keeps that stretch free of anything else that needs a descriptor it cannot lose.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';

const LOWERED_SOFT_LIMIT = 256;

export function exhaustDescriptors(): { release(): void } {
  const pid = String(process.pid);
  const [soft, hard] = execFileSync('prlimit', ['--pid', pid, '--nofile', '--raw', '--noheadings', '--output', 'SOFT,HARD']).toString().trim().split(/\s+/);
  execFileSync('prlimit', ['--pid', pid, `--nofile=${LOWERED_SOFT_LIMIT}:${hard}`]);
  const held: number[] = [];
  try {
    for (;;) held.push(openSync('/dev/null', 'r'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EMFILE') throw error;
  }
  return {
    release() {
      held.splice(0).forEach((fd) => closeSync(fd));
      execFileSync('prlimit', ['--pid', pid, `--nofile=${soft}:${hard}`]);
    },
  };
}
