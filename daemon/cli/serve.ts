/**
 * `patchd serve`: JSON-RPC over stdio until `exit`, stdin closing, or SIGINT/SIGTERM (after
 * stdin closes, output the client leaves unread for `OUTPUT_GRACE_MS` is dropped); with
 * `--socket PATH`, a shared daemon on a unix socket that any number of clients connect to,
 * until SIGINT/SIGTERM. Either way every workspace and pool is closed, then exit 0.
 */
import type { Writable } from 'node:stream';
import { serveConnection, type ServerConnection } from '../server/connection.ts';
import { createLogger, type Logger } from '../server/logger.ts';
import { OUTPUT_GRACE_MS } from '../server/outputGrace.ts';
import type { WorkspaceRegistry } from '../server/registry.ts';
import { HELP_OPTION, parseCommandArgs, UsageError, type OptionSpecs } from './args.ts';
import { commandHelp, SERVE_USAGE, SERVE_USAGE_LINE } from './help.ts';
import { createRegistry, type RuntimeOptions } from './runtime.ts';
import { serveSocket } from './serveSocket.ts';
import { readSettings, type Settings } from './settings.ts';
import { parseRetention, recordRetention, type Retention } from '../workspace/retention.ts';
import { stopOnce } from './stop.ts';
import { exitOnFault } from './faults.ts';

export const SERVE_OPTIONS: OptionSpecs = {
  socket: { type: 'string', value: 'PATH', help: 'serve any number of clients on this unix socket (mode 0600) until SIGINT/SIGTERM; a stale socket file is replaced, a live daemon\'s is refused' },
  'task-timeout-ms': { type: 'string', value: 'N', help: 'per-task time limit for the matcher (also $PATCHD_TASK_TIMEOUT_MS)' },
  'state-dir': { type: 'string', value: 'DIR', help: 'state root (journals, trash); also $PATCHD_STATE_DIR' },
  retain: { type: 'string', value: 'N,Dd', help: 'keep undo records and trash for the last N transactions and D days (default 1000,7d; either part alone, hours as Nh); recorded in the state root, where every later process honours it' },
  ...HELP_OPTION,
};

const SERVE_ABOUT = `Speaks JSON-RPC (wire contract v1) on stdin/stdout until shutdown + exit, or stdin closing;
nothing else is ever written to stdout, logs are JSON lines on stderr. With --socket, a
shared daemon: clients that open the same root share one workspace.`;

interface ServeCommand {
  readonly settings: Settings;
  readonly socket: string | undefined;
  readonly retention: Retention | undefined;
}

/**
 * Serves on stdin / `wire` (the private stdout handle from `claimStdout`), or on a socket.
 * Resolves with an exit code when it does not serve. `runtime` is for embedders and tests (another pool worker).
 */
export async function serve(args: readonly string[], wire: Writable, runtime: Pick<RuntimeOptions, 'workerFile'> = {}): Promise<number | undefined> {
  let parsed: ServeCommand | 'help';
  try {
    parsed = parseServeArgs(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`patchd serve: ${error.message}\n${SERVE_USAGE_LINE}\n`);
    return 2;
  }
  if (parsed === 'help') {
    await new Promise((resolve) => wire.write(commandHelp(SERVE_USAGE, SERVE_ABOUT, SERVE_OPTIONS), resolve));
    return 0;
  }
  const { settings, socket, retention } = parsed;
  if (retention !== undefined) {
    try {
      await recordRetention(settings.stateRoot, retention);
    } catch (error) {
      process.stderr.write(`patchd serve: cannot record --retain in the state root ${settings.stateRoot}: ${error instanceof Error ? error.message : String(error)}\n`);
      return 2;
    }
  }
  const log = createLogger(process.stderr, settings.logLevel);
  const registry = createRegistry({ ...runtime, taskTimeoutMs: settings.taskTimeoutMs, log, stateRoot: settings.stateRoot });
  exitOnFault(log);
  if (socket !== undefined) return serveSocket(socket, registry, log);
  serveStdio(registry, wire, log);
  log.info('serving', { pid: process.pid, taskTimeoutMs: settings.taskTimeoutMs, stateRoot: settings.stateRoot });
  return undefined;
}

/** The exit code after input that cannot be split into frames (EX_DATAERR): the parent should restart the daemon. */
export const BROKEN_STREAM_EXIT_CODE = 65;

function serveStdio(registry: WorkspaceRegistry, wire: Writable, log: Logger): void {
  let exitCode = 0;
  let outputDropped = false;
  const stop = stopOnce(registry, log, () => (outputDropped ? process.exit(exitCode) : exitAfterFlush(wire, exitCode, session, log)));
  const session = serveConnection({ input: process.stdin, output: wire, registry, log, onExit: () => stop('exit notification') });
  void session.closed.then(({ brokenStream, outputDropped: dropped }) => {
    // The client closed stdin and stopped reading stdout: what it was owed is dropped, and not waited for again.
    outputDropped = dropped;
    if (brokenStream === undefined) return stop('input closed');
    exitCode = BROKEN_STREAM_EXIT_CODE;
    log.error('input stream broken: no further frame can be read', { reason: brokenStream, exitCode });
    stop('input stream broken');
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));
}

function parseServeArgs(args: readonly string[]): ServeCommand | 'help' {
  const { values, positionals } = parseCommandArgs(args, SERVE_OPTIONS);
  if (values.help === true) return 'help';
  if (positionals.length > 0) throw new UsageError(`serve takes no operands (got ${JSON.stringify(positionals[0])})`);
  const settings = readSettings({ taskTimeoutMs: values['task-timeout-ms'] as string | undefined, stateDir: values['state-dir'] as string | undefined }, 'info');
  return { settings, socket: values.socket as string | undefined, retention: retentionOption(values.retain as string | undefined) };
}

function retentionOption(retain: string | undefined): Retention | undefined {
  if (retain === undefined) return undefined;
  const parsed = parseRetention(retain);
  if (parsed.ok) return parsed.value;
  throw new UsageError(`--retain ${JSON.stringify(retain)}: ${parsed.problem}; it takes N (transactions), Nd or Nh (age), or one of each: 1000,7d`);
}

/**
 * Exits once queued frames are written, or after a grace period if the client does not take
 * them (it sent `exit` and stopped reading) or the wire is broken, saying what was left unsent.
 */
function exitAfterFlush(wire: Writable, code: number, session: ServerConnection, log: Logger): void {
  setTimeout(() => {
    log.warn('output left unsent: exiting without the client having taken it', { graceMs: OUTPUT_GRACE_MS, ...session.unsent });
    process.exit(code);
  }, OUTPUT_GRACE_MS).unref();
  wire.end(() => process.exit(code));
}
