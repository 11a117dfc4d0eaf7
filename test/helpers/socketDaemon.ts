/**
 * A shared daemon (`patchd serve --socket`) spawned for a test, with its socket and state in
 * a private temp dir; `connect()` gives clients of it. Disposing stops it (SIGTERM) and
 * removes the dir.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PatchClient, type ConnectOptions } from '../../client/index.ts';
import { daemonArgs } from '../../client/daemonProcess.ts';

export interface DaemonExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

export class SocketDaemon implements AsyncDisposable {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<DaemonExit>;
  stderr = '';
  readonly #dir: string;
  readonly #clients = new Set<PatchClient>();

  private constructor(readonly socket: string, dir: string, env: NodeJS.ProcessEnv, extraArgs: readonly string[], entry: readonly string[]) {
    this.#dir = dir;
    const args = [...entry, '--socket', socket, '--state-dir', this.stateRoot, ...extraArgs];
    this.child = spawn(process.execPath, args, { stdio: 'pipe', env: { ...process.env, ...env } });
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
    this.child.stderr.setEncoding('utf8').on('data', (text: string) => (this.stderr += text));
  }

  /** The state root the daemon keeps its workspaces' state under (its `--state-dir`). */
  get stateRoot(): string {
    return join(this.#dir, 'state');
  }

  /** Starts a daemon on `socket` (default: a fresh path) and resolves once it listens. */
  /** `entry`: how to start the daemon up to `serve` (e.g. `RUNAWAY_DAEMON`). */
  static async start(options: { env?: NodeJS.ProcessEnv; socket?: string; args?: readonly string[]; entry?: readonly string[] } = {}): Promise<SocketDaemon> {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'patchd-sock-')));
    const daemon = new SocketDaemon(options.socket ?? join(dir, 'patchd.sock'), dir, options.env ?? {}, options.args ?? [], options.entry ?? daemonArgs());
    await daemon.#listening();
    return daemon;
  }

  /** A client of this daemon (closed when the daemon is disposed, if not before). */
  async connect(options: ConnectOptions = {}): Promise<PatchClient> {
    const client = await PatchClient.connect({ socket: this.socket, ...options });
    this.#clients.add(client);
    return client;
  }

  /** A raw connection to this daemon that reads nothing (paused once connected): a client that leaves its answers unread. */
  async connectUnread(): Promise<net.Socket> {
    const socket = net.connect(this.socket);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.pause();
    return socket;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await Promise.allSettled([...this.#clients].map((client) => client.close()));
    this.child.kill('SIGTERM');
    await this.exited;
    rmSync(this.#dir, { recursive: true, force: true });
  }

  /** Resolves with the first log line (already written or to come) that matches; rejects if the daemon exits first. */
  logged(match: (line: string) => boolean): Promise<string> {
    return new Promise((resolve, reject) => {
      const onData = () => {
        const line = this.stderr.split('\n').find(match);
        if (line === undefined) return;
        this.child.stderr.off('data', onData);
        resolve(line);
      };
      this.child.stderr.on('data', onData);
      onData();
      void this.exited.then((exit) => reject(new Error(`the daemon exited (${exit.code ?? exit.signal}) first:\n${this.stderr}`)));
    });
  }

  #listening(): Promise<void> {
    return this.logged((line) => line.includes('"msg":"serving"')).then(() => undefined);
  }
}
