/** In-process patching for the CLI: the daemon's handlers and flows, without a daemon. */
import { createLogger } from '../server/logger.ts';
import { PatchdHandlers, type SessionOutput } from '../server/handlers.ts';
import { createRegistry, DEFAULT_TASK_TIMEOUT_MS, localOutput, resolveStateRoot, resolveTaskTimeoutMs } from './runtime.ts';

export interface LocalOptions {
  readonly directory: string;
  readonly stateDir?: string | undefined;
  readonly output?: Partial<SessionOutput>;
}

/** Opens the workspace at `directory`, runs `work`, then closes every workspace and pool. */
export async function withLocalWorkspace<T>(options: LocalOptions, work: (handlers: PatchdHandlers, workspaceId: string) => Promise<T>): Promise<T> {
  const log = createLogger(process.stderr, 'warn');
  const taskTimeoutMs = resolveTaskTimeoutMs(undefined) ?? DEFAULT_TASK_TIMEOUT_MS;
  const registry = createRegistry({ taskTimeoutMs, log, stateRoot: resolveStateRoot(options.stateDir) });
  const handlers = new PatchdHandlers({ registry, sessionId: 'cli', log, output: localOutput(options.output) });
  try {
    const { workspaceId } = await handlers.openWorkspace({ root: options.directory });
    return await work(handlers, workspaceId);
  } finally {
    await registry.closeAll();
  }
}
