/** The daemon's runtime wiring shared by `serve` and `apply`: real workspaces, one engine pool each. */
import path from 'node:path';
import { EnginePool } from '../pool/pool.ts';
import type { SessionOutput } from '../server/handlers.ts';
import { describeError, type Logger } from '../server/logger.ts';
import { WorkspaceRegistry } from '../server/registry.ts';
import { stateDirFor, Workspace } from '../workspace/workspace.ts';

export const DEFAULT_TASK_TIMEOUT_MS = 30_000;

/** The per-task time limit: the flag, else `$PATCHD_TASK_TIMEOUT_MS`, else the default. */
export function resolveTaskTimeoutMs(flag: string | undefined): number | undefined {
  const value = flag ?? process.env.PATCHD_TASK_TIMEOUT_MS;
  if (value === undefined || value === '') return DEFAULT_TASK_TIMEOUT_MS;
  const parsed = Number(value);
  return Number.isInteger(parsed) && parsed > 0 ? parsed : undefined;
}

/** Where workspaces keep their state: the flag, else `$PATCHD_STATE_DIR`, else (undefined) the system temp dir. */
export function resolveStateRoot(flag: string | undefined): string | undefined {
  const value = flag ?? process.env.PATCHD_STATE_DIR;
  return value === undefined || value === '' ? undefined : path.resolve(value);
}

export interface RuntimeOptions {
  readonly taskTimeoutMs: number;
  readonly log: Logger;
  /** Each workspace keeps its journals and trash in `<stateRoot>/<hash of its root>`. */
  readonly stateRoot?: string | undefined;
  /** The pool's worker module, when not the engine's own (see `EnginePool`). */
  readonly workerFile?: string | undefined;
}

export function createRegistry({ taskTimeoutMs, log, stateRoot, workerFile }: RuntimeOptions): WorkspaceRegistry {
  return new WorkspaceRegistry({
    openWorkspace: (root) => Workspace.open(root, {
      stateDir: stateRoot === undefined ? undefined : stateDirFor(root, stateRoot),
      onError: (error) => log.warn('watcher error', describeError(error)),
    }),
    createPool: () => new EnginePool({ taskTimeoutMs, workerFile, onError: (error) => log.error('worker pool error', describeError(error)) }),
  });
}

/** Session output for in-process use (the CLI): nothing is sent unless a function is given. */
export function localOutput(overrides: Partial<SessionOutput> = {}): SessionOutput {
  return { fileProgress: async () => {}, batchProgress: async () => {}, fileChanged: () => {}, ...overrides };
}
