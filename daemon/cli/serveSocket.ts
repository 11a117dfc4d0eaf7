/**
 * `patchd serve --socket PATH`: the shared daemon. Every connection is its own session over
 * one registry, so clients that open the same root share one workspace (one pool, one
 * watcher, one lock table). `shutdown` and `exit` end only the sending client's session; the
 * daemon itself stops on SIGINT/SIGTERM, removing its socket file.
 */
import { unlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { serveConnection } from '../server/connection.ts';
import { describeError, type Logger } from '../server/logger.ts';
import type { WorkspaceRegistry } from '../server/registry.ts';
import { listenOnSocket, SocketInUseError } from '../server/socketServer.ts';
import { stopOnce } from './stop.ts';

/** Resolves once listening (undefined), or with exit code 2 when the socket cannot be used. */
export async function serveSocket(path: string, registry: WorkspaceRegistry, log: Logger): Promise<number | undefined> {
  const onConnection = (socket: Socket) => serveClient(socket, registry, log);
  try {
    const server = await listenOnSocket(path, onConnection);
    const stop = stopOnce(registry, log, () => {
      server.close();
      removeSocketFile(path);
      process.exit(0);
    });
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => stop(signal));
    // However the process ends (a fault exits 70 from anywhere), the socket file goes with it.
    process.once('exit', () => removeSocketFile(path));
    log.info('serving', { pid: process.pid, socket: path });
    return undefined;
  } catch (error) {
    const message = error instanceof SocketInUseError ? error.message : `cannot listen on ${path}: ${describeError(error).error}`;
    process.stderr.write(`patchd serve: ${message}\n`);
    return 2;
  }
}

function serveClient(socket: Socket, registry: WorkspaceRegistry, log: Logger): void {
  // A client that vanishes resets its socket: that ends its session, never the daemon.
  socket.on('error', (error) => log.debug('client socket error', describeError(error)));
  const session = serveConnection({ input: socket, output: socket, registry, log, onExit: () => socket.end() });
  void session.closed.then(({ brokenStream }) => {
    // A client whose frames cannot be read any more is dropped; the daemon and its other clients go on.
    if (brokenStream !== undefined) log.warn('client dropped: its input stream is broken', { reason: brokenStream });
    socket.destroy();
  });
}

function removeSocketFile(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}
