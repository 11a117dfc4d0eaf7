/**
 * Consent for one session's patches on one workspace (`workspace/open` options `approval`,
 * `approvalTimeoutMs`): which paths are denied outright, which patches need asking, and the
 * asking itself — `patch/approve` to the client, bounded by the time limit and by the client
 * going away. Every way of not getting a yes is a no.
 */
import type { ApprovalPolicy, ApproveParams, ApproveResult } from '../../protocol/index.ts';
import { matchesAnyGlob, PathGlob } from './pathGlob.ts';

export const DEFAULT_APPROVAL_TIMEOUT_MS = 300_000;

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

