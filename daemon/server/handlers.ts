/**
 * Request handlers of one session (one client connection). Transport-free: params arrive
 * validated (see `router.ts`), progress goes out through an injected function, failures are
 * thrown as the errors of `failures.ts`.
 */
import {
  FORMATS, PROTOCOL_VERSION,
  type ApplyParams, type CloseWorkspaceParams, type FileReceipt, type InitializeParams, type InitializeResult,
  type OpenWorkspaceParams, type OpenWorkspaceResult, type ProgressToken, type ReadFileParams, type ReadFileResult, type Receipt,
} from '../../protocol/index.ts';
import { applyPatch } from './applyPatch.ts';
import { FileRequestError } from './failures.ts';
import type { Logger } from './logger.ts';
import { packageInfo } from './packageInfo.ts';
import type { WorkspaceRegistry } from './registry.ts';

export interface HandlerDeps {
  readonly registry: WorkspaceRegistry;
  /** Identifies this session's holds on shared workspaces. */
  readonly sessionId: string;
  readonly log: Logger;
  /** Sends one `$/progress` file receipt ahead of the response. */
  readonly sendFileProgress: (token: ProgressToken, value: FileReceipt) => Promise<void>;
}

export class PatchdHandlers {
  readonly #deps: HandlerDeps;
  #shutDown = false;

  constructor(deps: HandlerDeps) {
    this.#deps = deps;
  }

  /** True once `shutdown` was received: later requests are refused. */
  get isShutDown(): boolean {
    return this.#shutDown;
  }

  initialize({ clientInfo }: InitializeParams): InitializeResult {
    this.#deps.log.info('initialize', { client: clientInfo ?? null });
    const { name, version } = packageInfo();
    return { serverInfo: { name, version }, protocolVersion: PROTOCOL_VERSION, formats: [...FORMATS] };
  }

  async openWorkspace({ root }: OpenWorkspaceParams): Promise<OpenWorkspaceResult> {
    const opened = await this.#deps.registry.open(root, this.#deps.sessionId);
    return { workspaceId: opened.id, root: opened.root };
  }

  async closeWorkspace({ workspaceId }: CloseWorkspaceParams): Promise<null> {
    await this.#deps.registry.close(workspaceId, this.#deps.sessionId);
    return null;
  }

  async applyPatch(params: ApplyParams, signal: AbortSignal): Promise<Receipt> {
    const { workspace, pool } = this.#deps.registry.get(params.workspaceId);
    const receipt = await applyPatch(params, { workspace, pool, signal });
    this.#deps.log.debug('patch', { workspaceId: params.workspaceId, status: receipt.status, code: receipt.error?.code, totalMs: receipt.timings.totalMs });
    const token = params.partialResultToken;
    if (token !== undefined && receipt.status !== 'rejected') {
      for (const file of receipt.files) await this.#deps.sendFileProgress(token, file);
    }
    return receipt;
  }

  async readFile({ workspaceId, path }: ReadFileParams): Promise<ReadFileResult> {
    const read = await this.#deps.registry.get(workspaceId).workspace.read(path);
    if (!read.ok) throw new FileRequestError(read.error);
    return read.value;
  }

  shutdown(): null {
    this.#shutDown = true;
    return null;
  }

  /** The session ended: release its workspaces. */
  async dispose(): Promise<void> {
    await this.#deps.registry.releaseSession(this.#deps.sessionId);
  }
}
