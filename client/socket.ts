/** Reaching a shared daemon on its unix socket (`patchd serve --socket PATH`). */
import net from 'node:net';
import { ConnectionClosedError } from './errors.ts';

/** The connected socket; rejects with `ConnectionClosedError` naming the path when nothing listens there. */
export function connectSocket(path: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(path);
    const onError = (error: NodeJS.ErrnoException): void => {
      reject(new ConnectionClosedError(`Could not connect to a patchd daemon at ${path}: ${error.code ?? error.message}.`, { cause: error }));
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.off('error', onError);
      // A reset is reported as the connection closing, never as an uncaught error.
      socket.on('error', () => {});
      resolve(socket);
    });
  });
}

/** Ends the socket and waits (up to `graceMs`) until it is closed. */
export async function endSocket(socket: net.Socket, graceMs: number): Promise<void> {
  if (socket.closed) return;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.end();
  const timer = setTimeout(() => socket.destroy(), graceMs);
  await closed;
  clearTimeout(timer);
}
