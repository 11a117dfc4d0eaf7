/**
 * Request handlers of one session (one client connection). Transport-free: params arrive
 * validated (see `router.ts`), progress and notifications go out through injected functions,
 * failures are thrown as the errors of `failures.ts`.
 */
import {
  FORMATS, PROTOCOL_VERSION,
  type ApplyBatchParams, type ApplyParams, type BatchSummary, type CloseWorkspaceParams, type FileChangedParams,
  type InitializeParams, type InitializeResult, type OpenWorkspaceParams, type OpenWorkspaceResult, type ProgressParams,
  type ListTransactionsParams, type ListTransactionsResult, type ReadFileParams, type ReadFileResult, type Receipt, type SessionDiffParams,
  type Recovery, type SessionDiffResult, type UndoParams,
} from '../../protocol/index.ts';
import { describedDamagedSegment, describeRecovery, RECOVERED_MESSAGE } from '../workspace/recoveryText.ts';
import type { RecoveryReport } from '../workspace/workspace.ts';
import { applyBatch } from './applyBatch.ts';
import { ApprovalGate, DEFAULT_APPROVAL_TIMEOUT_MS, type AskClient } from './approval.ts';
import { applyPatch } from './applyPatch.ts';
import { FileRequestError, UnknownWorkspaceError } from './failures.ts';
import type { Logger } from './logger.ts';
import { packageInfo } from './packageInfo.ts';
import type { WorkspaceRegistry } from './registry.ts';
import { listTransactions, sessionDiff } from './sessionDiff.ts';
import { undoTransaction } from './undoPatch.ts';

/** What a session sends its client besides responses. */
export interface SessionOutput {
  /**
   * One `$/progress` receipt: a file receipt of `patch/apply`, ahead of the response, or a
   * receipt of `patch/applyBatch`, as its patch finishes.
   */
  readonly progress: (params: ProgressParams) => Promise<void>;
  /** A `file/changed` notification. */
  readonly fileChanged: (params: FileChangedParams) => void;
  /** A `patch/approve` request to the client. */
  readonly approve: AskClient;
}

export interface HandlerDeps {
  readonly registry: WorkspaceRegistry;
  /** Identifies this session's holds on shared workspaces. */
  readonly sessionId: string;
  readonly log: Logger;
  readonly output: SessionOutput;
}

const DEFAULT_LIST_LIMIT = 50;

export class PatchdHandlers {
  readonly #deps: HandlerDeps;
  /** This session's approval policy per workspace it opened with one. */
  readonly #approvals = new Map<string, ApprovalGate>();
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

  async openWorkspace({ root, options }: OpenWorkspaceParams): Promise<OpenWorkspaceResult> {
    const session = { id: this.#deps.sessionId, onFileChanged: this.#deps.output.fileChanged };
    const opened = await this.#deps.registry.open(root, session);
    const policy = options?.approval ?? 'never';
    if (policy === 'never') this.#approvals.delete(opened.id);
    else {
      const settings = { policy, timeoutMs: options?.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS };
      this.#approvals.set(opened.id, new ApprovalGate(settings, this.#deps.output.approve));
    }
    const { recovered, damagedLog } = opened;
    for (const report of recovered) {
      const { transactionId, outcome, paths, conflicts, damaged, keptAside } = report;
      this.#deps.log.warn(RECOVERED_MESSAGE, { root: opened.root, transactionId, outcome, paths, conflicts, damaged, keptAside, summary: describeRecovery(report) });
    }
    return {
      workspaceId: opened.id, root: opened.root,
      ...(recovered.length === 0 ? {} : { recovered: recovered.map(recoveryOf) }),
      ...(damagedLog.length === 0 ? {} : { damagedLog: damagedLog.map(describedDamagedSegment) }),
    };
  }

  async closeWorkspace({ workspaceId }: CloseWorkspaceParams): Promise<null> {
    await this.#deps.registry.close(workspaceId, this.#deps.sessionId);
    return null;
  }

  async applyPatch(params: ApplyParams, signal: AbortSignal): Promise<Receipt> {
    const { workspace, pool } = this.#deps.registry.get(params.workspaceId);
    const receipt = await this.#whileOpen(params.workspaceId, applyPatch(params, { workspace, pool, signal, log: this.#deps.log, approval: this.#approvals.get(params.workspaceId) }));
    this.#noteReceipt(params.workspaceId, receipt);
    const token = params.partialResultToken;
    if (token !== undefined && receipt.status !== 'rejected') {
      for (const file of receipt.files) await this.#deps.output.progress({ token, value: file });
    }
    return receipt;
  }

  async applyBatch(params: ApplyBatchParams, signal: AbortSignal): Promise<BatchSummary> {
    const { workspace, pool } = this.#deps.registry.get(params.workspaceId);
    const token = params.partialResultToken;
    const summary = await this.#whileOpen(params.workspaceId, applyBatch(params, {
      workspace, pool, signal, log: this.#deps.log, approval: this.#approvals.get(params.workspaceId),
      onReceipt: async (index, receipt) => {
        this.#noteReceipt(params.workspaceId, receipt);
        if (token !== undefined) await this.#deps.output.progress({ token, value: { index, receipt } });
      },
    }));
    const { total, applied, rejected, partial, replanned } = summary;
    this.#deps.log.debug('batch', { workspaceId: params.workspaceId, total, applied, rejected, partial, replanned });
    return summary;
  }

  async undo(params: UndoParams, signal: AbortSignal): Promise<Receipt> {
    const { workspace } = this.#deps.registry.get(params.workspaceId);
    const receipt = await this.#whileOpen(params.workspaceId, undoTransaction(params, { workspace, signal, approval: this.#approvals.get(params.workspaceId) }));
    this.#noteReceipt(params.workspaceId, receipt);
    return receipt;
  }

  /** `session/diff`; `since: null` (in-process callers only) covers every retained transaction. */
  async sessionDiff({ workspaceId, since }: Omit<SessionDiffParams, 'since'> & { readonly since?: string | null | undefined }): Promise<SessionDiffResult> {
    return this.#whileOpen(workspaceId, sessionDiff(this.#deps.registry.get(workspaceId).workspace, since));
  }

  async listTransactions({ workspaceId, limit }: ListTransactionsParams): Promise<ListTransactionsResult> {
    return this.#whileOpen(workspaceId, listTransactions(this.#deps.registry.get(workspaceId).workspace, limit ?? DEFAULT_LIST_LIMIT));
  }

  async readFile({ workspaceId, path }: ReadFileParams): Promise<ReadFileResult> {
    const read = await this.#whileOpen(workspaceId, this.#deps.registry.get(workspaceId).workspace.read(path));
    if (!read.ok) throw new FileRequestError(read.error);
    this.#deps.registry.noteTouched(workspaceId, this.#deps.sessionId, [read.value.path]);
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

  /**
   * Work on a workspace that was closed under it (the workspace refusing work, its pool stopped)
   * fails as `unknown_workspace`, not as an internal fault; any other failure passes through.
   */
  async #whileOpen<T>(workspaceId: string, work: Promise<T>): Promise<T> {
    try {
      return await work;
    } catch (error) {
      if (!this.#deps.registry.isOpen(workspaceId)) throw new UnknownWorkspaceError(workspaceId, true);
      throw error;
    }
  }

  /** Logs the outcome; the files of a written patch become this session's interest. */
  #noteReceipt(workspaceId: string, receipt: Receipt): void {
    const { status, error, timings, replanned } = receipt;
    this.#deps.log.debug('patch', { workspaceId, status, code: error?.code, replanned, totalMs: timings.totalMs });
    if (status !== 'applied' && status !== 'partial') return;
    const paths = receipt.files.flatMap((file) => (file.fromPath === undefined ? [file.path] : [file.path, file.fromPath]));
    this.#deps.registry.noteTouched(workspaceId, this.#deps.sessionId, paths);
  }
}

/** A recovery as `workspace/open` tells it: `damaged` only when some path was left as found for it, `keptAside` when the journal was kept. */
function recoveryOf({ transactionId, outcome, paths, conflicts, damaged, keptAside }: RecoveryReport): Recovery {
  return {
    transactionId, outcome, paths: [...paths], conflicts: [...conflicts],
    ...(damaged.length === 0 ? {} : { damaged: [...damaged] }), ...(keptAside === undefined ? {} : { keptAside }),
  };
}
