/**
 * TEST-ONLY hook. With PATCHD_TEST_RUNAWAY=1 in the daemon's environment, a patch containing
 * RUNAWAY_MARKER makes the worker spin forever, so e2e tests can check that the per-task time
 * limit stops a runaway match and the pool keeps serving. Inert otherwise.
 */
export const RUNAWAY_MARKER = '@@patchd-test-runaway@@';

export function spinIfTestRunaway(patch: string | undefined): void {
  if (process.env.PATCHD_TEST_RUNAWAY !== '1' || patch?.includes(RUNAWAY_MARKER) !== true) return;
  for (;;) {
    // spin until the pool's time limit aborts this thread
  }
}
