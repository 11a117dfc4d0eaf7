/**
 * The shared daemon's listening socket: a unix socket only its owner may use (mode 0600). A
 * socket file left by a daemon that died is replaced; a live daemon's is never touched, nor
 * is a path that is not a socket.
 */
import { chmodSync } from 'node:fs';
import { lstat, unlink } from 'node:fs/promises';
import net from 'node:net';
import { hasErrorCode, ifPresent } from '../workspace/ioErrors.ts';

/** The socket path cannot be used: a daemon listens there already, or it is not a socket. */
export class SocketInUseError extends Error {
  override readonly name = 'SocketInUseError';
}

/** Listens on `path` (after clearing a stale socket file); resolves once listening. */
export async function listenOnSocket(path: string, onConnection: (socket: net.Socket) => void): Promise<net.Server> {
  await clearStaleSocket(path);
  const server = net.createServer(onConnection);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // The socket file is created by bind(), inside listen(): under this umask it is never readable by others, not even briefly.
    const umask = process.umask(0o177);
    try {
      server.listen(path, () => resolve());
    } finally {
      process.umask(umask);
    }
  }).catch((error: unknown) => {
    throw hasErrorCode(error, 'EADDRINUSE') ? new SocketInUseError(`${path} is already in use by another process.`) : error;
  });
  chmodSync(path, 0o600);
  return server;
}

async function clearStaleSocket(path: string): Promise<void> {
  const stats = await ifPresent(lstat(path));
  if (stats === undefined) return;
  if (!stats.isSocket()) throw new SocketInUseError(`${path} exists and is not a socket; refusing to replace it.`);
  if (await answers(path)) throw new SocketInUseError(`a patchd daemon is already listening on ${path}; connect to it instead.`);
  await ifPresent(unlink(path));
}

/** Whether something accepts connections on the socket (a stale one refuses them). */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = net.connect(path);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
}
