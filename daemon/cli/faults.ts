/** What a long-running command (`serve`, `mcp`) does about a fault in patchd itself. */
import { describeError, type Logger } from '../server/logger.ts';

/** The exit code after a fault in patchd itself (EX_SOFTWARE). */
export const INTERNAL_FAULT_EXIT_CODE = 70;

/**
 * A rejection nobody handles, or an exception nobody catches, is a bug in patchd: say so in one
 * log line (the stack inside it, never as loose lines on stderr) and exit 70, never carry on
 * unaware — nor exit 1 with Node's own dump, which a parent cannot tell from a usage error.
 */
export function exitOnFault(log: Logger): void {
  process.on('unhandledRejection', (reason) => {
    log.error('unhandled rejection (a bug in patchd)', describeError(reason));
    process.exit(INTERNAL_FAULT_EXIT_CODE);
  });
  process.on('uncaughtException', (error) => {
    log.error('uncaught exception (a bug in patchd)', describeError(error));
    process.exit(INTERNAL_FAULT_EXIT_CODE);
  });
}
