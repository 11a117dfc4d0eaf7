/**
 * Rolling a journaled commit back to its pre-image: after a failed commit in this process, and
 * on `Workspace.open` for journals a killed daemon left behind. Each path is restored only when
 * it holds the commit's pre-image or post-image; anything else was changed by someone else
 * since, is left alone and reported as a conflict.
 */
import { rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { WorkspaceContext } from './context.ts';
import { isTempName, removeIfPresent, replaceDurably } from './durable.ts';
import { bytesEqual, readDiskEntry, sha256Hex, type DiskEntry } from './files.ts';
import { hasErrorCode, settleAll } from './ioErrors.ts';
import type { Journal, JournalEntry } from './journal.ts';
import { discardFromTrash, trashPathFor } from './trash.ts';

export interface RollbackReport {
  readonly transactionId: string;
  /** Paths put back to their pre-image. */
  readonly restored: readonly string[];
  /** Paths left as found: they held neither the pre-image nor the post-image. */
  readonly conflicts: readonly string[];
}

type EntryOutcome = 'unchanged' | 'restored' | 'conflict';

/** Restores every entry (last first), then removes temps, created directories and trash copies. Throws on I/O failure: the journal stays for a later try. */
export async function rollBack(context: WorkspaceContext, journal: Journal): Promise<RollbackReport> {
  const { entries, directories, transactionId } = journal.record;
  const restored: string[] = [];
  const conflicts: string[] = [];
  for (const [index, entry] of [...entries.entries()].reverse()) {
    const outcome = await restoreEntry(context, entry, journal.preImages[index] ?? null);
    if (outcome === 'restored') restored.push(entry.path);
    if (outcome === 'conflict') conflicts.push(entry.path);
  }
  await settleAll(entries.map((entry) => removeTemp(context, entry)));
  await removeCreatedDirectories(context, directories);
  const settled = entries.filter((entry) => entry.trashed && !conflicts.includes(entry.path));
  await settleAll(settled.map((entry) => discardFromTrash(context.stateDir, trashPathFor(context.stateDir, transactionId, entry.path))));
  await syncTouchedDirectories(context, entries, directories);
  return { transactionId, restored: restored.reverse(), conflicts: conflicts.reverse() };
}

async function restoreEntry(context: WorkspaceContext, entry: JournalEntry, before: Uint8Array | null): Promise<EntryOutcome> {
  const guarded = context.guard.check(entry.path);
  if (!guarded.ok) return 'conflict';
  const current = await readDiskEntry(guarded.value.absolute, entry.path);
  if (!current.ok) return 'conflict';
  if (holdsPreImage(current.value, before)) return 'unchanged';
  if (!holdsPostImage(current.value, entry.afterSha256)) return 'conflict';
  if (before === null || entry.before === null) await removeIfPresent(guarded.value.absolute);
  else await replaceDurably(guarded.value.absolute, before, entry.before.owner);
  return 'restored';
}

function holdsPreImage(current: DiskEntry, before: Uint8Array | null): boolean {
  if (before === null) return current.kind === 'missing';
  return current.kind === 'file' && bytesEqual(current.bytes, before);
}

function holdsPostImage(current: DiskEntry, afterSha256: string | null): boolean {
  if (afterSha256 === null) return current.kind === 'missing';
  return current.kind === 'file' && sha256Hex(current.bytes) === afterSha256;
}

async function removeTemp(context: WorkspaceContext, entry: JournalEntry): Promise<void> {
  if (entry.tempName === null || !isTempName(entry.tempName)) return;
  const guarded = context.guard.check(path.posix.join(path.posix.dirname(entry.path), entry.tempName));
  if (guarded.ok) await removeIfPresent(guarded.value.absolute);
}

/** Deepest first; a directory someone has put files in since is kept. */
async function removeCreatedDirectories(context: WorkspaceContext, directories: readonly string[]): Promise<void> {
  for (const directory of [...directories].reverse()) {
    const guarded = context.guard.check(directory);
    if (!guarded.ok) continue;
    try {
      await rmdir(guarded.value.absolute);
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
 * Rolls back every journal a dead daemon left for this workspace, newest first. A journal
 * with a conflict is set aside (kept, renamed `.conflict`) rather than dropped.
 */
export async function recoverAbandonedJournals(context: WorkspaceContext): Promise<RollbackReport[]> {
  const loaded = await Promise.all((await context.journals.listAbandoned()).map(async (file) => ({ file, journal: await context.journals.load(file) })));
  const reports: RollbackReport[] = [];
  for (const { file, journal } of loaded.sort(newestFirst)) {
    if (journal === undefined) {
      await context.journals.remove(file);
      continue;
    }
    if (journal.record.root !== context.root) continue;
    const report = await rollBack(context, journal);
    if (report.conflicts.length > 0) await context.journals.setAside(file);
    else await context.journals.remove(file);
    reports.push(report);
  }
  return reports;
}

function newestFirst(a: { journal: Journal | undefined }, b: { journal: Journal | undefined }): number {
  return (b.journal?.record.startedAt ?? 0) - (a.journal?.record.startedAt ?? 0);
}
