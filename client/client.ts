/**
 * `PatchClient`: a typed connection to a patchd daemon — one it spawns, a shared one on a unix
 * socket, or one already reachable through a pair of streams. Every call is validated against
 * `protocol/`, has a time limit, and fails with `DaemonExitedError` / `ConnectionClosedError`
 * the moment the daemon goes away.
 */
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import {
  ApproveRequest, ExitNotification, InitializeRequest, OpenWorkspaceRequest, PROTOCOL_VERSION, ShutdownRequest,
  type ApprovalPolicy, type ApproveParams, type ApproveResult, type ClientInfo, type InitializeResult,
} from '../protocol/index.ts';
import { DaemonProcess, type DaemonExit, type DaemonProcessOptions } from './daemonProcess.ts';
import { ConnectionClosedError, DaemonExitedError, ProtocolError } from './errors.ts';
import { RpcChannel, type CallOptions } from './rpc.ts';
import { connectSocket, endSocket } from './socket.ts';
import { Workspace } from './workspace.ts';

/** Options of {@link PatchClient.connect}. */
export interface ConnectOptions {
  /** Default time limit of every call, in ms (default 60 000). Per call: `timeoutMs`. */
  readonly requestTimeoutMs?: number | undefined;
  /** Sent with `initialize` (default `{name: "patchd-client"}`). */
  readonly clientInfo?: ClientInfo | undefined;
}

/** Options of {@link PatchClient.connect} to a shared daemon. */
export interface SocketConnectOptions extends ConnectOptions {
  /** The unix socket a shared daemon listens on (`patchd serve --socket PATH`). */
  readonly socket: string;
}

/** Options of {@link PatchClient.spawn}. */
export interface SpawnOptions extends ConnectOptions, DaemonProcessOptions {
  /** The daemon's per-task time limit for the matcher, in ms (`serve --task-timeout-ms`). */
  readonly taskTimeoutMs?: number | undefined;
}

/** Decides on a patch the daemon asks about (`patch/approve`): `true`/`false`, or `{approved, reason}`. */
export type ApproveHandler = (request: ApproveParams) => boolean | ApproveResult | Promise<boolean | ApproveResult>;

/** Options of {@link PatchClient.openWorkspace}. */
export interface OpenWorkspaceOptions extends CallOptions {
  /**
   * Which of this client's patches the daemon asks about before writing: `never` (default),
   * `always`, or `{ask: globs, deny: globs}` (a patch touching a `deny` path is rejected
   * `permission_denied` unasked). Its undos and redos are held to the same policy. The answer
   * comes from `onApprove`.
   */
  readonly approval?: ApprovalPolicy | undefined;
  /** How long the daemon waits for `onApprove` before rejecting the patch `declined` (default 300 000 ms). */
  readonly approvalTimeoutMs?: number | undefined;
  /** Decides each patch the daemon asks about; without it every such patch is declined. */
  readonly onApprove?: ApproveHandler | undefined;
}

const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const SHUTDOWN_TIMEOUT_MS = 5_000;
/**
 * How long a daemon whose output closed has to exit before its requests fail as a closed
 * connection rather than with how it exited; a daemon ending closes its workers after its
 * output, which takes seconds on a starved machine.
 */
const EXIT_AFTER_OUTPUT_GRACE_MS = 5_000;

/** How this client reaches its daemon, and how it lets go of it. */
interface Endpoint {
  /** A spawned daemon, owned by this client. */
  readonly daemon?: DaemonProcess | undefined;
  /** The daemon serves other clients too: closing this client must not shut it down. */
  readonly shared: boolean;
  /** Releases the transport once the channel is closed. */
  readonly release: () => Promise<unknown>;
}

const STREAMS: Endpoint = { shared: false, release: async () => {} };

export class PatchClient implements AsyncDisposable {
  /** The daemon's name and version, from `initialize`. */
  readonly serverInfo: InitializeResult['serverInfo'];
  /** Every `format` name the daemon accepts besides `auto`. */
  readonly formats: readonly string[];
  readonly #rpc: RpcChannel;
  readonly #endpoint: Endpoint;
  /** `onApprove` per workspace id. */
  readonly #approvers = new Map<string, ApproveHandler>();
  #closing: Promise<void> | undefined;

  private constructor(rpc: RpcChannel, info: InitializeResult, endpoint: Endpoint) {
    this.#rpc = rpc;
    this.#endpoint = endpoint;
    this.serverInfo = info.serverInfo;
    this.formats = info.formats;
    rpc.onRequest(ApproveRequest, async (request) => {
      const approver = this.#approvers.get(request.workspaceId);
      if (approver === undefined) return { approved: false, reason: 'this client has no onApprove handler' };
      const answer = await approver(request);
      return typeof answer === 'boolean' ? { approved: answer } : answer;
    });
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
    return PatchClient.#initialize(rpc, options, { daemon, shared: false, release: () => daemon.stop(SHUTDOWN_TIMEOUT_MS) });
  }

  /**
   * Joins a shared daemon on its unix socket (`patchd serve --socket PATH`): `connect({ socket })`.
   * Clients that open the same root there share one workspace — one pool, one watcher, one
   * lock table. `close()` only disconnects; the daemon keeps serving the others.
   */
  static async connect(options: SocketConnectOptions): Promise<PatchClient>;
  /** Speaks to a daemon over existing streams (its stdout as `readable`, its stdin as `writable`). */
  static async connect(readable: NodeJS.ReadableStream, writable: NodeJS.WritableStream, options?: ConnectOptions): Promise<PatchClient>;
  static async connect(
    target: SocketConnectOptions | NodeJS.ReadableStream, writable?: NodeJS.WritableStream, options: ConnectOptions = {},
  ): Promise<PatchClient> {
    if ('socket' in target && typeof target.socket === 'string') return PatchClient.#connectSocket(target);
    const connection = createConnection(target as NodeJS.ReadableStream, writable!);
    const rpc = new RpcChannel(connection, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    connection.onClose(() => rpc.close(new ConnectionClosedError('The connection to the patchd daemon closed.')));
    return PatchClient.#initialize(rpc, options, STREAMS);
  }

  static async #connectSocket(options: SocketConnectOptions): Promise<PatchClient> {
    const socket = await connectSocket(options.socket);
    const connection = createConnection(socket, socket);
    const rpc = new RpcChannel(connection, options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    const lost = () => rpc.close(new ConnectionClosedError(`The connection to the patchd daemon at ${options.socket} closed.`));
    connection.onClose(lost);
    socket.once('close', lost);
    return PatchClient.#initialize(rpc, options, { shared: true, release: () => endSocket(socket, SHUTDOWN_TIMEOUT_MS) });
  }

  static async #initialize(rpc: RpcChannel, options: ConnectOptions, endpoint: Endpoint): Promise<PatchClient> {
    try {
      const info = await rpc.request(InitializeRequest, { clientInfo: options.clientInfo ?? { name: 'patchd-client' } });
      if (info.protocolVersion !== PROTOCOL_VERSION) {
        throw new ProtocolError(`The daemon speaks protocol version ${info.protocolVersion}; this client speaks ${PROTOCOL_VERSION}.`);
      }
      return new PatchClient(rpc, info, endpoint);
    } catch (error) {
      rpc.close(new ConnectionClosedError('The client could not initialize the daemon.'));
      await (endpoint.daemon?.stop(0) ?? endpoint.release());
      throw error;
    }
  }

  /** Process id of a spawned daemon (undefined with `connect`). */
  get pid(): number | undefined {
    return this.#endpoint.daemon?.child.pid;
  }

  /** True once the connection is closed, by `close()` or because the daemon went away. */
  get closed(): boolean {
    return this.#rpc.closedBy !== undefined;
  }

  /**
   * Opens (or joins) the workspace rooted at `root`. A root that is not a directory rejects
   * with an `RpcError` whose `data.code` is `bad_root`.
   */
  async openWorkspace(root: string, options: OpenWorkspaceOptions = {}): Promise<Workspace> {
    const { approval, approvalTimeoutMs, onApprove } = options;
    const workspaceOptions = approval === undefined && approvalTimeoutMs === undefined ? undefined : { approval, approvalTimeoutMs };
    const opened = await this.#rpc.request(OpenWorkspaceRequest, { root, options: workspaceOptions }, options);
    if (onApprove !== undefined) this.#approvers.set(opened.workspaceId, onApprove);
    return new Workspace(this.#rpc, opened.workspaceId, opened.root, opened.recovered, opened.damagedLog);
  }

  /**
   * Shuts the daemon down politely (`shutdown`, then `exit`) and closes the connection; a
   * spawned daemon is killed if it has not exited within a few seconds. A shared daemon (on a
   * socket) is only disconnected from; every workspace this client held is released. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#shutdown();
    return this.#closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #shutdown(): Promise<void> {
    if (this.#rpc.closedBy === undefined && !this.#endpoint.shared) {
      try {
        await this.#rpc.request0(ShutdownRequest, { timeoutMs: SHUTDOWN_TIMEOUT_MS });
        await this.#rpc.notify0(ExitNotification);
      } catch {
        // The daemon is already gone or unresponsive: closing proceeds regardless.
      }
    }
    this.#rpc.close(new ConnectionClosedError('The client was closed.'));
    await this.#endpoint.release();
  }
}

function createConnection(readable: NodeJS.ReadableStream, writable: NodeJS.WritableStream): MessageConnection {
  const reader = new StreamMessageReader(readable);
  // Its partial-message timer (for a frame cut short, as by a daemon killed mid-write) re-arms
  // every 10 s forever, even after the stream closes, keeping the host process alive; nothing uses it.
  reader.partialMessageTimeout = 0;
  return createMessageConnection(reader, new StreamMessageWriter(writable));
}

function exitedError(exit: DaemonExit, daemon: DaemonProcess): DaemonExitedError {
  return new DaemonExitedError(exit.code, exit.signal, daemon.stderrTail, exit.error === undefined ? undefined : { cause: exit.error });
}

/** The daemon's output closed: report its exit if it follows shortly, else a closed connection. */
async function closeAfterExit(rpc: RpcChannel, daemon: DaemonProcess): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), EXIT_AFTER_OUTPUT_GRACE_MS)));
  const exit = await Promise.race([daemon.exited, grace]);
  clearTimeout(timer);
  rpc.close(exit === undefined ? new ConnectionClosedError('The patchd daemon closed its output.') : exitedError(exit, daemon));
}
