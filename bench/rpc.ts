/**
 * A bare JSON-RPC connection to a spawned, compiled daemon: what the benchmarks talk through.
 * It skips the client library's result validation, so a patch round trip and an unknown-method
 * round trip cost the client the same and their difference is the daemon's own work.
 */
import { createMessageConnection, ResponseError, StreamMessageReader, StreamMessageWriter, type MessageConnection } from 'vscode-jsonrpc/node';
import { DaemonProcess } from '../client/daemonProcess.ts';
import { ApplyPatchRequest, CloseWorkspaceRequest, InitializeRequest, OpenWorkspaceRequest, RpcErrorCodes, type ApplyParams, type Receipt } from '../protocol/index.ts';

export class BenchDaemon implements AsyncDisposable {
  readonly #process: DaemonProcess;
  readonly #connection: MessageConnection;

  private constructor(process: DaemonProcess) {
    this.#process = process;
    this.#connection = createMessageConnection(new StreamMessageReader(process.child.stdout), new StreamMessageWriter(process.child.stdin));
    this.#connection.listen();
  }

  /** Spawns `patchd serve` from `dist/` (the compiled daemon) and initializes it. */
  static async start(serveArgs: readonly string[] = []): Promise<BenchDaemon> {
    const daemon = new BenchDaemon(new DaemonProcess({ serveArgs }));
    await daemon.request(InitializeRequest.method, { clientInfo: { name: 'patchd-bench' } });
    return daemon;
  }

  get pid(): number {
    return this.#process.child.pid!;
  }

  request(method: string, params: object): Promise<unknown> {
    return this.#connection.sendRequest(method, params);
  }

  async openWorkspace(root: string): Promise<string> {
    const opened = (await this.request(OpenWorkspaceRequest.method, { root })) as { workspaceId: string };
    return opened.workspaceId;
  }

  /** `patch/apply`; throws unless the receipt has the status `expected`. */
  async apply(params: ApplyParams, expected: Receipt['status']): Promise<Receipt> {
    const receipt = (await this.request(ApplyPatchRequest.method, params)) as Receipt;
    if (receipt.status !== expected) throw new Error(`expected ${expected}, got ${receipt.status}: ${receipt.error?.message ?? ''}`);
    return receipt;
  }

  /** A method the daemon does not have: the cheapest round trip it can answer. */
  async unknownMethod(): Promise<void> {
    try {
      await this.request('bench/noSuchMethod', {});
    } catch (error) {
      if (error instanceof ResponseError && error.code === RpcErrorCodes.MethodNotFound) return;
      throw error;
    }
    throw new Error('the daemon answered a method it does not have');
  }

  async closeWorkspace(workspaceId: string): Promise<void> {
    await this.request(CloseWorkspaceRequest.method, { workspaceId });
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.#connection.dispose();
    await this.#process.stop(5_000);
  }
}
