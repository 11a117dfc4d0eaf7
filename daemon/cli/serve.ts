/** `patchd serve`: JSON-RPC over stdio until `exit`, stdin closing, or SIGINT/SIGTERM; then exit 0. */
import { parseArgs } from 'node:util';
import type { Writable } from 'node:stream';
import { serveConnection } from '../server/connection.ts';
import { createLogger, describeError, type Logger } from '../server/logger.ts';
import type { WorkspaceRegistry } from '../server/registry.ts';
import { createRegistry, resolveTaskTimeoutMs } from './runtime.ts';

/** Serves on stdin / `wire` (the private stdout handle from `claimStdout`). Returns an exit code on bad usage. */
export function serve(args: readonly string[], wire: Writable): number | undefined {
  const parsed = parseServeArgs(args);
  if (typeof parsed === 'string') {
    process.stderr.write(`patchd serve: ${parsed}\nusage: patchd serve [--task-timeout-ms N]\n`);
    return 2;
  }
  const log = createLogger();
  const registry = createRegistry({ taskTimeoutMs: parsed.taskTimeoutMs, log });
  const stop = stopOnce(registry, wire, log);
  const session = serveConnection({ input: process.stdin, output: wire, registry, log, onExit: () => stop('exit notification') });
  void session.closed.then(() => stop('input closed'));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));
  // One client's bad luck must not end every client's session.
  process.on('unhandledRejection', (reason) => log.error('unhandled rejection', describeError(reason)));
  log.info('serving', { pid: process.pid, taskTimeoutMs: parsed.taskTimeoutMs });
  return undefined;
}

/** Closes every workspace and pool (no orphaned threads), then exits 0; later calls do nothing. */
function stopOnce(registry: WorkspaceRegistry, wire: Writable, log: Logger): (reason: string) => void {
  let stopping = false;
  return (reason) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { reason });
    void registry.closeAll()
      .catch((error: unknown) => log.error('close failed', describeError(error)))
      .finally(() => exitAfterFlush(wire));
  };
}

function parseServeArgs(args: readonly string[]): { taskTimeoutMs: number } | string {
  try {
    const { values } = parseArgs({ args: [...args], options: { 'task-timeout-ms': { type: 'string' } }, strict: true });
    const taskTimeoutMs = resolveTaskTimeoutMs(values['task-timeout-ms']);
    return taskTimeoutMs === undefined ? 'the task time limit must be a positive integer of milliseconds' : { taskTimeoutMs };
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Exits 0 once queued frames are written (or after a grace period if the wire is broken). */
function exitAfterFlush(wire: Writable): void {
  setTimeout(() => process.exit(0), 2_000).unref();
  wire.end(() => process.exit(0));
}
