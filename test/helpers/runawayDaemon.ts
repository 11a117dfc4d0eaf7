/**
 * `patchd serve` with the test pool worker of `runawayWorker.ts`, for end-to-end tests of the
 * time limit, cancellation and clients that go away mid-patch. Spawn it with `RUNAWAY_DAEMON`
 * in place of the daemon's own entry; argv after it is `serve`'s.
 */
import { fileURLToPath } from 'node:url';
import { claimStdout } from '../../daemon/server/stdoutGuard.ts';

export const RUNAWAY_DAEMON: readonly string[] = ['--import', import.meta.resolve('tsx'), fileURLToPath(import.meta.url), 'serve'];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const wire = claimStdout();
  const { serve } = await import('../../daemon/cli/serve.ts');
  const { RUNAWAY_WORKER } = await import('./runawayWorker.ts');
  const failed = await serve(process.argv.slice(3), wire, { workerFile: RUNAWAY_WORKER });
  if (failed !== undefined) process.exit(failed);
}
