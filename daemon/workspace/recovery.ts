/**
 * Finishing a journaled commit that did not end: rolled back to its pre-image after a failed
 * commit in this process, and on `Workspace.open` for journals a killed daemon left behind —
 * or rolled forward there when every post-image is already in place (the commit got past its
 * last rename). Each path is restored only when it holds the commit's pre-image or post-image,
 * looked at once more right before the restoring rename or delete, as a commit does; anything
 * else was changed by someone else since, is left alone and reported as a conflict.
 */
import { rmdirSync } from 'node:fs';
import path from 'node:path';
import type { WorkspaceContext } from './context.ts';
import { replaceIfUnchanged } from './confirm.ts';
import { isTempName, removeFromTreeIfPresent, restoreTempPathFor, writeDurably } from './durable.ts';
import { bytesEqual, readDiskEntry, sha256Hex, type DiskEntry } from './files.ts';
import { hasErrorCode, settleAll } from './ioErrors.ts';
import type { Journal, JournalEntry } from './journal.ts';
import { recreateParents, removeDirectoriesEmptiedBy } from './tidy.ts';
import { discardFromTrash, trashPathFor } from './trash.ts';

/** What a recovery did with one journaled transaction. */
export interface RecoveryReport {
  readonly transactionId: string;
  /** `rolled_back`: put back to the pre-image; `rolled_forward`: every post-image was in place, so the commit stands. */
  readonly outcome: 'rolled_back' | 'rolled_forward';
  /** Paths put back to their pre-image (rolled back), or kept at their post-image (rolled forward). */
  readonly paths: readonly string[];
  /** Paths left as found: they held neither the pre-image nor the post-image. */
  readonly conflicts: readonly string[];
}

type EntryOutcome = 'unchanged' | 'restored' | 'conflict';

/** Restores every entry (last first), then removes temps, created directories and trash copies. Throws on I/O failure: the journal stays for a later try. */
export async function rollBack(context: WorkspaceContext, journal: Journal): Promise<RecoveryReport> {
  const { entries, directories, transactionId } = journal.record;
  const restored: string[] = [];
  const conflicts: string[] = [];
  for (const [index, entry] of [...entries.entries()].reverse()) {
    const outcome = await restoreEntry(context, transactionId, entry, journal.preImages[index] ?? null);
    if (outcome === 'restored') restored.push(entry.path);
    if (outcome === 'conflict') conflicts.push(entry.path);
  }
  await settleAll(entries.map((entry) => removeTemps(context, transactionId, entry)));
  await removeCreatedDirectories(context, directories);
  const settled = entries.filter((entry) => entry.trashed && !conflicts.includes(entry.path));
  await settleAll(settled.map((entry) => discardFromTrash(context.stateDir, trashPathFor(context.stateDir, transactionId, entry.path))));
  await syncTouchedDirectories(context, entries, directories);
  return { transactionId, outcome: 'rolled_back', paths: restored.reverse(), conflicts: conflicts.reverse() };
}

/** Keeps a commit whose every post-image is in place: removes leftover temps and makes its renames durable. */
async function rollForward(context: WorkspaceContext, journal: Journal): Promise<RecoveryReport> {
  const { entries, directories, transactionId } = journal.record;
  await settleAll(entries.map((entry) => removeTemps(context, transactionId, entry)));
  await syncTouchedDirectories(context, entries, directories);
  // The commit died before tidying: the directories its deletes and moves emptied go now, as they would have.
  await removeDirectoriesEmptiedBy(context, entries.filter((entry) => entry.afterSha256 === null).map((entry) => entry.path));
  return { transactionId, outcome: 'rolled_forward', paths: entries.map((entry) => entry.path), conflicts: [] };
}

async function allPostImagesInPlace(context: WorkspaceContext, journal: Journal): Promise<boolean> {
  for (const entry of journal.record.entries) {
    const current = await currentEntry(context, entry);
    if (current === undefined || !holdsPostImage(current.entry, entry.afterSha256)) return false;
  }
  return true;
}

async function currentEntry(context: WorkspaceContext, entry: JournalEntry): Promise<{ absolute: string; entry: DiskEntry } | undefined> {
  const guarded = context.guard.check(entry.path);
  if (!guarded.ok) return undefined;
  const current = await readDiskEntry(guarded.value.absolute, entry.path);
  return current.ok ? { absolute: guarded.value.absolute, entry: current.value } : undefined;
}

async function restoreEntry(context: WorkspaceContext, transactionId: string, entry: JournalEntry, before: Uint8Array | null): Promise<EntryOutcome> {
  const current = await currentEntry(context, entry);
  if (current === undefined) return 'conflict';
  if (holdsPreImage(current.entry, before)) return 'unchanged';
  if (!holdsPostImage(current.entry, entry.afterSha256)) return 'conflict';
  const { absolute } = current;
  // What the commit left there, just read: restored over only if still there at the last look, like a commit (`confirm.ts`).
  const seen = current.entry.kind === 'file' ? current.entry : null;
  if (before === null || entry.before === null) {
    return replaceIfUnchanged(absolute, seen, () => context.disk.unlinkSync(absolute)) ? 'restored' : 'conflict';
  }
  // A recovery killed mid-restore may have left this very temp.
  const temp = restoreTempPathFor(absolute, transactionId);
  removeFromTreeIfPresent(temp, context.disk);
  // Another commit may have tidied away the directory this commit emptied.
  await recreateParents(context, entry.path);
  let restored = false;
  try {
    await writeDurably(temp, before, entry.before.owner, context.disk);
    restored = replaceIfUnchanged(absolute, seen, () => context.disk.renameSync(temp, absolute));
  } finally {
    if (!restored) removeFromTreeIfPresent(temp, context.disk);
  }
  return restored ? 'restored' : 'conflict';
}

function holdsPreImage(current: DiskEntry, before: Uint8Array | null): boolean {
  if (before === null) return current.kind === 'missing';
  return current.kind === 'file' && bytesEqual(current.bytes, before);
}

function holdsPostImage(current: DiskEntry, afterSha256: string | null): boolean {
  if (afterSha256 === null) return current.kind === 'missing';
  return current.kind === 'file' && sha256Hex(current.bytes) === afterSha256;
}

/** Removes the commit's staged temp and a killed recovery's restore temp of this entry, if left. */
async function removeTemps(context: WorkspaceContext, transactionId: string, entry: JournalEntry): Promise<void> {
  const guarded = context.guard.check(entry.path);
  if (!guarded.ok) return;
  removeFromTreeIfPresent(restoreTempPathFor(guarded.value.absolute, transactionId), context.disk);
  if (entry.tempName === null || !isTempName(entry.tempName)) return;
  removeFromTreeIfPresent(path.join(path.dirname(guarded.value.absolute), entry.tempName), context.disk);
}

/** Deepest first; a directory someone has put files in since is kept. */
async function removeCreatedDirectories(context: WorkspaceContext, directories: readonly string[]): Promise<void> {
  for (const directory of [...directories].reverse()) {
    const guarded = context.guard.check(directory);
    if (!guarded.ok) continue;
    try {
      rmdirSync(guarded.value.absolute);
    } catch (error) {
      if (!hasErrorCode(error, 'ENOENT', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR')) throw error;
    }
  }
}

async function syncTouchedDirectories(context: WorkspaceContext, entries: readonly JournalEntry[], directories: readonly string[]): Promise<void> {
  const parents = new Set([...entries.map((entry) => entry.path), ...directories].map((relative) => path.dirname(path.join(context.root, relative))));
  await settleAll([...parents].map((parent) => context.syncer.sync(parent).catch((error: unknown) => {
    if (!hasErrorCode(error, 'ENOENT', 'ENOTDIR')) throw error;
  })));
}

/**
 * Finishes every journal a dead daemon left for this workspace, newest first: rolled forward
 * when all its post-images are in place, else rolled back. A journal with a conflict is set
 * aside (kept, renamed `.conflict`) rather than dropped.
 */
export async function recoverAbandonedJournals(context: WorkspaceContext): Promise<RecoveryReport[]> {
  const loaded = await Promise.all((await context.journals.listAbandoned()).map(async (file) => ({ file, journal: await context.journals.load(file) })));
  const reports: RecoveryReport[] = [];
  for (const { file, journal } of loaded.sort(newestFirst)) {
    if (journal === undefined) {
      await context.journals.remove(file);
      continue;
    }
    if (journal.record.root !== context.root) continue;
    const report = (await allPostImagesInPlace(context, journal)) ? await rollForward(context, journal) : await rollBack(context, journal);
    if (report.conflicts.length > 0) await context.journals.setAside(file);
    // A commit that stands keeps its journal as its undo record, as it would have had it finished.
    else if (report.outcome === 'rolled_forward' && journal.record.meta !== undefined) await context.records.adopt(file, journal.record);
    else await context.journals.remove(file);
    reports.push(report);
  }
  return reports;
}

function newestFirst(a: { journal: Journal | undefined }, b: { journal: Journal | undefined }): number {
  return (b.journal?.record.startedAt ?? 0) - (a.journal?.record.startedAt ?? 0);
}
