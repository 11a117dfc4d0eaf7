/**
 * `PatchClient`: a typed connection to a patchd daemon — one it spawns, or one already
 * reachable through a pair of streams. Every call is validated against `protocol/`, has a
 * time limit, and fails with `DaemonExitedError` / `ConnectionClosedError` the moment the
 * daemon goes away.
 */
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import {
  ExitNotification, InitializeRequest, OpenWorkspaceRequest, PROTOCOL_VERSION, ShutdownRequest,
  type ClientInfo, type InitializeResult,
} from '../protocol/index.ts';
import { DaemonProcess, type DaemonExit, type DaemonProcessOptions } from './daemonProcess.ts';
import { ConnectionClosedError, DaemonExitedError, ProtocolError } from './errors.ts';
import { RpcChannel, type CallOptions } from './rpc.ts';
import { Workspace } from './workspace.ts';

/** Options of {@link PatchClient.connect}. */
export interface ConnectOptions {
  /** Default time limit of every call, in ms (default 60 000). Per call: `timeoutMs`. */
  readonly requestTimeoutMs?: number | undefined;
  /** Sent with `initialize` (default `{name: "patchd-client"}`). */
  readonly clientInfo?: ClientInfo | undefined;
}

/** Options of {@link PatchClient.spawn}. */
export interface SpawnOptions extends ConnectOptions, DaemonProcessOptions {
  /** The daemon's per-task time limit for the matcher, in ms (`serve --task-timeout-ms`). */
  readonly taskTimeoutMs?: number | undefined;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const SHUTDOWN_TIMEOUT_MS = 5_000;

export class PatchClient implements AsyncDisposable {
  /** The daemon's name and version, from `initialize`. */
  readonly serverInfo: InitializeResult['serverInfo'];
  /** Every `format` name the daemon accepts besides `auto`. */
  readonly formats: readonly string[];
  readonly #rpc: RpcChannel;
  readonly #daemon: DaemonProcess | undefined;
  #closing: Promise<void> | undefined;

  private constructor(rpc: RpcChannel, info: InitializeResult, daemon: DaemonProcess | undefined) {
    this.#rpc = rpc;
    this.#daemon = daemon;
    this.serverInfo = info.serverInfo;
    this.formats = info.formats;
  }

  /**
   * Starts this package's daemon (`patchd serve`) as a child process and initializes it.
   * Running from TypeScript source it runs `daemon/main.ts` under tsx, else `dist/daemon/main.js`.
   */
  static async spawn(options: SpawnOptions = {}): Promise<PatchClient> {
    const timeLimit = options.taskTimeoutMs === undefined ? [] : ['--task-timeout-ms', String(options.taskTimeoutMs)];
    const daemon = new DaemonProcess({ ...options, serveArgs: [...(options.serveArgs ?? []), ...timeLimit] });
    const connection = createConnection(daemon.child.stdout, daemon.child.stdin);
    const rpc = new RpcChannel(connection, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    void daemon.exited.then((exit) => rpc.close(exitedError(exit, daemon)));
    connection.onClose(() => void closeAfterExit(rpc, daemon));
    return PatchClient.#initialize(rpc, options, daemon);
  }

  /** Speaks to a daemon over existing streams (its stdout as `readable`, its stdin as `writable`). */
  static async connect(readable: NodeJS.ReadableStream, writable: NodeJS.WritableStream, options: ConnectOptions = {}): Promise<PatchClient> {
    const connection = createConnection(readable, writable);
    const rpc = new RpcChannel(connection, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    connection.onClose(() => rpc.close(new ConnectionClosedError('The connection to the patchd daemon closed.')));
    return PatchClient.#initialize(rpc, options, undefined);
  }

  static async #initialize(rpc: RpcChannel, options: ConnectOptions, daemon: DaemonProcess | undefined): Promise<PatchClient> {
    try {
      const info = await rpc.request(InitializeRequest, { clientInfo: options.clientInfo ?? { name: 'patchd-client' } });
      if (info.protocolVersion !== PROTOCOL_VERSION) {
        throw new ProtocolError(`The daemon speaks protocol version ${info.protocolVersion}; this client speaks ${PROTOCOL_VERSION}.`);
      }
      return new PatchClient(rpc, info, daemon);
    } catch (error) {
      rpc.close(new ConnectionClosedError('The client could not initialize the daemon.'));
      await daemon?.stop(0);
      throw error;
    }
  }

  /** Process id of a spawned daemon (undefined with `connect`). */
  get pid(): number | undefined {
    return this.#daemon?.child.pid;
  }

  /** True once the connection is closed, by `close()` or because the daemon went away. */
  get closed(): boolean {
    return this.#rpc.closedBy !== undefined;
  }

  /**
   * Opens (or joins) the workspace rooted at `root`. A root that is not a directory rejects
   * with an `RpcError` whose `data.code` is `bad_root`.
   */
  async openWorkspace(root: string, options: CallOptions = {}): Promise<Workspace> {
    const opened = await this.#rpc.request(OpenWorkspaceRequest, { root }, options);
    return new Workspace(this.#rpc, opened.workspaceId, opened.root);
  }

  /**
   * Shuts the daemon down politely (`shutdown`, then `exit`) and closes the connection; a
   * spawned daemon is killed if it has not exited within a few seconds. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #shutdown(): Promise<void> {
    if (this.#rpc.closedBy === undefined) {
      try {
        await this.#rpc.request0(ShutdownRequest, { timeoutMs: SHUTDOWN_TIMEOUT_MS });
        await this.#rpc.notify0(ExitNotification);
      } catch {
        // The daemon is already gone or unresponsive: closing proceeds regardless.
      }
    }
    this.#rpc.close(new ConnectionClosedError('The client was closed.'));
    await this.#daemon?.stop(SHUTDOWN_TIMEOUT_MS);
  }
}

function createConnection(readable: NodeJS.ReadableStream, writable: NodeJS.WritableStream): MessageConnection {
  return createMessageConnection(new StreamMessageReader(readable), new StreamMessageWriter(writable));
}

function exitedError(exit: DaemonExit, daemon: DaemonProcess): DaemonExitedError {
  return new DaemonExitedError(exit.code, exit.signal, daemon.stderrTail, exit.error === undefined ? undefined : { cause: exit.error });
}

/** The daemon's output closed: report its exit if it follows shortly, else a closed connection. */
async function closeAfterExit(rpc: RpcChannel, daemon: DaemonProcess): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 1_000)));
  const exit = await Promise.race([daemon.exited, grace]);
  clearTimeout(timer);
  rpc.close(exit === undefined ? new ConnectionClosedError('The patchd daemon closed its output.') : exitedError(exit, daemon));
}
