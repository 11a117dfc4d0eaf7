/**
 * Finishing a journaled commit that did not end: rolled back to its pre-image after a failed
 * commit in this process, and on `Workspace.open` for journals a killed daemon left behind —
 * or rolled forward there when every post-image is already in place (the commit got past its
 * last rename). Each path is restored only when it holds the commit's pre-image or post-image,
 * looked at once more right before the restoring rename or delete, as a commit does; anything
 * else was changed by someone else since, is left alone and reported as a conflict.
 *
 * A commit is rolled forward too when each path not at its post-image was built upon: a
 * transaction begun after it (a record in `history/`, or another journal being recovered)
 * started from that post-image (from the path's absence, where the commit deleted it: the later
 * one has no pre-image there). The commit got past its last rename, and what the later one
 * did to the path is the later one's: rolling the rest back would leave half of a commit under
 * one made on top of it. So a commit reported applied whose done frame a disk fault destroyed
 * (`commitLog.ts`) stands, with its record, where a later commit changed one of its paths since,
 * even back to the pre-image. A commit killed before its last rename is rolled back as before:
 * a path it had yet to rename holds its pre-image, and no later transaction of its process can
 * have started from its post-image there (the commit held the path's lock until killed). A
 * commit never reported applied can pass too: processes share no locks, so another process's
 * commit may start from a path one in flight had renamed, and a rollback that failed
 * (`rollback_incomplete`) leaves its paths unlocked. It is rolled forward only when each of its
 * other paths holds its post-image, as it would be with no later commit.
 *
 * Begun after goes by the record names the commits logged (`records.ts`): of two commits of one
 * process, exactly, by that process's sequence; of two processes (or a name written before patchd
 * named the process), by the clock — with no slack here (unlike a redo, below): the commit an
 * undo undoes started from the undo's post-images, and an undo killed half-way must not pass
 * for built upon. The transaction an undo undid (its record's `undoOf`) never began after it,
 * whatever the clocks say; another commit that restored what this one found, made by another
 * process with a clock stepped back, still could pass.
 *
 * A commit with a redo section (reported before its fsyncs: `transaction.ts`) may have been
 * reported with its post-image not yet durable. In the boot it ran in, the page cache survived
 * the daemon, so what the file holds is what the daemon left: it is finished as above. After a
 * reboot (or when the boot is unknown) a power loss may have dropped its rename, so a file at
 * its pre-image gets the post-image again from the log — unless a later transaction (recorded,
 * or another journal; perhaps another process's) started from that post-image: the commit
 * applied, and the pre-image is that later one's doing. Across processes "later" allows the
 * clock a minute's slack; within one it is exact, and the transaction an undo undid (which
 * started from the undo's post-image) is never later: an undo made right after its patch, whose
 * rename the power loss dropped, is written again. A revert by hand (not an undo) made by another
 * process within that minute still passes for built upon. A file holding neither image is left
 * as found, as always (the filesystems patchd runs on order a replacing rename after its
 * bytes; the journal kept aside holds the post-image).
 *
 * What recovery writes comes from the journal, which a disk fault (or an edit by hand) may have
 * changed while it waited for this open: a journal file in `journal/` has no checksum of its own
 * but its header's (a log frame has its crc). A journal that does not decode is not acted on at
 * all (outcome `left_as_found`) and is kept aside. Journal files are written through a temp,
 * fsynced and renamed whole (`JournalStore.keep`; a temp a crash left is not listed), so one that
 * does not decode was damaged since — its header fails its checksum, a byte left it no JSON, its
 * end was cut off — and may be the only copy of a half-applied commit's pre-images. Every path
 * its header names is left as found and reported `damaged`; where no header can be read, none
 * is, and its file name tells the transaction. (Daemons before the commit log wrote journals in
 * place, where a crash could cut one short before its first rename; such a one is kept too:
 * nothing tells it from damage.)
 *
 * Every image is checked against the sha256 the journal keeps of it before it is written — a
 * pre-image against `before.sha256` (journals written before patchd kept it are used as they
 * are), a post-image against `afterSha256` — and one that fails is not written: the path is
 * left as found, reported `damaged`, and the journal kept aside. A path is taken to hold its
 * pre-image by that sha256 too, so a damaged copy in the journal does not make an untouched file
 * look changed.
 */
import { rmdirSync } from 'node:fs';
import path from 'node:path';
import type { EngineError } from '../engine/errors.ts';
import type { WorkspaceContext } from './context.ts';
import { replaceIfUnchanged } from './confirm.ts';
import { isPresent, isTempName, removeFromTreeIfPresent, restoreTempPathFor, writeDurably } from './durable.ts';
import { bytesEqual, readDiskEntry, sha256Hex, type DiskEntry, type FileOwner } from './files.ts';
import { CommitStepError, hasErrorCode, isShortage, settleAll } from './ioErrors.ts';
import { directoryOwnersOf, recordNameOfJournalName, transactionIdOfJournalName, type DamagedJournal, type Journal, type JournalEntry, type JournalRecord, type Redo } from './journal.ts';
import { mapLimited } from './limited.ts';
import { begunAfter, isDamaged, orderOfRecordName, type BeginOrder } from './records.ts';
import { recreateParents, removeDirectoriesEmptiedBy } from './tidy.ts';
import { discardFromTrash, trashPathFor } from './trash.ts';

/** What a recovery did with one journaled transaction. */
export interface RecoveryReport {
  readonly transactionId: string;
  /**
   * `rolled_back`: put back to the pre-image; `rolled_forward`: every post-image was in place, so
   * the commit stands; `left_as_found`: its journal does not decode (its header fails its
   * checksum, or it is cut short or not a journal at all), so nothing was done: every path its
   * header names is in `damaged`, none where no header can be read.
   */
  readonly outcome: 'rolled_back' | 'rolled_forward' | 'left_as_found';
  /** Paths put back to their pre-image (rolled back), or where the commit stands (rolled forward: at its post-image, or built upon since). */
  readonly paths: readonly string[];
  /** Paths left as found: they held neither the pre-image nor the post-image. */
  readonly conflicts: readonly string[];
  /** Paths left as found: the journal's copy of the image to write there fails its sha256, or the journal does not decode (see the module comment). */
  readonly damaged: readonly string[];
  /** The journal file kept aside (`….journal.conflict` in the state dir, for the age retention keeps): the only copy of what was left unwritten. */
  readonly keptAside?: string | undefined;
}

type EntryOutcome = 'unchanged' | 'restored' | 'conflict' | 'damaged';

/** The paths of `entries` whose outcome is `outcome`, in the entries' order. */
function pathsWith(entries: readonly JournalEntry[], outcomes: readonly EntryOutcome[], ...wanted: readonly EntryOutcome[]): string[] {
  return entries.filter((_, index) => wanted.includes(outcomes[index]!)).map((entry) => entry.path);
}

/**
 * Restores every entry, then removes temps, created directories and trash copies. What the commit
 * wrote is put back first, then its temps and the directories it made are removed, and only then
 * do the paths it took away come back: a file it replaced by a directory returns once that
 * directory is gone, a directory it replaced by a file (made again for the files that return to
 * it) once the file is. Throws on I/O failure: the journal stays for a later try.
 */
export async function rollBack(context: WorkspaceContext, journal: Journal): Promise<RecoveryReport> {
  const { entries, directories, transactionId } = journal.record;
  const outcomes: EntryOutcome[] = [];
  const indices = [...entries.keys()].reverse();
  let shortage = await restoreEach(context, journal, indices.filter((index) => entries[index]!.afterSha256 !== null), outcomes);
  await settleAll(entries.map((entry) => removeTemps(context, transactionId, entry)));
  if (shortage === undefined) {
    await removeCreatedDirectories(context, directories);
    shortage = await restoreEach(context, journal, indices.filter((index) => entries[index]!.afterSha256 === null), outcomes);
  }
  if (shortage !== undefined) throw shortage;
  // A trash copy is dropped only where the path is back at its pre-image: elsewhere it may be the only good copy.
  const settled = entries.filter((entry, index) => entry.trashed && (outcomes[index] === 'restored' || outcomes[index] === 'unchanged'));
  await settleAll(settled.map((entry) => discardFromTrash(context.stateDir, trashPathFor(context.stateDir, transactionId, entry.path))));
  await syncTouchedDirectories(context, entries, directories);
  return {
    transactionId, outcome: 'rolled_back',
    paths: pathsWith(entries, outcomes, 'restored'), conflicts: pathsWith(entries, outcomes, 'conflict'), damaged: pathsWith(entries, outcomes, 'damaged'),
  };
}

/**
 * Restores the entries at `indices`, noting each outcome; returns the first shortage (out of
 * descriptors, say), after which the others are still restored: the journal finishes that one later.
 */
async function restoreEach(context: WorkspaceContext, journal: Journal, indices: readonly number[], outcomes: EntryOutcome[]): Promise<unknown> {
  let shortage: unknown;
  for (const index of indices) {
    try {
      outcomes[index] = await restoreEntry(context, journal, index);
    } catch (error) {
      if (!isShortage(error)) throw error;
      shortage ??= error;
    }
  }
  return shortage;
}

/**
 * Keeps a commit whose post-images are in place (`inPlace`; a later transaction started from
 * each of the others): removes leftover temps and makes its new content and renames durable.
 */
async function rollForward(context: WorkspaceContext, journal: Journal, inPlace: readonly JournalEntry[]): Promise<RecoveryReport> {
  const { entries, directories, transactionId } = journal.record;
  await settleAll(entries.map((entry) => removeTemps(context, transactionId, entry)));
  // A commit reported before its fsyncs may have left the bytes in the page cache only.
  if (journal.redo !== undefined) await mapLimited(inPlace.filter((entry) => entry.afterSha256 !== null), (entry) => syncFile(context, entry));
  await syncTouchedDirectories(context, entries, directories);
  // The commit died before tidying: the directories its deletes and moves emptied go now, as they would have.
  await removeDirectoriesEmptiedBy(context, entries.filter((entry) => entry.afterSha256 === null).map((entry) => entry.path));
  return { transactionId, outcome: 'rolled_forward', paths: entries.map((entry) => entry.path), conflicts: [], damaged: [] };
}

/** Writes each post-image from the redo section over its pre-image, unless a later transaction started from that post-image (see the module comment). */
async function redoForward(context: WorkspaceContext, recovering: Recovering, redo: Redo, others: readonly Recovering[]): Promise<RecoveryReport> {
  const { journal } = recovering;
  const { entries, directories, transactionId } = journal.record;
  const outcomes: EntryOutcome[] = [];
  for (const [index, entry] of entries.entries()) {
    outcomes.push(await redoEntry(context, recovering, entry, journal.preImages[index] ?? null, redo.postImages[index] ?? null, others));
  }
  await settleAll(entries.map((entry) => removeTemps(context, transactionId, entry)));
  await syncTouchedDirectories(context, entries, directories);
  return {
    transactionId, outcome: 'rolled_forward',
    paths: pathsWith(entries, outcomes, 'restored', 'unchanged'), conflicts: pathsWith(entries, outcomes, 'conflict'), damaged: pathsWith(entries, outcomes, 'damaged'),
  };
}

async function redoEntry(
  context: WorkspaceContext, recovering: Recovering, entry: JournalEntry, before: Uint8Array | null, after: Uint8Array | null, others: readonly Recovering[],
): Promise<EntryOutcome> {
  const { journal } = recovering;
  const current = await currentEntry(context, entry);
  if (current === undefined) return 'conflict';
  if (holdsPostImage(current.entry, entry, journal.record)) return 'unchanged';
  if (!holdsPreImage(current.entry, entry, before, journal.record) || (after === null) !== (entry.afterSha256 === null)) return 'conflict';
  if (await builtUpon(context, recovering, entry, others, CLOCK_SLACK_MS)) return 'unchanged';
  const { absolute } = current;
  const seen = current.entry.kind === 'file' ? current.entry : null;
  if (after === null) return replaceIfUnchanged(absolute, seen, () => context.disk.unlinkSync(absolute)) ? 'restored' : 'conflict';
  if (sha256Hex(after) !== entry.afterSha256) return 'damaged';
  return (await replaceThroughTemp(context, journal.record, entry, absolute, after, entry.before?.owner, seen)) ? 'restored' : 'conflict';
}

/** How far before a journal's start another process's record may be dated and still be later: clocks step back a little. */
const CLOCK_SLACK_MS = 60_000;

/** A journal being recovered, and when its commit began (`orderOf`). */
interface Recovering {
  readonly journal: Journal;
  readonly order: BeginOrder;
}

/**
 * When the commit of the journal file `file` began: by the record name its file name carries
 * (its process's sequence: `records.ts`), else by the clock alone.
 */
function orderOf(file: string, journal: Journal): BeginOrder {
  const recordName = recordNameOfJournalName(path.basename(file));
  return (recordName === undefined ? undefined : orderOfRecordName(recordName)) ?? { at: journal.record.startedAt };
}

/**
 * Whether another transaction begun after `recovering`'s commit (`begunAfter`, with `slackMs`) —
 * a record in `history/`, or another journal being recovered — started from its post-image of
 * `entry`'s path: told by the sha256 it keeps of its pre-image (from its header alone, even when
 * a copy of those bytes is damaged), or by hashing the pre-image where it keeps none (written
 * before patchd did). Where the commit deleted the path, one that has no pre-image there (made
 * the path again) started from it.
 */
async function builtUpon(context: WorkspaceContext, recovering: Recovering, entry: JournalEntry, others: readonly Recovering[], slackMs: number): Promise<boolean> {
  const { afterSha256 } = entry;
  // The transaction an undo undid began before it, whatever the clocks say.
  const undid = undoOf(recovering.journal.record);
  const later = (transactionId: string, order: BeginOrder) => transactionId !== undid && begunAfter(order, recovering.order, slackMs);
  const startsFromIt = (candidate: Journal): boolean => candidate.record.entries.some((other, index) => {
    if (other.path !== entry.path) return false;
    if (other.before === null) return afterSha256 === null;
    return (other.before.sha256 ?? sha256Hex(candidate.preImages[index]!)) === afterSha256;
  });
  if (others.some((other) => other !== recovering && later(other.journal.record.transactionId, other.order) && startsFromIt(other.journal))) return true;
  const recent = (await context.records.list()).filter((name) => later(name.transactionId, orderOfRecordName(path.basename(name.file)) ?? name));
  for (const name of recent) {
    const header = await context.records.header(name);
    if (header === undefined || isDamaged(header)) continue;
    // Null for an entry with no pre-image: it started from the path's absence.
    const starts = header.record.entries.filter((other) => other.path === entry.path).map((other) => (other.before === null ? null : other.before.sha256));
    if (starts.includes(afterSha256)) return true;
    if (!starts.includes(undefined)) continue;
    const loaded = await context.records.load(name);
    if (loaded !== undefined && !isDamaged(loaded) && startsFromIt(loaded.journal)) return true;
  }
  return false;
}

/** The transaction a journal's commit undoes, as its record's meta names it (`RecordMeta.undoOf`); undefined for any other commit. */
function undoOf(record: JournalRecord): string | undefined {
  const meta = record.meta as { undoOf?: unknown } | undefined;
  return typeof meta?.undoOf === 'string' ? meta.undoOf : undefined;
}

/** Makes the file at `entry`'s path durable as it is (its bytes may be in the page cache only). */
async function syncFile(context: WorkspaceContext, entry: JournalEntry): Promise<void> {
  const guarded = context.guard.check(entry.path);
  if (!guarded.ok) return;
  const fd = context.disk.openSync(guarded.value.absolute, 'r');
  try {
    await context.disk.fsync(fd);
  } finally {
    context.disk.closeSync(fd);
  }
}

/**
 * The entries whose path holds the commit's post-image, when a transaction begun after the
 * commit started from the post-image of each of the others; else undefined (see the module comment).
 */
async function standingEntries(context: WorkspaceContext, recovering: Recovering, others: readonly Recovering[]): Promise<JournalEntry[] | undefined> {
  const { record } = recovering.journal;
  const inPlace: JournalEntry[] = [];
  for (const entry of record.entries) {
    const current = await currentEntry(context, entry);
    if (current !== undefined && holdsPostImage(current.entry, entry, record)) inPlace.push(entry);
    // No slack: strictly later by the clock, across processes.
    else if (!(await builtUpon(context, recovering, entry, others, -1))) return undefined;
  }
  return inPlace;
}

/**
 * What the path holds now; undefined when it cannot be vouched for (a conflict: left as found).
 * A look that failed for a shortage (out of descriptors) throws instead: taken for a conflict,
 * it would set the journal aside for good over a file nobody touched.
 */
async function currentEntry(context: WorkspaceContext, entry: JournalEntry): Promise<{ absolute: string; entry: DiskEntry } | undefined> {
  const guarded = context.guard.check(entry.path);
  if (!guarded.ok) return unlessShortage(guarded.error);
  const current = await readDiskEntry(guarded.value.absolute, entry.path);
  return current.ok ? { absolute: guarded.value.absolute, entry: current.value } : unlessShortage(current.error);
}

function unlessShortage(error: EngineError): undefined {
  if (isShortage(error)) throw new CommitStepError(error);
  return undefined;
}

async function restoreEntry(context: WorkspaceContext, journal: Journal, index: number): Promise<EntryOutcome> {
  const { record } = journal;
  const entry = record.entries[index]!;
  const before = journal.preImages[index] ?? null;
  const current = await currentEntry(context, entry);
  if (current === undefined) return 'conflict';
  if (holdsPreImage(current.entry, entry, before, record)) return 'unchanged';
  if (!holdsPostImage(current.entry, entry, record)) return 'conflict';
  const { absolute } = current;
  // What the commit left there, just read: restored over only if still there at the last look, like a commit (`confirm.ts`).
  const seen = current.entry.kind === 'file' ? current.entry : null;
  if (before === null || entry.before === null) {
    return replaceIfUnchanged(absolute, seen, () => context.disk.unlinkSync(absolute)) ? 'restored' : 'conflict';
  }
  if (entry.before.sha256 !== undefined && sha256Hex(before) !== entry.before.sha256) return 'damaged';
  return (await replaceThroughTemp(context, record, entry, absolute, before, entry.before.owner, seen)) ? 'restored' : 'conflict';
}

/**
 * Writes `bytes` durably through the recovery's temp and renames it over `absolute` if that still
 * holds `seen` (`confirm.ts`); a directory above it that is gone (`record`'s commit replaced it by
 * a file, or another commit tidied it away once this one emptied it) comes back with the mode and
 * owner the journal keeps.
 */
async function replaceThroughTemp(
  context: WorkspaceContext, record: JournalRecord, entry: JournalEntry, absolute: string, bytes: Uint8Array, owner: FileOwner | undefined,
  seen: Extract<DiskEntry, { kind: 'file' }> | null,
): Promise<boolean> {
  // A recovery killed mid-restore may have left this very temp.
  const temp = restoreTempPathFor(absolute, record.transactionId);
  removeFromTreeIfPresent(temp, context.disk);
  await recreateParents(context, entry.path, directoryOwnersOf(record));
  let replaced = false;
  try {
    try {
      await writeDurably(temp, bytes, owner, context.disk);
    } catch (error) {
      // A file stands where its directory was (put there since): the path cannot come back.
      if (hasErrorCode(error, 'ENOTDIR')) return false;
      throw error;
    }
    replaced = replaceIfUnchanged(absolute, seen, () => context.disk.renameSync(temp, absolute));
  } finally {
    if (!replaced) removeFromTreeIfPresent(temp, context.disk);
  }
  return replaced;
}

/**
 * Whether the path holds what was there before the commit: by the pre-image's sha256 when the
 * journal keeps one (its copy `before` may be damaged), else by `before`'s bytes. A directory the
 * commit replaces by a file (`removedDirectories`) counts as its pre-image while it is there, or
 * once removed and before the file is: its own files tell the rest.
 */
function holdsPreImage(current: DiskEntry, entry: JournalEntry, before: Uint8Array | null, record: JournalRecord): boolean {
  if (before === null) return current.kind === 'missing' || (current.kind === 'directory' && (record.removedDirectories?.includes(entry.path) ?? false));
  if (current.kind !== 'file') return false;
  const sha256 = entry.before?.sha256;
  return sha256 === undefined ? bytesEqual(current.bytes, before) : sha256Hex(current.bytes) === sha256;
}

/** Whether the path holds what the commit leaves there; a file it replaces by a directory (`directories`) is gone, or that directory. */
function holdsPostImage(current: DiskEntry, entry: JournalEntry, record: JournalRecord): boolean {
  if (entry.afterSha256 === null) return current.kind === 'missing' || (current.kind === 'directory' && record.directories.includes(entry.path));
  return current.kind === 'file' && sha256Hex(current.bytes) === entry.afterSha256;
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
      if (!hasErrorCode(error, 'ENOENT', 'ENOTEMPTY', 'EEXIST', 'ENOTDIR') && isPresent(guarded.value.absolute)) throw error;
    }
  }
}

async function syncTouchedDirectories(context: WorkspaceContext, entries: readonly JournalEntry[], directories: readonly string[]): Promise<void> {
  const parents = new Set([...entries.map((entry) => entry.path), ...directories].map((relative) => path.dirname(path.join(context.root, relative))));
  await mapLimited([...parents], (parent) => context.syncer.sync(parent).catch((error: unknown) => {
    if (!hasErrorCode(error, 'ENOENT', 'ENOTDIR')) throw error;
  }));
}

/**
 * Finishes every journal a dead daemon left for this workspace, newest first: rolled forward
 * when all its post-images are in place (or built upon: see the module comment), else rolled back. A journal with a conflict is set
 * aside (kept, renamed `.conflict`) rather than dropped; so is one that does not decode,
 * untouched (see the module comment).
 */
export async function recoverAbandonedJournals(context: WorkspaceContext): Promise<RecoveryReport[]> {
  const loaded = await Promise.all((await context.journals.listAbandoned()).map(async (file) => ({ file, journal: await context.journals.load(file) })));
  const journals = new Map(loaded.flatMap(({ file, journal }) => (isDamagedJournal(journal) ? [] : [[file, { journal, order: orderOf(file, journal) }] as const])));
  const reports: RecoveryReport[] = [];
  for (const { file, journal } of loaded.sort(newestFirst)) {
    // Another workspace's, told by a header that vouches for it (see `rootOf`).
    if ((rootOf(journal) ?? context.root) !== context.root) continue;
    if (isDamagedJournal(journal)) {
      reports.push({ ...leftAsFound(file, journal), keptAside: await context.journals.setAside(file) });
      continue;
    }
    const report = await finishJournal(context, journals.get(file)!, [...journals.values()]);
    // The only copy of what was left unwritten (a pre-image, or a post-image reported applied).
    if (report.conflicts.length > 0 || report.damaged.length > 0) {
      reports.push({ ...report, keptAside: await context.journals.setAside(file) });
      continue;
    }
    // A commit that stands keeps its journal as its undo record, as it would have had it finished.
    if (report.outcome === 'rolled_forward' && journal.record.meta !== undefined) await context.records.adopt(file, journal.record, recordNameOfJournalName(path.basename(file)));
    else await context.journals.remove(file);
    reports.push(report);
  }
  return reports;
}

async function finishJournal(context: WorkspaceContext, recovering: Recovering, others: readonly Recovering[]): Promise<RecoveryReport> {
  const { journal } = recovering;
  const inPlace = await standingEntries(context, recovering, others);
  if (inPlace !== undefined) return rollForward(context, journal, inPlace);
  const { redo } = journal;
  if (redo === undefined || (redo.bootId !== null && redo.bootId === context.bootId)) return rollBack(context, journal);
  return redoForward(context, recovering, redo, others);
}

/**
 * A journal that does not decode, told by what its header claims (every path it names left as
 * found), or, where none can be read, by its file name (`transactionIdOfJournalName`): then
 * nothing tells which paths it named, and none is listed.
 */
function leftAsFound(file: string, { claims }: DamagedJournal): RecoveryReport {
  return {
    transactionId: claims?.transactionId ?? transactionIdOfJournalName(path.basename(file)), outcome: 'left_as_found', paths: [], conflicts: [],
    damaged: claims?.entries.map((entry) => entry.path) ?? [],
  };
}

function isDamagedJournal(journal: Journal | DamagedJournal): journal is DamagedJournal {
  return 'claims' in journal;
}

/**
 * The workspace root a journal was written for, when its header vouches for it (passes its
 * checksum); else undefined, and the journal is taken for this workspace's: a state dir is
 * keyed by its root (`stateDir.ts`), so a journal in it is this workspace's unless several roots
 * were given one state dir, and a damaged one is only kept aside and told, never acted on. Left
 * for its claimed root instead, a journal whose root bytes were damaged would lie in `journal/`
 * untold for good.
 */
function rootOf(journal: Journal | DamagedJournal): string | undefined {
  if (!isDamagedJournal(journal)) return journal.record.root;
  return journal.headerSound ? journal.claims?.root : undefined;
}

function newestFirst(a: { journal: Journal | DamagedJournal }, b: { journal: Journal | DamagedJournal }): number {
  const startedAt = ({ journal }: typeof a) => (isDamagedJournal(journal) ? journal.claims?.startedAt ?? 0 : journal.record.startedAt);
  return startedAt(b) - startedAt(a);
}
