/**
 * `patchd mcp [-C DIR]`: one workspace served as an MCP server over stdio. The daemon runs in
 * this process, reached through the client over an in-memory JSON-RPC pair; stdout carries MCP
 * frames only (everything else that writes there goes to stderr); the server exits 0 once
 * stdin closes (or on SIGINT/SIGTERM), after answering what it was asked, within 2.5 s.
 */
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { PatchClient, type Workspace } from '../../client/index.ts';
import { createRegistry, resolveStateRoot, resolveTaskTimeoutMs } from '../cli/runtime.ts';
import { serveConnection } from '../server/connection.ts';
import { createLogger, describeError } from '../server/logger.ts';
import { packageInfo } from '../server/packageInfo.ts';
import { claimStdout } from '../server/stdoutGuard.ts';
import { trackPendingRequests } from './pendingRequests.ts';
import { createMcpServer } from './server.ts';

export const MCP_USAGE = 'usage: patchd mcp [-C DIR] [--task-timeout-ms N] [--state-dir DIR]';

const MCP_HELP = `${MCP_USAGE}

Serve the workspace DIR (default: the current directory) as an MCP server over stdin/stdout,
with the tools apply_patch {patch, dry_run?} and read_file {path}. Logs go to stderr; the
server exits when stdin closes.

  -C, --directory DIR  workspace root (default: .)
  --task-timeout-ms N  per-task time limit for the matcher (also $PATCHD_TASK_TIMEOUT_MS)
  --state-dir DIR      where journals and trash live (also $PATCHD_STATE_DIR)
`;

/** Closing after stdin ends may take this long before the process exits anyway. */
const STOP_GRACE_MS = 2_500;

interface McpCommand {
  readonly root: string;
  readonly taskTimeoutMs: number;
  readonly stateRoot: string | undefined;
}

/** Serves until stdin closes; resolves with the exit code. */
export async function runMcp(args: readonly string[]): Promise<number> {
  const parsed = parseMcpArgs(args);
  if (parsed === 'help') {
    process.stdout.write(MCP_HELP);
    return 0;
  }
  if (typeof parsed === 'string') {
    process.stderr.write(`patchd mcp: ${parsed}\n${MCP_USAGE}\n`);
    return 2;
  }
  const wire = claimStdout();
  const log = createLogger();
  const registry = createRegistry({ taskTimeoutMs: parsed.taskTimeoutMs, log, stateRoot: parsed.stateRoot });
  const toDaemon = new PassThrough();
  const fromDaemon = new PassThrough();
  const session = serveConnection({ input: toDaemon, output: fromDaemon, registry, log, onExit: () => {} });
  const client = await PatchClient.connect(fromDaemon, toDaemon, { clientInfo: { name: 'patchd-mcp' } });

  const stopRequested = new Promise<string>((resolve) => {
    process.stdin.once('end', () => resolve('input closed')).once('close', () => resolve('input closed'));
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
  const transport = new StdioServerTransport(process.stdin, wire);
  await server.connect(transport);
  const pending = trackPendingRequests(transport);
  log.info('mcp serving', { pid: process.pid, root: workspace.root });

  log.info('stopping', { reason: await stopRequested });
  setTimeout(() => process.exit(0), STOP_GRACE_MS).unref();
  try {
    await pending.answered();
    await server.close();
    await client.close();
    toDaemon.end();
    await session.closed;
    await registry.closeAll();
  } catch (error) {
    log.error('close failed', describeError(error));
  }
  await new Promise<void>((resolve) => wire.end(resolve));
  return 0;
}

function parseMcpArgs(args: readonly string[]): McpCommand | 'help' | string {
  try {
    const { values } = parseArgs({
      args: [...args],
      options: {
        directory: { type: 'string', short: 'C' },
        'task-timeout-ms': { type: 'string' },
        'state-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
    if (values.help === true) return 'help';
    const taskTimeoutMs = resolveTaskTimeoutMs(values['task-timeout-ms']);
    if (taskTimeoutMs === undefined) return 'the task time limit must be a positive integer of milliseconds';
    return { root: path.resolve(values.directory ?? '.'), taskTimeoutMs, stateRoot: resolveStateRoot(values['state-dir']) };
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
