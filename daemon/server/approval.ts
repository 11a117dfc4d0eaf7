/**
 * Consent for one session's patches on one workspace (`workspace/open` options `approval`,
 * `approvalTimeoutMs`): which paths are denied outright, which patches need asking, and the
 * asking itself — `patch/approve` to the client, bounded by the time limit and by the client
 * going away. Every way of not getting a yes is a no. It covers everything the session writes:
 * its patches (`applyPatch.ts`) and its undos and redos (`undoPatch.ts`).
 */
import type { ApprovalPolicy, ApproveParams, ApproveResult } from '../../protocol/index.ts';
import { engineError, type EngineError, type PlannedFile } from '../engine/index.ts';
import { matchesAnyGlob, PathGlob } from './pathGlob.ts';

export const DEFAULT_APPROVAL_TIMEOUT_MS = 300_000;

/** How often a change may be planned and asked about (or re-checked) before files that keep changing make it `stale_file`. */
export const MAX_APPROVAL_ROUNDS = 5;

/** Sends `patch/approve` to the client; rejects or never settles when the client cannot answer. */
export type AskClient = (params: ApproveParams, signal: AbortSignal) => Promise<ApproveResult>;

export interface ApprovalSettings {
  readonly policy: ApprovalPolicy;
  readonly timeoutMs: number;
}

export class ApprovalGate {
  readonly #settings: ApprovalSettings;
  readonly #askClient: AskClient;
  readonly #askGlobs: readonly PathGlob[];
  readonly #denyGlobs: readonly PathGlob[];

  constructor(settings: ApprovalSettings, askClient: AskClient) {
    this.#settings = settings;
    this.#askClient = askClient;
    const { policy } = settings;
    this.#askGlobs = typeof policy === 'string' ? [] : (policy.ask ?? []).map((glob) => new PathGlob(glob));
    this.#denyGlobs = typeof policy === 'string' ? [] : (policy.deny ?? []).map((glob) => new PathGlob(glob));
  }

  /** The first path a `deny` glob matches. */
  deniedPath(paths: readonly string[]): string | undefined {
    return paths.find((candidate) => matchesAnyGlob(candidate, this.#denyGlobs));
  }

  /** Whether a patch touching `paths` must be approved first. */
  needsApproval(paths: readonly string[]): boolean {
    const { policy } = this.#settings;
    if (typeof policy === 'string') return policy === 'always';
    return paths.some((candidate) => matchesAnyGlob(candidate, this.#askGlobs));
  }

  /** Asks the client; declined, unanswered in time, a failed request and `signal` (the client gone) all count as no. */
  async ask(params: ApproveParams, signal: AbortSignal): Promise<ApproveResult> {
    const controller = new AbortController();
    const stop = (): void => controller.abort();
    signal.addEventListener('abort', stop, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<ApproveResult>((resolve) => {
      timer = setTimeout(() => resolve({ approved: false, reason: `no answer within ${this.#settings.timeoutMs} ms` }), this.#settings.timeoutMs);
    });
    const gone = new Promise<ApproveResult>((resolve) => {
      if (signal.aborted) resolve({ approved: false, reason: 'the client went away' });
      signal.addEventListener('abort', () => resolve({ approved: false, reason: 'the client went away' }), { once: true });
    });
    const asked = this.#askClient(params, controller.signal).catch((error: unknown): ApproveResult => (
      { approved: false, reason: `the approval request failed: ${error instanceof Error ? error.message : String(error)}` }
    ));
    try {
      return await Promise.race([asked, expired, gone]);
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
      controller.abort();
    }
  }
}


/** What a client approves: each file's op, paths and diff. */
export function approvedChange(files: readonly PlannedFile[]): string {
  return JSON.stringify(files.map(({ op, path, fromPath, diff }) => [op, path, fromPath, diff]));
}

/** `what` was declined (or never answered): nothing was written. */
export function declinedError(what: 'patch' | 'undo', reason: string | undefined): EngineError {
  return engineError('declined', `The ${what} was not approved${reason === undefined ? '' : `: ${reason}`}. Nothing was written.`);
}

export function deniedError(path: string): EngineError {
  return engineError('permission_denied', `${path} matches a deny glob of this workspace's approval policy; nothing was written.`, { path });
}

/** The change kept differing from what was approved, or the files kept changing under it. */
export function keptChangingError(what: 'patch' | 'undo'): EngineError {
  return engineError('stale_file', `The files kept changing while the ${what} waited for approval; nothing was written.`);
}
