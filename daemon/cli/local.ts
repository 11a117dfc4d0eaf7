/**
 * In-process patching for the CLI: the daemon's `patch/apply` and `patch/applyBatch` flows
 * on one workspace, with the engine in-process — no daemon, no worker pool, no RPC.
 */
import { engineError } from '../engine/errors.ts';
import type { ApplyContext } from '../server/applyPatch.ts';
import { createLogger, describeError, type Logger } from '../server/logger.ts';
import { failureOf, ReceiptDraft } from '../server/receipts.ts';
import { resolveRoot } from '../workspace/stateDir.ts';
import { retentionInForce, StateDirError, stateDirFor, Workspace, WorkspaceRootError } from '../workspace/workspace.ts';
import type { Receipt } from '../../protocol/receipt.ts';
import type { FormatName } from '../engine/types.ts';
import { UsageError } from './args.ts';
import { inProcessEngine } from './engine.ts';
import { fsReason } from './input.ts';
import type { Settings } from './settings.ts';

export interface LocalRun extends ApplyContext {
  readonly log: Logger;
}

/**
 * Opens the workspace at `directory`, runs `work`, then closes it. A root or state dir that cannot
 * be used is a usage error. What the open recovered, and log segments it found damaged, are told on stderr first (`recoveryNotice.ts`).
 */
export async function withLocalWorkspace<T>(directory: string, settings: Settings, work: (run: LocalRun) => Promise<T>): Promise<T> {
  const log = createLogger(process.stderr, settings.logLevel);
  const workspace = await openWorkspace(directory, settings.stateRoot, log);
  try {
    if (workspace.recovered.length + workspace.damagedLog.length > 0) (await import('./recoveryNotice.ts')).tellRecovered(workspace);
    return await work({ workspace, pool: inProcessEngine, log, signal: new AbortController().signal });
  } finally {
    await workspace.close();
  }
}

async function openWorkspace(directory: string, stateRoot: string, log: Logger): Promise<Workspace> {
  const root = await resolveRoot(directory, stateRoot).catch((error: unknown) => {
    throw error instanceof WorkspaceRootError ? new UsageError(error.message) : error;
  });
  const stateDir = stateDirFor(root, stateRoot);
  try {
    // Nothing is watched: the process ends with the command, and the cache checks each file's stamp anyway.
    // It prunes as a daemon using the same state root would: with the retention recorded there.
    return await Workspace.open(root, {
      stateDir, maxWatchedPaths: 0, retention: () => retentionInForce(stateRoot), onError: (error) => log.warn('workspace error', describeError(error)),
    });
  } catch (error) {
    if (error instanceof WorkspaceRootError) throw new UsageError(error.message);
    if (!(error instanceof StateDirError)) throw error;
    const reason = error.cause === undefined ? error.reason : fsReason(error.cause);
    throw new UsageError(`cannot use the state directory ${stateDir}: ${reason} (choose another with --state-dir or PATCHD_STATE_DIR)`);
  }
}

/** The receipt of a patch file that holds no patch: rejected with `parse_error` and the reason. */
export function unreadableReceipt(format: FormatName, reason: string): Receipt {
  return new ReceiptDraft(true, format).rejected(failureOf(engineError('parse_error', `${reason}.`)));
}
