/**
 * One atomic unit of a commit (DESIGN, Durability): write the intent journal, then stage every
 * new content as a fsynced temp beside its target while the journal is fsynced; rename in order
 * (re-guarding each path first); fsync the touched directories; drop the journal, durably. Any
 * failure up to and including that drop rolls the tree back to the pre-image held in the
 * journal, so a commit is reported applied only once nothing can undo it.
 */
import { lstat, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { engineError, type EngineError } from '../engine/errors.ts';
import { fail, ok, type Result } from '../engine/types.ts';
import { replaceIfUnchanged } from './confirm.ts';
import type { WorkspaceContext } from './context.ts';
import type { DiskCalls } from './diskCalls.ts';
import { writeDurably } from './durable.ts';
import { sha256Hex, type DiskEntry, type FileOwner } from './files.ts';
import { CommitStepError, attempt, errorFromFs, hasErrorCode, settleAll } from './ioErrors.ts';
import { encodeJournal, type Journal, type JournalEntryInput, type PendingJournal } from './journal.ts';
import type { RecordMeta } from './records.ts';
import { rollBack } from './recovery.ts';
import { moveToTrash, prepareTrashSlot } from './trash.ts';

/** One path a commit changes: new content through `temp`, or moved to `trash`. */
export interface Step {
  readonly path: string;
  readonly absolute: string;
  /** What is on disk now (verified against the plan's snapshot); null when the path is free. */
  readonly before: Extract<DiskEntry, { kind: 'file' }> | null;
  readonly after: Uint8Array | null;
  /** Mode and owner the new content takes (the replaced file's, or a rename's source's). */
  readonly owner: FileOwner | undefined;
  readonly temp: string | null;
  readonly trash: string | null;
}

export interface TransactionIds {
  /** Names the trash folder and the journal record. */
  readonly transactionId: string;
  /** Names the journal file; distinct per unit when one patch commits file by file. */
  readonly journalId: string;
  /** What this unit's undo record needs: with it the journal becomes the record (see `records.ts`) instead of being dropped. */
  readonly meta?: RecordMeta | undefined;
}

/** Runs the steps as one unit: all applied, or none (rolled back). Returns the directories it created. */
export async function runTransaction(context: WorkspaceContext, steps: readonly Step[], ids: TransactionIds): Promise<Result<string[]>> {
  if (steps.length === 0) return ok([]);
  let directories: string[];
  try {
    directories = await missingDirectories(context, steps);
  } catch (error) {
    return fail(toEngineError(error));
  }
  const { journal, chunks } = encodeJournal(ids.transactionId, context.root, steps.map(journalEntryOf), directories, ids.meta);
  let pending: PendingJournal;
  try {
    // A journal that becomes an undo record must survive a power loss like the commit it records.
    pending = await context.journals.begin(ids.journalId, chunks, ids.meta !== undefined || needsDurableJournal(steps));
  } catch (error) {
    return fail(journalFailure(error));
  }
  const created: string[] = [];
  try {
    const journalDurable = pending.durable.catch((error: unknown) => {
      throw new CommitStepError(journalFailure(error));
    });
    await settleAll([journalDurable, stage(context, steps, directories, created)]);
    await renameInOrder(context, steps);
    await syncParents(context, steps, created);
    await retireJournal(context, pending.file, journal);
  } catch (error) {
    return fail(await abandon(context, journal, pending.file, toEngineError(error)));
  }
  return ok(created);
}

/**
 * A one-step commit is a single rename, atomic by itself: after a power loss the tree holds the
 * pre-image or the post-image whatever became of the journal, which then only spares us a stray
 * temp file. So only multi-step commits pay for fsyncing their journal.
 */
function needsDurableJournal(steps: readonly Step[]): boolean {
  return steps.length > 1;
}

function journalEntryOf(step: Step): JournalEntryInput {
  return {
    path: step.path,
    tempName: step.temp === null ? null : path.basename(step.temp),
    trashed: step.trash !== null,
    before: step.before === null ? null : { bytes: step.before.bytes, owner: step.before.owner },
    afterSha256: step.after === null ? null : sha256Hex(step.after),
  };
}

/** Parent directories that targets lack, workspace-relative, parents first. */
async function missingDirectories(context: WorkspaceContext, steps: readonly Step[]): Promise<string[]> {
  const missing = new Set<string>();
  for (const step of steps) {
    if (step.after === null) continue;
    for (let dir = path.posix.dirname(step.path); dir !== '.' && !missing.has(dir); dir = path.posix.dirname(dir)) {
      if (await exists(path.join(context.root, dir), dir)) break;
      missing.add(dir);
    }
  }
  return [...missing].sort((a, b) => a.split('/').length - b.split('/').length);
}

async function exists(absolute: string, relative: string): Promise<boolean> {
  try {
    await lstat(absolute);
    return true;
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT', 'ENOTDIR')) return false;
    throw new CommitStepError(errorFromFs(error, relative, 'inspect'));
  }
}

async function stage(context: WorkspaceContext, steps: readonly Step[], directories: readonly string[], created: string[]): Promise<void> {
  await createDirectories(context, directories, created);
  // A directory just created could have been swapped for a link before we write into it.
  steps.forEach((step) => reguard(context, step.path));
  await settleAll(steps.map((step) => stageStep(step, context.disk)));
}

async function createDirectories(context: WorkspaceContext, directories: readonly string[], created: string[]): Promise<void> {
  for (const directory of directories) {
    await attempt(directory, 'create directory', async () => {
      try {
        await mkdir(path.join(context.root, directory));
        created.push(directory);
      } catch (error) {
        if (!hasErrorCode(error, 'EEXIST')) throw error;
      }
    });
  }
}

async function stageStep(step: Step, disk: DiskCalls): Promise<void> {
  const { temp, trash, after } = step;
  if (temp !== null && after !== null) await attempt(step.path, 'stage new content for', () => writeDurably(temp, after, step.owner, disk));
  if (trash !== null) await attempt(step.path, 'prepare the trash for', () => prepareTrashSlot(trash));
}

function reguard(context: WorkspaceContext, relative: string): void {
  const guarded = context.guard.check(relative);
  if (!guarded.ok) throw new CommitStepError(guarded.error);
}

async function renameInOrder(context: WorkspaceContext, steps: readonly Step[]): Promise<void> {
  for (const [index, step] of steps.entries()) {
    await context.hooks.beforeRename?.(index, step.path);
    reguard(context, step.path);
    const { temp, trash, before } = step;
    const rename = (from: string, to: string) => renameAfterLastLook(step, () => context.disk.renameSync(from, to));
    if (temp !== null) await attempt(step.path, 'rename new content onto', async () => rename(temp, step.absolute));
    else if (trash !== null && before !== null) await attempt(step.path, 'move to trash', () => moveToTrash(step.absolute, trash, before.bytes, rename, context.disk));
  }
}

/** Renames right after checking the target still holds what the commit verified (see `confirm.ts`): an outside write is not renamed over. */
function renameAfterLastLook(step: Step, rename: () => void): void {
  if (replaceIfUnchanged(step.absolute, step.before, rename)) return;
  const message = `${step.path} changed on disk while the patch was being committed; nothing was written.`;
  throw new CommitStepError(engineError('stale_file', message, { path: step.path }));
}

async function syncParents(context: WorkspaceContext, steps: readonly Step[], created: readonly string[]): Promise<void> {
  const parents = new Set<string>();
  for (const step of steps) {
    parents.add(path.dirname(step.absolute));
    if (step.trash !== null) parents.add(path.dirname(step.trash));
  }
  for (const directory of created) parents.add(path.dirname(path.join(context.root, directory)));
  await settleAll([...parents].map((parent) => attempt(parent, 'fsync directory', () => context.syncer.sync(parent))));
}

/** Rolls back after a failure and returns the error to report; keeps the journal when rollback cannot finish. */
async function abandon(context: WorkspaceContext, journal: Journal, file: string, cause: EngineError): Promise<EngineError> {
  let conflicts: readonly string[];
  try {
    ({ conflicts } = await rollBack(context, journal));
  } catch (error) {
    await context.journals.orphan(file).catch(() => undefined);
    const message = `${cause.message} Rolling back also failed (${toEngineError(error).message}); it will finish when the workspace is next opened.`;
    return engineError('io_error', message, { path: cause.path });
  }
  // A journal that cannot be dropped now finds the tree at its pre-image on the next open, and is dropped then.
  await (conflicts.length === 0 ? context.journals.remove(file) : context.journals.setAside(file)).catch(() => undefined);
  if (conflicts.length === 0) return cause;
  const message = `${cause.message} Rolled back, except ${conflicts.join(', ')}, which changed meanwhile and were left as found.`;
  return engineError(cause.code, message, { path: cause.path });
}

/**
 * The end of the commit: once the journal is gone from `journal/` (and that is fsynced) no
 * recovery can undo the commit, so only then may it be reported applied. Failing here rolls it
 * back. The journal is dropped — or, when it carries record meta, moved into `history/` as the
 * transaction's undo record (see `records.ts`).
 */
async function retireJournal(context: WorkspaceContext, file: string, { record }: Journal): Promise<void> {
  const kept = record.meta !== undefined;
  await (kept ? context.records.adopt(file, record) : context.journals.remove(file)).catch((error: unknown) => {
    throw new CommitStepError(journalFailure(error, kept ? 'keep (as the undo record)' : 'drop'));
  });
}

function journalFailure(error: unknown, action = 'write'): EngineError {
  const code = error instanceof Error && 'code' in error ? String(error.code) : String(error);
  return engineError('io_error', `Could not ${action} the commit journal: ${code}.`);
}

function toEngineError(error: unknown): EngineError {
  if (error instanceof CommitStepError) return error.error;
  // Every filesystem step throws a CommitStepError; anything else is a fault in patchd itself.
  return engineError('internal_error', `The commit failed: ${error instanceof Error ? error.message : String(error)}.`);
}
