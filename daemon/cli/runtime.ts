/** The daemon's runtime wiring shared by `serve` and `apply`: real workspaces, one engine pool each. */
import { EnginePool } from '../pool/pool.ts';
import { describeError, type Logger } from '../server/logger.ts';
import { WorkspaceRegistry } from '../server/registry.ts';
import { Workspace } from '../workspace/workspace.ts';

export const DEFAULT_TASK_TIMEOUT_MS = 30_000;

/** The per-task time limit: the flag, else `$PATCHD_TASK_TIMEOUT_MS`, else the default. */
export function resolveTaskTimeoutMs(flag: string | undefined): number | undefined {
  const value = flag ?? process.env.PATCHD_TASK_TIMEOUT_MS;
  if (value === undefined || value === '') return DEFAULT_TASK_TIMEOUT_MS;
  const parsed = Number(value);
  return Number.isInteger(parsed) && parsed > 0 ? parsed : undefined;
}

export function createRegistry(options: { readonly taskTimeoutMs: number; readonly log: Logger }): WorkspaceRegistry {
  const { taskTimeoutMs, log } = options;
  return new WorkspaceRegistry({
    openWorkspace: (root) => Workspace.open(root),
    createPool: () => new EnginePool({ taskTimeoutMs, onError: (error) => log.error('worker pool error', describeError(error)) }),
  });
}
