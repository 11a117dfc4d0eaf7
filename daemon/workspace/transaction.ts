/**
 * One atomic unit of a commit (DESIGN, Durability): log the intent (its journal, in the shared
 * commit log: `commitLog.ts`) while staging every new content as a fsynced temp beside its
 * target; rename in order (re-guarding each path, with a last look: `confirm.ts`); fsync the
 * touched directories; log it done. The undo record is written meanwhile, once the intent is
 * durable. Any failure up to and including that last step rolls the tree back to the pre-image
 * held in the journal, so a commit is reported applied only once nothing can undo it. A commit
 * that replaces a file by a directory, or a directory by a file, takes its steps in another order
 * (`commitOrder.ts`).
 *
 * A small one-file write takes a shorter path: its intent also logs the post-image (a redo
 * section, `journal.ts`), so once that is durable the temp needs no fsync before its rename, and
 * the commit is reported once renamed; its record and the fsyncs of the file and its directory,
 * then the done frame, follow while its path stays locked (`settling.ts`). Recovery finds such a
 * commit unsettled: it rolls it forward when the file holds the post-image (and fsyncs it), and
 * when a reboot since may have lost the rename, it writes the post-image from the log over the
 * pre-image (`recovery.ts`).
 */
import { lstat } from 'node:fs/promises';
import { setImmediate } from 'node:timers/promises';
import path from 'node:path';
import { engineError, type EngineError } from '../engine/errors.ts';
import { fail, ok, type Result } from '../engine/types.ts';
import { replaceIfUnchanged } from './confirm.ts';
import type { WorkspaceContext } from './context.ts';
import { makeDirectory, writeDurably, writeUnsynced } from './durable.ts';
import { sha256Hex, type DiskEntry, type FileOwner } from './files.ts';
import { CommitStepError, attempt, describeFsError, errorFromFs, hasErrorCode, settleAll } from './ioErrors.ts';
import type { Intent } from './commitLog.ts';
import { orderSteps, stagedFirst, type CommitOrder } from './commitOrder.ts';
import { SYNC_IO_MAX_BYTES } from './diskCalls.ts';
import { encodeJournal, encodeRedo, PROCESS_NONCE, type Journal, type JournalEntryInput } from './journal.ts';
import { mapLimited } from './limited.ts';
import type { RecordMeta } from './records.ts';
import { rollBack } from './recovery.ts';
import { RetryLater } from './settling.ts';
import { removeEmptiedDirectory } from './replacedDirectories.ts';
import { ownersOfDirectoriesAbove, recreateParents } from './tidy.ts';
import { moveToTrash, prepareTrashSlot } from './trash.ts';

/** One path a commit changes: new content through `temp`, or moved to `trash`. */
export interface Step {
  readonly path: string;
  readonly absolute: string;
  /** What is on disk now (verified against the plan's snapshot); null when the path is free. */
  readonly before: Extract<DiskEntry, { kind: 'file' }> | null;
  /** sha256 of `before`'s bytes (taken from the snapshot they equal, whose hash is known), kept in the undo record; null with `before`. */
  readonly beforeSha256: string | null;
  readonly after: Uint8Array | null;
  /** Mode and owner the new content takes (the replaced file's, or a rename's source's). */
  readonly owner: FileOwner | undefined;
  readonly temp: string | null;
  readonly trash: string | null;
}

export interface TransactionIds {
  /** Names the trash folder and the journal record. */
  readonly transactionId: string;
  /** Names the journal; distinct per unit when one patch commits file by file. */
  readonly journalId: string;
  /** What this unit's undo record needs besides the journal (see `records.ts`). */
  readonly meta: RecordMeta;
}

/** What a commit does to directories besides making the parents its files need with the default mode. */
export interface DirectoryChanges {
  /** The directories it replaces by a file (and those below them), deepest first, holding only paths its steps take away (see `commitOrder.ts`). */
  readonly removed: readonly string[];
  /** The mode and owner a directory it makes takes instead of the default, by path. */
  readonly owners?: ReadonlyMap<string, FileOwner> | undefined;
}

/** Runs the steps as one unit: all applied, or none (rolled back). Returns the directories it created. */
export async function runTransaction(
  context: WorkspaceContext, steps: readonly Step[], ids: TransactionIds, { removed, owners }: DirectoryChanges = { removed: [] },
): Promise<Result<string[]>> {
  if (steps.length === 0) return ok([]);
  let directories: string[];
  try {
    directories = await missingDirectories(context, steps);
  } catch (error) {
    return fail(toEngineError(error));
  }
  const order = orderSteps(steps, directories, removed);
  const gone = steps.filter((step) => step.after === null).map((step) => step.path);
  const { journal, chunks } = encodeJournal(ids.transactionId, context.root, steps.map(journalEntryOf), directories, ids.meta, removed, ownersOfDirectoriesAbove(context.root, gone));
  const deferred = reportsBeforeSync(steps, directories);
  const redo = deferred ? encodeRedo(context.bootId, steps.map((step) => step.after)) : undefined;
  const intent = context.log.intent(ids.journalId, chunks, context.records.nameFor(journal.record, ids.meta), redo);
  const created: string[] = [];
  const making: Making = { owners, created };
  const durable = intent.durable.catch((error: unknown) => {
    throw new CommitStepError(logFailure(error, 'log the commit'));
  });
  // Not before the intent is durable: a crash before the commit is done finds the intent unsettled, and recovery discards the record.
  const recorded = deferred ? undefined : durable.then(() => writeRecord(context, intent, chunks));
  recorded?.catch(() => undefined);
  // Descriptors of temps written without an fsync (`deferred`): fsynced once renamed.
  const unsynced: number[] = [];
  try {
    // No temp goes into the tree before the intent that lets recovery remove it is written.
    await intent.written;
    await settleAll([durable, stage(context, stagedFirst(order), order.early, making, deferred ? unsynced : undefined)]);
    await renameInOrder(context, order, making);
    if (deferred) {
      const descriptors = unsynced.splice(0);
      // Begun on the event loop's next turn: the report, which follows on microtasks, goes out
      // first, not after the settle's synchronous share (the record's write, the fsync hand-offs).
      const settled = setImmediate().then(() => settle(context, steps, created, descriptors, intent, chunks));
      context.settling.add(steps.map((step) => step.path), settled);
    } else {
      await syncParents(context, steps, created, removed);
      await recorded;
      await finish(context, intent, steps.length === 1 ? 'written' : 'durable');
    }
  } catch (error) {
    for (const fd of unsynced) context.disk.closeSync(fd);
    // Rolling back discards the record: its write must have ended first.
    await recorded?.catch(() => undefined);
    return fail(await abandon(context, journal, chunks, intent, toEngineError(error)));
  }
  return ok(created);
}

/**
 * Whether the commit is one small write into a directory that exists: reported before its fsyncs
 * (see the module comment). Small as the log counts it: its frames, post-image included, are
 * written synchronously.
 */
function reportsBeforeSync(steps: readonly Step[], directories: readonly string[]): boolean {
  const [step] = steps;
  return steps.length === 1 && directories.length === 0 && step!.temp !== null && step!.after !== null && step!.after.byteLength <= SYNC_IO_MAX_BYTES;
}

/**
 * After the report of a commit whose post-image is in the log: writes its record while the
 * renamed file and its directory are fsynced, then logs it done (history queries wait for this:
 * `Workspace.settled`). A failure leaves the intent unsettled, for recovery to finish from the
 * log when the workspace is next opened (the commit is not undone: it was reported) — unless
 * only the record failed (no space, its folder removed): that is tried again while the
 * workspace stays open (`RetryLater`), since a host that never reopens would never see it.
 */
async function settle(
  context: WorkspaceContext, steps: readonly Step[], created: readonly string[], unsynced: readonly number[], intent: Intent, chunks: readonly Uint8Array[],
): Promise<void> {
  const paths = steps.map((step) => step.path).join(', ');
  const notDurable = (error: unknown): Error => new Error(`${paths} was reported applied but is not durable yet (${toEngineError(error).message}); the next open of the workspace finishes it from the commit log.`);
  const syncing = settleAll(unsynced.map((fd) => context.disk.fsync(fd))).finally(() => unsynced.forEach((fd) => context.disk.closeSync(fd)));
  const [synced, recorded] = await Promise.allSettled([syncing.then(() => syncParents(context, steps, created, [])), writeRecord(context, intent, chunks)]);
  if (synced.status === 'rejected') throw notDurable(synced.reason);
  if (recorded.status === 'rejected') {
    const message = `${paths} was reported applied but its undo record could not be written (${toEngineError(recorded.reason).message}); it is written once it can be, while the workspace is open, or by its next open from the commit log.`;
    throw new RetryLater(message, async () => {
      await writeRecord(context, intent, chunks);
      await finish(context, intent, 'written');
    });
  }
  await finish(context, intent, 'written').catch((error: unknown) => {
    throw notDurable(error);
  });
}

function journalEntryOf(step: Step): JournalEntryInput {
  return {
    path: step.path,
    tempName: step.temp === null ? null : path.basename(step.temp),
    trashed: step.trash !== null,
    before: step.before === null ? null : { bytes: step.before.bytes, owner: step.before.owner, sha256: step.beforeSha256 ?? sha256Hex(step.before.bytes) },
    afterSha256: step.after === null ? null : sha256Hex(step.after),
  };
}

/**
 * Parent directories that targets lack, workspace-relative, parents first: those where nothing
 * is, and a file the commit takes away to make a directory there (a type change).
 */
async function missingDirectories(context: WorkspaceContext, steps: readonly Step[]): Promise<string[]> {
  const gone = new Set(steps.filter((step) => step.after === null).map((step) => step.path));
  const missing = new Set<string>();
  for (const step of steps) {
    // A file that is there (just verified, and locked) has its parents.
    if (step.after === null || step.before !== null) continue;
    for (let dir = path.posix.dirname(step.path); dir !== '.' && !missing.has(dir); dir = path.posix.dirname(dir)) {
      if (gone.has(dir)) {
        missing.add(dir);
        break;
      }
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

/** Directories a commit makes: the mode and owner some take (else the default), and the list of those made so far. */
interface Making {
  readonly owners: ReadonlyMap<string, FileOwner> | undefined;
  readonly created: string[];
}

/** Makes `directories`, then writes every temp (fsynced, unless `unsynced` is given: then their descriptors go there, open) and prepares every trash slot. */
async function stage(context: WorkspaceContext, steps: readonly Step[], directories: readonly string[], making: Making, unsynced?: number[]): Promise<void> {
  await createDirectories(context, directories, making);
  // A directory just created could have been swapped for a link before we write into it.
  steps.forEach((step) => reguard(context, step.path));
  // Bounded: each temp holds a descriptor until its fsync ends, and a patch may add thousands of files.
  await mapLimited(steps, (step) => stageStep(context, step, making, unsynced));
}

async function createDirectories(context: WorkspaceContext, directories: readonly string[], { owners, created }: Making): Promise<void> {
  for (const directory of directories) {
    // Its parent, just made or found, could have been swapped for a link out of the tree (or, in a type change, the file taken away from its path).
    reguard(context, directory);
    await attempt(directory, 'create directory', async () => {
      try {
        makeDirectory(path.join(context.root, directory), owners?.get(directory));
        created.push(directory);
      } catch (error) {
        if (!hasErrorCode(error, 'EEXIST')) throw error;
      }
    });
  }
}

async function stageStep(context: WorkspaceContext, step: Step, making: Making, unsynced: number[] | undefined): Promise<void> {
  const { temp, trash, after } = step;
  if (temp !== null && after !== null) await attempt(step.path, 'stage new content for', () => stageTemp(context, step, temp, after, making, unsynced));
  if (trash !== null) await attempt(step.path, 'prepare the trash for', () => prepareTrashSlot(trash));
}

/**
 * Writes the temp; when its directory was removed since it was checked or made (tidied away by
 * another commit, or made by one that rolled back), makes it again (see `tidy.ts`), with the mode
 * and owner the commit makes it with.
 */
async function stageTemp(context: WorkspaceContext, step: Step, temp: string, after: Uint8Array, { owners, created }: Making, unsynced: number[] | undefined): Promise<void> {
  for (let tries = 1; ; tries++) {
    try {
      if (unsynced === undefined) return await writeDurably(temp, after, step.owner, context.disk);
      unsynced.push(await writeUnsynced(temp, after, step.owner, context.disk));
      return;
    } catch (error) {
      if (!hasErrorCode(error, 'ENOENT') || tries === 3) throw error;
      created.push(...await recreateParents(context, step.path, owners));
      reguard(context, step.path);
    }
  }
}

function reguard(context: WorkspaceContext, relative: string): void {
  const guarded = context.guard.check(relative);
  if (!guarded.ok) throw new CommitStepError(guarded.error);
}

/** Renames (and removes and makes directories) in `order` (see `commitOrder.ts`). */
async function renameInOrder(context: WorkspaceContext, order: CommitOrder, making: Making): Promise<void> {
  let index = 0;
  for (const step of order.freeing) await renameStep(context, step, index++);
  order.removed.forEach((directory) => removeEmptiedDirectory(context.guard, directory));
  if (order.late.length > 0) await stage(context, order.deferred, order.late, making);
  for (const step of order.rest) await renameStep(context, step, index++);
}

async function renameStep(context: WorkspaceContext, step: Step, index: number): Promise<void> {
  await context.hooks.beforeRename?.(index, step.path);
  reguard(context, step.path);
  const { temp, trash, before } = step;
  const afterLastLook = (act: () => void) => actAfterLastLook(step, act);
  if (temp !== null) await attempt(step.path, 'rename new content onto', async () => afterLastLook(() => context.disk.renameSync(temp, step.absolute)));
  else if (trash !== null && before !== null) await attempt(step.path, 'move to trash', () => moveToTrash(step.absolute, trash, before.bytes, afterLastLook, context.disk));
}

/** Renames onto (or away) the target right after checking it still holds what the commit verified (see `confirm.ts`): an outside write is not replaced. */
function actAfterLastLook(step: Step, act: () => void): void {
  if (replaceIfUnchanged(step.absolute, step.before, act)) return;
  const message = `${step.path} changed on disk while the patch was being committed; nothing was written.`;
  throw new CommitStepError(engineError('stale_file', message, { path: step.path }));
}

/** Fsyncs the directories whose entries the commit changed; not those it removed (their parents are among them). */
async function syncParents(context: WorkspaceContext, steps: readonly Step[], created: readonly string[], removed: readonly string[]): Promise<void> {
  const parents = new Set<string>();
  for (const step of steps) {
    parents.add(path.dirname(step.absolute));
    if (step.trash !== null) parents.add(path.dirname(step.trash));
  }
  for (const directory of created) parents.add(path.dirname(path.join(context.root, directory)));
  for (const directory of removed) parents.delete(path.join(context.root, directory));
  await mapLimited([...parents], (parent) => attempt(parent, 'fsync directory', () => context.syncer.sync(parent)));
}

/** The undo record (see `records.ts`), written while the commit's temps, renames and fsyncs run. */
async function writeRecord(context: WorkspaceContext, intent: Intent, chunks: readonly Uint8Array[]): Promise<void> {
  await context.records.write(intent.record, chunks).catch((error: unknown) => {
    throw new CommitStepError(logFailure(error, 'write the undo record'));
  });
}

/**
 * The end of the commit, once its renames and directories are durable and its record written:
 * the log says done. From then on no recovery undoes the commit, so only then may it be
 * reported applied (for a one-file commit once the done frame is written, see `commitLog.ts`;
 * for one reported before its fsyncs, this follows the report). Failing here rolls it back —
 * except after the report: `settle` leaves that to recovery.
 */
async function finish(context: WorkspaceContext, intent: Intent, until: 'written' | 'durable'): Promise<void> {
  await context.hooks.beforeDone?.();
  await context.log.done(intent, until).catch((error: unknown) => {
    throw new CommitStepError(logFailure(error, 'log the commit'));
  });
}

/**
 * Rolls back after a failure and returns the error to report. A rollback that cannot finish,
 * or finds files changed meanwhile, leaves the journal in `journal/` (finished by the next open,
 * or kept as the only copy of those pre-images); only then is the intent cancelled in the log.
 */
async function abandon(context: WorkspaceContext, journal: Journal, chunks: readonly Uint8Array[], intent: Intent, cause: EngineError): Promise<EngineError> {
  const journalName = `${process.pid}-${PROCESS_NONCE}-${intent.id}-${intent.record}.journal`;
  await context.records.discard(intent.record).catch(() => undefined);
  let conflicts: readonly string[];
  let damaged: readonly string[];
  try {
    ({ conflicts, damaged } = await rollBack(context, journal));
  } catch (error) {
    await context.journals.keep(`orphan-${journalName}`, chunks).then(() => context.log.cancelled(intent)).catch(() => undefined);
    const why = error instanceof CommitStepError ? error.error.message : describeFsError(error);
    const message = `${cause.message} Rolling back also failed (${why}); it will finish when the workspace is next opened.`;
    // Not io_error: its hint promises that nothing was written.
    return engineError('rollback_incomplete', message, { path: cause.path });
  }
  const rolledBack = conflicts.length === 0 && damaged.length === 0;
  const keptAside = rolledBack ? Promise.resolve() : context.journals.keep(`${journalName}.conflict`, chunks);
  // A cancel that cannot be logged leaves the intent to recovery, which finds the tree at its pre-image.
  await keptAside.then(() => context.log.cancelled(intent)).catch(() => undefined);
  if (rolledBack) return cause;
  const exceptions = [
    ...(conflicts.length === 0 ? [] : [`${conflicts.join(', ')}, which changed meanwhile`]),
    ...(damaged.length === 0 ? [] : [`${damaged.join(', ')}, whose pre-image no longer matched its sha256`]),
  ];
  const message = `${cause.message} Rolled back, except ${exceptions.join('; and ')}, left as found.`;
  return engineError(cause.code, message, { path: cause.path });
}

function logFailure(error: unknown, action: string): EngineError {
  return engineError('io_error', `Could not ${action}: ${describeFsError(error)}.`);
}

function toEngineError(error: unknown): EngineError {
  if (error instanceof CommitStepError) return error.error;
  // Every filesystem step throws a CommitStepError; anything else is a fault in patchd itself.
  return engineError('internal_error', `The commit failed: ${error instanceof Error ? error.message : String(error)}.`);
}
