/**
 * `patchd serve` (or `patchd mcp`) that, on SIGUSR2, leaves a promise rejection unhandled — or,
 * with `PATCHD_TEST_FAULT=throw` in its environment, throws an exception nobody catches —
 * standing in for a bug in patchd, injected from the test and never from the product. Spawn it
 * with `REJECTING_DAEMON` (`REJECTING_MCP`) in place of the daemon's own entry; argv after it is
 * that command's.
 */
import { fileURLToPath } from 'node:url';
import { claimStdout } from '../../daemon/server/stdoutGuard.ts';

export const REJECTING_DAEMON: readonly string[] = ['--import', import.meta.resolve('tsx'), fileURLToPath(import.meta.url), 'serve'];
export const REJECTING_MCP: readonly string[] = ['--import', import.meta.resolve('tsx'), fileURLToPath(import.meta.url), 'mcp'];

/** The reason the injected rejection carries. */
export const INJECTED_REASON = 'a rejection nobody handles (injected by the test)';
/** The message of the injected exception. */
export const INJECTED_EXCEPTION = 'an exception nobody catches (injected by the test)';

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const injectFault = () => process.on('SIGUSR2', () => {
    if (process.env.PATCHD_TEST_FAULT === 'throw') {
      setImmediate(() => {
        throw new TypeError(INJECTED_EXCEPTION);
      });
    } else void Promise.reject(new Error(INJECTED_REASON));
  });
  if (process.argv[2] === 'mcp') {
    injectFault();
    const { runMcp } = await import('../../daemon/mcp/command.ts');
    process.exitCode = await runMcp(process.argv.slice(3));
  } else {
    const wire = claimStdout();
    const { serve } = await import('../../daemon/cli/serve.ts');
    const failed = await serve(process.argv.slice(3), wire);
    if (failed !== undefined) process.exit(failed);
    injectFault();
  }
}
