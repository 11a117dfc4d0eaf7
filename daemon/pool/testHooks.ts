/**
 * TEST-ONLY hooks. With PATCHD_TEST_RUNAWAY=1 in the daemon's environment, a patch containing
 * RUNAWAY_MARKER makes the worker spin forever while parsing, and a file containing it makes
 * the worker spin while planning (so, holding the file's lock) — for e2e tests of the per-task
 * time limit, of cancellation and of clients that disconnect mid-patch. Inert otherwise.
 */
import type { FileSnapshot } from '../engine/index.ts';

export const RUNAWAY_MARKER = '@@patchd-test-runaway@@';

export function spinIfTestRunaway(patch: string | undefined): void {
  if (process.env.PATCHD_TEST_RUNAWAY !== '1' || patch?.includes(RUNAWAY_MARKER) !== true) return;
  spin();
}

export function spinIfTestRunawayFile(files: ReadonlyMap<string, FileSnapshot>): void {
  if (process.env.PATCHD_TEST_RUNAWAY !== '1') return;
  const marker = Buffer.from(RUNAWAY_MARKER);
  for (const file of files.values()) if (file.kind === 'file' && Buffer.from(file.bytes).includes(marker)) spin();
}

function spin(): void {
  for (;;) {
    // spin until the pool's time limit (or the caller's cancellation) aborts this thread
  }
}
