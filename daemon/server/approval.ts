/**
 * Consent for one session's patches on one workspace (`workspace/open` options `approval`,
 * `approvalTimeoutMs`): which paths are denied outright, which patches need asking, and the
 * asking itself — `patch/approve` to the client, bounded by the time limit and by the client
 * going away. Every way of not getting a yes is a no. It covers everything the session writes:
 * its patches (`applyPatch.ts`) and its undos and redos (`undoPatch.ts`).
 */
import type { ApprovalPolicy, ApproveParams, ApproveResult } from '../../protocol/index.ts';
import { engineError, type EngineError, type PlannedFile } from '../engine/index.ts';
import { fail, ok, type Result } from '../engine/types.ts';
import { GlobBudget, PathGlobSet } from './pathGlob.ts';

export const DEFAULT_APPROVAL_TIMEOUT_MS = 300_000;

/** How often a change may be planned and asked about (or re-checked) before files that keep changing make it `stale_file`. */
export const MAX_APPROVAL_ROUNDS = 5;

/**
 * Steps one patch's paths may cost to check against one list of globs (see `globAutomaton.ts`).
 * Real policies and paths need a tiny share of it (states once built are kept across paths and
 * patches); globs and paths built to be slow reach it within tens of milliseconds, and the patch
 * is refused unchecked rather than holding every client's requests meanwhile.
 */
export const MAX_GLOB_STEPS = 4_000_000;

/** Sends `patch/approve` to the client; rejects or never settles when the client cannot answer. */
export type AskClient = (params: ApproveParams, signal: AbortSignal) => Promise<ApproveResult>;

export interface ApprovalSettings {
  readonly policy: ApprovalPolicy;
  readonly timeoutMs: number;
}

export class ApprovalGate {
  readonly #settings: ApprovalSettings;
  readonly #askClient: AskClient;
  readonly #askGlobs: PathGlobSet;
  readonly #denyGlobs: PathGlobSet;

  constructor(settings: ApprovalSettings, askClient: AskClient) {
    this.#settings = settings;
    this.#askClient = askClient;
    const { policy } = settings;
    this.#askGlobs = new PathGlobSet(typeof policy === 'string' ? [] : policy.ask ?? []);
    this.#denyGlobs = new PathGlobSet(typeof policy === 'string' ? [] : policy.deny ?? []);
  }

  /** The first path a `deny` glob matches; `limit_exceeded` when checking costs more than `MAX_GLOB_STEPS`. */
  deniedPath(paths: readonly string[]): Result<string | undefined> {
    const found = firstMatch(paths, this.#denyGlobs);
    return found.ok ? ok(found.value) : fail(tooCostly('deny', paths.length, found.spent));
  }

  /** Whether a patch touching `paths` must be approved first; `limit_exceeded` when checking costs more than `MAX_GLOB_STEPS`. */
  needsApproval(paths: readonly string[]): Result<boolean> {
    const { policy } = this.#settings;
    if (typeof policy === 'string') return ok(policy === 'always');
    const found = firstMatch(paths, this.#askGlobs);
    return found.ok ? ok(found.value !== undefined) : fail(tooCostly('ask', paths.length, found.spent));
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

/** The first of `paths` one of `globs` matches, all of them sharing one budget; the steps spent when it ran out. */
function firstMatch(paths: readonly string[], globs: PathGlobSet): { readonly ok: true; readonly value: string | undefined } | { readonly ok: false; readonly spent: number } {
  const budget = new GlobBudget(MAX_GLOB_STEPS);
  for (const candidate of paths) {
    const matched = globs.matches(candidate, budget);
    if (matched === undefined) return { ok: false, spent: budget.spent };
    if (matched) return { ok: true, value: candidate };
  }
  return { ok: true, value: undefined };
}

function tooCostly(list: 'ask' | 'deny', paths: number, spent: number): EngineError {
  const message = `Checking the ${paths === 1 ? 'path' : `${paths} paths`} of this patch against the ${list} globs of this workspace's approval policy took more than ${MAX_GLOB_STEPS} steps, so it was refused unchecked; nothing was written. Use fewer or simpler globs (fewer * and ** in a row), shorter paths, or fewer paths per patch.`;
  return engineError('limit_exceeded', message, { limit: { name: 'approvalGlobSteps', max: MAX_GLOB_STEPS, actual: spent } });
}
