/** Stopping the daemon once, whatever asked first (a signal, `exit`, stdin closing). */
import { describeError, type Logger } from '../server/logger.ts';
import type { WorkspaceRegistry } from '../server/registry.ts';

/** Closes every workspace and pool (no orphaned threads), then calls `exit`; later calls do nothing. */
export function stopOnce(registry: WorkspaceRegistry, log: Logger, exit: () => void): (reason: string) => void {
  let stopping = false;
  return (reason) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { reason });
    void registry.closeAll()
      .catch((error: unknown) => log.error('close failed', describeError(error)))
      .finally(exit);
  };
}

