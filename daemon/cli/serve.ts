/**
 * `patchd serve`: JSON-RPC over stdio until `exit`, stdin closing, or SIGINT/SIGTERM; with
 * `--socket PATH`, a shared daemon on a unix socket that any number of clients connect to,
 * until SIGINT/SIGTERM. Either way every workspace and pool is closed, then exit 0.
 */
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { serveConnection } from '../server/connection.ts';
import { createLogger, describeError, type Logger } from '../server/logger.ts';
import type { WorkspaceRegistry } from '../server/registry.ts';
import { createRegistry, resolveStateRoot, resolveTaskTimeoutMs, type RuntimeOptions } from './runtime.ts';
import { serveSocket } from './serveSocket.ts';
import { stopOnce } from './stop.ts';

const SERVE_USAGE = 'usage: patchd serve [--socket PATH] [--task-timeout-ms N] [--state-dir DIR]';

interface ServeCommand {
  readonly taskTimeoutMs: number;
  readonly socket: string | undefined;
  readonly stateRoot: string | undefined;
}

/**
 * Serves on stdin / `wire` (the private stdout handle from `claimStdout`), or on a socket.
 * Resolves with an exit code when it cannot start. `runtime` is for embedders and tests (another pool worker).
 */
export async function serve(args: readonly string[], wire: Writable, runtime: Pick<RuntimeOptions, 'workerFile'> = {}): Promise<number | undefined> {
  const parsed = parseServeArgs(args);
  if (typeof parsed === 'string') {
    process.stderr.write(`patchd serve: ${parsed}\n${SERVE_USAGE}\n`);
    return 2;
  }
  const log = createLogger();
  const registry = createRegistry({ ...runtime, taskTimeoutMs: parsed.taskTimeoutMs, log, stateRoot: parsed.stateRoot });
  // One client's bad luck must not end every client's session.
  process.on('unhandledRejection', (reason) => log.error('unhandled rejection', describeError(reason)));
  if (parsed.socket !== undefined) return serveSocket(parsed.socket, registry, log);
  serveStdio(registry, wire, log);
  log.info('serving', { pid: process.pid, taskTimeoutMs: parsed.taskTimeoutMs });
  return undefined;
}

function serveStdio(registry: WorkspaceRegistry, wire: Writable, log: Logger): void {
  const stop = stopOnce(registry, log, () => exitAfterFlush(wire));
  const session = serveConnection({ input: process.stdin, output: wire, registry, log, onExit: () => stop('exit notification') });
  void session.closed.then(() => stop('input closed'));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));
}

function parseServeArgs(args: readonly string[]): ServeCommand | string {
  try {
    const { values } = parseArgs({
      args: [...args],
      options: { 'task-timeout-ms': { type: 'string' }, socket: { type: 'string' }, 'state-dir': { type: 'string' } },
      strict: true,
    });
    const taskTimeoutMs = resolveTaskTimeoutMs(values['task-timeout-ms']);
    if (taskTimeoutMs === undefined) return 'the task time limit must be a positive integer of milliseconds';
    if (values.socket === '') return '--socket needs a path';
    return { taskTimeoutMs, socket: values.socket, stateRoot: resolveStateRoot(values['state-dir']) };
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Exits 0 once queued frames are written (or after a grace period if the wire is broken). */
function exitAfterFlush(wire: Writable): void {
  setTimeout(() => process.exit(0), 2_000).unref();
  wire.end(() => process.exit(0));
}
