/** The daemon's runtime wiring: real workspaces, one engine pool each. */
import { EnginePool } from '../pool/pool.ts';
import { describeError, type Logger } from '../server/logger.ts';
import { WorkspaceRegistry } from '../server/registry.ts';
import { warmUp } from '../server/warmUp.ts';
import { DAMAGED_LOG_SEGMENT, retentionInForce, stateDirFor, Workspace } from '../workspace/workspace.ts';

export interface RuntimeOptions {
  readonly taskTimeoutMs: number;
  readonly log: Logger;
  /** Each workspace keeps its journals and trash in `<stateRoot>/<hash of its root>` (see `stateRoot.ts`). */
  readonly stateRoot: string;
  /** The pool's worker module, when not the engine's own (see `EnginePool`). */
  readonly workerFile?: string | undefined;
}

/** The registry of `serve` and `mcp` (never the one-shot CLI), after warming up the patch path (see `warmUp.ts`). */
export function createRegistry({ taskTimeoutMs, log, stateRoot, workerFile }: RuntimeOptions): WorkspaceRegistry {
  warmUp((error) => log.warn('warm-up failed', describeError(error)));
  return new WorkspaceRegistry({
    openWorkspace: (root) => Workspace.open(root, {
      stateDir: stateDirFor(root, stateRoot),
      stateRoot,
      onError: (error) => log.warn('workspace error', describeError(error)),
      onDamagedLogSegment: (damaged) => log.error(DAMAGED_LOG_SEGMENT, { root, ...damaged }),
      retention: () => retentionInForce(stateRoot),
    }),
    createPool: () => new EnginePool({ taskTimeoutMs, workerFile, onError: (error) => log.error('worker pool error', describeError(error)) }),
  });
}
