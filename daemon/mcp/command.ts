/**
 * `patchd mcp [-C DIR]`: one workspace served as an MCP server over stdio. The daemon runs in
 * this process, reached through the client over an in-memory JSON-RPC pair; stdout carries MCP
 * frames only (everything else that writes there goes to stderr); the server exits 0 once
 * stdin closes (or on SIGINT/SIGTERM), after answering what it was asked (a call the host
 * cancelled is owed nothing) and closing the workspace, within 2.5 s. While a host leaves too
 * many answers unread, stdin is not read (see `stdioTransport.ts`), so its end is seen once the
 * host reads again; a host gone (stdout failing) stops the server at once.
 */
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { PatchClient, type Workspace } from '../../client/index.ts';
import { HELP_OPTION, parseCommandArgs, UsageError, type OptionSpecs } from '../cli/args.ts';
import { exitOnFault } from '../cli/faults.ts';
import { commandHelp, MCP_USAGE } from '../cli/help.ts';
import { createRegistry } from '../cli/runtime.ts';
import { readSettings, type Settings } from '../cli/settings.ts';
import { serveConnection } from '../server/connection.ts';
import { createLogger, describeError } from '../server/logger.ts';
import { packageInfo } from '../server/packageInfo.ts';
import { claimStdout } from '../server/stdoutGuard.ts';
import { createMcpServer } from './server.ts';
import { StdioTransport } from './stdioTransport.ts';

const MCP_OPTIONS: OptionSpecs = {
  directory: { type: 'string', short: 'C', value: 'DIR', help: 'workspace root (default: the current directory)' },
  'task-timeout-ms': { type: 'string', value: 'N', help: 'per-task time limit for the matcher (also $PATCHD_TASK_TIMEOUT_MS)' },
  'state-dir': { type: 'string', value: 'DIR', help: 'state root (journals, trash); also $PATCHD_STATE_DIR' },
  ...HELP_OPTION,
};

const MCP_ABOUT = `Serve the workspace DIR (default: the current directory) as an MCP server over stdin/stdout,
with the tools apply_patch {patch, dry_run?}, read_file {path}, undo {transaction_id} and
session_diff {}. Logs go to stderr; the server exits when stdin closes.`;

/** Closing after stdin ends may take this long before the process exits anyway. */
const STOP_GRACE_MS = 2_500;

interface McpCommand {
  readonly root: string;
  readonly settings: Settings;
}

/** Serves until stdin closes; resolves with the exit code. */
export async function runMcp(args: readonly string[]): Promise<number> {
  let parsed: McpCommand | 'help';
  try {
    parsed = parseMcpArgs(args);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`patchd mcp: ${error.message}\n${MCP_USAGE}  (see patchd mcp --help)\n`);
    return 2;
  }
  if (parsed === 'help') {
    process.stdout.write(commandHelp(MCP_USAGE, MCP_ABOUT, MCP_OPTIONS));
    return 0;
  }
  const { settings } = parsed;
  const wire = claimStdout();
  const log = createLogger(process.stderr, settings.logLevel);
  exitOnFault(log);
  const registry = createRegistry({ taskTimeoutMs: settings.taskTimeoutMs, log, stateRoot: settings.stateRoot });
  const toDaemon = new PassThrough();
  const fromDaemon = new PassThrough();
  const session = serveConnection({ input: toDaemon, output: fromDaemon, registry, log, onExit: () => {} });
  const client = await PatchClient.connect(fromDaemon, toDaemon, { clientInfo: { name: 'patchd-mcp' } });

  const transport = new StdioTransport(process.stdin, wire);
  transport.onbacklog = (over, backlog) => log.debug(over ? 'mcp output backlog over the limit: reading paused' : 'mcp output backlog taken: reading resumed', { ...backlog });
  // The transport closes when the host is gone (its output failed, EPIPE): nothing can be answered any more. While reading
  // is paused, stdin's end is not seen, so this is how a server paused on a host that died stops.
  const outputClosed = new Promise<void>((resolve) => (transport.onclose = resolve));
  const stopRequested = new Promise<string>((resolve) => {
    void transport.inputEnded.then(() => resolve('input closed'));
    void outputClosed.then(() => resolve('output closed'));
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => resolve(signal));
  });
  let workspace: Workspace;
  try {
    workspace = await client.openWorkspace(parsed.root);
  } catch (error) {
    process.stderr.write(`patchd mcp: cannot open ${parsed.root}: ${error instanceof Error ? error.message : String(error)}\n`);
    await client.close();
    await registry.closeAll();
    return 2;
  }
  const server = createMcpServer(workspace, packageInfo());
  // The SDK keeps the transport's onclose, calling it before its own.
  await server.connect(transport);
  // Input that is not a message, or one too large to read: skipped (and answered where it can be), and told here.
  server.server.onerror = (error) => log.warn('mcp input', describeError(error));
  log.info('mcp serving', { pid: process.pid, root: workspace.root });

  log.info('stopping', { reason: await stopRequested });
  setTimeout(() => {
    log.warn('stop grace period over: exiting before the workspace closed', { graceMs: STOP_GRACE_MS });
    process.exit(0);
  }, STOP_GRACE_MS).unref();
  try {
    await Promise.race([transport.allAnswered(), outputClosed]);
    await server.close();
    await client.close();
    toDaemon.end();
    await session.closed;
    await registry.closeAll();
    log.info('stopped', { root: workspace.root });
  } catch (error) {
    log.error('close failed', describeError(error));
  }
  // A stdout that failed never finishes ending.
  if (!wire.destroyed) await new Promise<void>((resolve) => wire.end(resolve));
  return 0;
}

function parseMcpArgs(args: readonly string[]): McpCommand | 'help' {
  const { values, positionals } = parseCommandArgs(args, MCP_OPTIONS);
  if (values.help === true) return 'help';
  if (positionals.length > 0) throw new UsageError(`mcp takes no operands (got ${JSON.stringify(positionals[0])})`);
  const text = (name: string) => values[name] as string | undefined;
  const settings = readSettings({ taskTimeoutMs: text('task-timeout-ms'), stateDir: text('state-dir') }, 'info');
  return { root: path.resolve(text('directory') ?? '.'), settings };
}
