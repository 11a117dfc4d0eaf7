/**
 * The intent journal of a transaction: what recovery needs to finish it without anything
 * inside the tree — the pre-image bytes of every path it replaces and the hash of every
 * post-image. A commit logs it in the commit log (`commitLog.ts`), and its undo record is the
 * same bytes (`records.ts`). Journal files in `<stateDir>/journal/` are commits handed over for
 * recovery: from a dead process's log, a rollback that could not finish, or kept aside after a
 * conflict.
 *
 * Layout: one line of JSON (the `JournalRecord`), then the pre-images back to back; each
 * entry's `before` gives its offset and length in that byte region. A commit reported before its
 * new content was fsynced (`transaction.ts`) logs a redo section after them: one line of JSON
 * (`RedoRecord`), then the post-images back to back. Encoding needs no zod; decoding loads the
 * schemas lazily (`recordSchemas.ts`).
 *
 * The header line ends with its own checksum (`,"headerCrc32":<n>}`, the crc32 of the line's
 * bytes before it), checked by every reader: the pre-images have their sha256s, but a byte
 * changed in the header that leaves it JSON (a mode, a path, a hash: a disk fault, an edit by
 * hand) would otherwise have an undo or a recovery act on its wrong claims. crc32, as the commit
 * log's frames: it guards against damage, not forgery (whoever can edit the file can recompute
 * it), and costs next to nothing on a commit. Headers written before patchd sealed them have
 * none and are read as before: they are records on users' disks (`failsChecksum`).
 *
 * File names: `orphan-<pid>-<processNonce>-<log frame id>-<record name>.journal`, a commit handed
 * over for the next open (by the log's recovery, or by a rollback that could not finish) named
 * with the undo record name its intent logged (`records.ts`): recovery adopts a commit it rolls
 * forward under that name, and orders it by it. Before that they were `orphan-<pid>-<processNonce>-
 * <log frame id>-<journal id>.journal` (a journal id is the transaction id, `.<unit>` added for a
 * commit applied file by file; a rollback that could not finish named it by its transaction id).
 * Daemons before the commit log wrote `<pid>-<processNonce>-<journal id>.journal`, recovered once
 * that process is gone: a daemon can tell its own live journals, and another live daemon's, from
 * those a killed daemon left behind.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { removeAgedFiles, setAsideAs } from './agedFiles.ts';
import { parseRecordName } from './recordNames.ts';
import type { DiskCalls } from './diskCalls.ts';
import { removeIfPresent, type DirectorySyncer } from './durable.ts';
import type { FileOwner } from './files.ts';

export interface JournalEntry {
  readonly path: string;
  /** Name of the staged temp file beside `path`; null when the path is moved to trash. */
  readonly tempName: string | null;
  readonly trashed: boolean;
  /**
   * Where the pre-image sits in the blob region, and its sha256 (lowercase hex; absent in records
   * written before patchd kept it) so an undo or a session diff never uses bytes that changed
   * since; null when the path did not exist.
   */
  readonly before: { readonly offset: number; readonly length: number; readonly owner: FileOwner; readonly sha256?: string | undefined } | null;
  /** sha256 of the new content; null when the path is gone afterwards. */
  readonly afterSha256: string | null;
}

export interface JournalRecord {
  readonly format: 1;
  readonly transactionId: string;
  readonly root: string;
  readonly startedAt: number;
  readonly entries: readonly JournalEntry[];
  /**
   * Directories the commit may create, workspace-relative, parents first; one that is also an
   * entry's path was a file the commit takes away to make a directory there (a type change).
   */
  readonly directories: readonly string[];
  /** Directories the commit replaces by a file and those below them, deepest first (absent: none; see `commitOrder.ts`). */
  readonly removedDirectories?: readonly string[] | undefined;
  /**
   * The mode and owner of every directory the commit may remove, as it found them: each directory
   * above a path it takes away (`ownersOfDirectoriesAbove`), which covers those it replaces by a
   * file and those it tidies away once empty. What a rollback, a recovery or an undo makes such a
   * directory again with. Absent when the commit takes nothing away, and in journals written
   * before patchd kept them (those directories come back with the default mode).
   */
  readonly directoryOwners?: readonly DirectoryOwner[] | undefined;
  /** What the commit's undo record needs besides the entries (see `records.ts`). */
  readonly meta?: unknown;
}

export interface Journal {
  readonly record: JournalRecord;
  /** Pre-image bytes per entry, aligned with `record.entries`; null where the path did not exist. */
  readonly preImages: readonly (Uint8Array | null)[];
  /** Present when the commit may have been reported before its post-images were durable. */
  readonly redo?: Redo | undefined;
}

/**
 * A journal file that does not decode, never to be acted on. `claims`: what its header line
 * says, to tell what was left as found — when the line reads as a journal's header at all
 * (undefined when not: not JSON, no newline). `headerSound`: that line passes its checksum
 * (written before patchd sealed headers, it has none to fail): only what follows it is damaged
 * (cut short, say), and its claims hold.
 */
export interface DamagedJournal {
  readonly claims: JournalRecord | undefined;
  readonly headerSound: boolean;
}

/** The redo section's header line: where each entry's post-image sits after it. */
export interface RedoRecord {
  /** The boot the commit ran in (`boot.ts`): after another one, its unsynced writes may be lost. */
  readonly bootId: string | null;
  readonly after: readonly ({ readonly offset: number; readonly length: number } | null)[];
}

export interface Redo {
  readonly bootId: string | null;
  /** Post-image bytes per entry, aligned with the journal's entries; null where the path goes. */
  readonly postImages: readonly (Uint8Array | null)[];
}

/** A directory a commit may remove, workspace-relative, and the mode and owner to make it again with. */
export interface DirectoryOwner {
  readonly path: string;
  readonly owner: FileOwner;
}

const directoryOwnersByRecord = new WeakMap<JournalRecord, ReadonlyMap<string, FileOwner>>();

/**
 * The mode and owner of each directory `record`'s commit may remove, by path: none when the
 * journal keeps none (written before patchd did). Built once per record: a rollback asks for it
 * at every path it restores.
 */
export function directoryOwnersOf(record: JournalRecord): ReadonlyMap<string, FileOwner> {
  let owners = directoryOwnersByRecord.get(record);
  if (owners === undefined) {
    owners = new Map(record.directoryOwners?.map((directory) => [directory.path, directory.owner]));
    directoryOwnersByRecord.set(record, owners);
  }
  return owners;
}

export interface JournalEntryInput extends Omit<JournalEntry, 'before'> {
  /** `sha256`: of `bytes`, as the commit already knows it (from the snapshot it verified them against). */
  readonly before: { readonly bytes: Uint8Array; readonly owner: FileOwner; readonly sha256?: string | undefined } | null;
}

/** The journal, and the chunks of its file (header line, then each pre-image), written with one writev and no copy. */
export function encodeJournal(
  transactionId: string, root: string, inputs: readonly JournalEntryInput[], directories: readonly string[], meta?: unknown,
  removedDirectories: readonly string[] = [], directoryOwners: readonly DirectoryOwner[] = [],
): { journal: Journal; chunks: Uint8Array[] } {
  let offset = 0;
  const entries = inputs.map(({ before, ...entry }): JournalEntry => {
    if (before === null) return { ...entry, before: null };
    offset += before.bytes.byteLength;
    const at = { offset: offset - before.bytes.byteLength, length: before.bytes.byteLength, owner: before.owner };
    return { ...entry, before: before.sha256 === undefined ? at : { ...at, sha256: before.sha256 } };
  });
  const record: JournalRecord = {
    format: 1, transactionId, root, startedAt: Date.now(), entries, directories: [...directories],
    ...(removedDirectories.length === 0 ? {} : { removedDirectories: [...removedDirectories] }),
    ...(directoryOwners.length === 0 ? {} : { directoryOwners: [...directoryOwners] }),
    ...(meta === undefined ? {} : { meta }),
  };
  const preImages = inputs.map((input) => input.before?.bytes ?? null);
  return { journal: { record, preImages }, chunks: [sealedHeaderLine(record), ...preImages.filter((bytes) => bytes !== null)] };
}

/** How a sealed header line ends: the checksum, as the last key of its object. */
const SEAL = /,"headerCrc32":(\d{1,10})\}$/;
/** Longer than any seal, newline included. */
const SEAL_MAX_BYTES = 32;
/** The keys headers had before they were sealed. */
const UNSEALED_KEYS: ReadonlySet<string> = new Set(['format', 'transactionId', 'root', 'startedAt', 'entries', 'directories', 'removedDirectories', 'meta']);

/** The record's header line, newline included, sealed with its checksum: the crc32 of every byte before the seal. */
function sealedHeaderLine(record: JournalRecord): Buffer {
  const json = JSON.stringify(record);
  // Encoded once, the seal written over its closing brace: a large header is not copied again
  // (measured on a 1,000-file header: +5 % over the unsealed encoding; +30 % with a copy).
  const line = Buffer.allocUnsafe(Buffer.byteLength(json) + SEAL_MAX_BYTES);
  const covered = line.write(json) - 1;
  const sealed = line.write(`,"headerCrc32":${crc32(line.subarray(0, covered))}}\n`, covered, 'latin1');
  return line.subarray(0, covered + sealed);
}

/**
 * Whether a header `line` (parsed as `parsed`) fails its checksum: its seal does not match the
 * bytes before it, or it has no seal yet holds a key other than those unsealed headers had. One
 * with no seal and only those keys was written before patchd sealed headers, and is read as
 * before; one with other keys had a seal whose own bytes were damaged.
 */
function failsChecksum(line: Uint8Array, parsed: object): boolean {
  const tail = Buffer.from(line.subarray(Math.max(0, line.byteLength - SEAL_MAX_BYTES))).toString('latin1');
  const seal = SEAL.exec(tail);
  if (seal === null) return Object.keys(parsed).some((key) => !UNSEALED_KEYS.has(key));
  return crc32(line.subarray(0, line.byteLength - seal[0].length)) !== Number(seal[1]);
}

/** The redo section of a journal (appended to its chunks in the commit log): the post-images, aligned with its entries. */
export function encodeRedo(bootId: string | null, postImages: readonly (Uint8Array | null)[]): Uint8Array[] {
  let offset = 0;
  const after = postImages.map((bytes) => {
    if (bytes === null) return null;
    offset += bytes.byteLength;
    return { offset: offset - bytes.byteLength, length: bytes.byteLength };
  });
  const record: RedoRecord = { bootId, after };
  return [Buffer.from(`${JSON.stringify(record)}\n`), ...postImages.filter((bytes) => bytes !== null)];
}

/**
 * A journal's header line read back: its record, and whether the line fails its checksum (then
 * the record is only what the damaged line claims, to be told and never acted on).
 */
export interface DecodedHeader {
  readonly record: JournalRecord;
  readonly failsChecksum: boolean;
}

/** Parses a journal file's first line; undefined when it is not a journal record. Loads the schemas (zod) on first use. */
export async function decodeJournalHeader(line: Uint8Array): Promise<DecodedHeader | undefined> {
  const { JournalRecordSchema } = await import('./recordSchemas.ts');
  try {
    const parsed: unknown = JSON.parse(Buffer.from(line).toString('utf8'));
    const record = JournalRecordSchema.parse(parsed);
    return { record, failsChecksum: failsChecksum(line, parsed as object) };
  } catch {
    return undefined;
  }
}

/**
 * Parses a journal file (or an undo record); undefined when it is cut short or not a journal, or
 * its header fails its checksum (`JournalStore.load` and `records.ts` tell which).
 */
export async function decodeJournal(bytes: Uint8Array): Promise<Journal | undefined> {
  const newline = bytes.indexOf(0x0a);
  if (newline < 0) return undefined;
  const header = await decodeJournalHeader(bytes.subarray(0, newline));
  if (header === undefined || header.failsChecksum) return undefined;
  const { record } = header;
  const blobs = bytes.subarray(newline + 1);
  const complete = record.entries.every((entry) => entry.before === null || entry.before.offset + entry.before.length <= blobs.byteLength);
  if (!complete) return undefined;
  const preImages = record.entries.map(({ before }) => (before === null ? null : blobs.subarray(before.offset, before.offset + before.length)));
  const preImagesEnd = record.entries.reduce((end, { before }) => Math.max(end, before === null ? 0 : before.offset + before.length), 0);
  if (preImagesEnd === blobs.byteLength) return { record, preImages };
  const redo = await decodeRedo(blobs.subarray(preImagesEnd), record.entries.length);
  return redo === undefined ? undefined : { record, preImages, redo };
}

async function decodeRedo(bytes: Uint8Array, entries: number): Promise<Redo | undefined> {
  const newline = bytes.indexOf(0x0a);
  if (newline < 0) return undefined;
  const { RedoRecordSchema } = await import('./recordSchemas.ts');
  let record: RedoRecord;
  try {
    record = RedoRecordSchema.parse(JSON.parse(Buffer.from(bytes.subarray(0, newline)).toString('utf8')));
  } catch {
    return undefined;
  }
  const blobs = bytes.subarray(newline + 1);
  if (record.after.length !== entries || record.after.some((at) => at !== null && at.offset + at.length > blobs.byteLength)) return undefined;
  return { bootId: record.bootId, postImages: record.after.map((at) => (at === null ? null : blobs.subarray(at.offset, at.offset + at.length))) };
}

/** Distinguishes this process from an earlier one that had the same pid (a restarted container's pid 1). */
export const PROCESS_NONCE = randomBytes(4).toString('hex');
const JOURNAL_NAME = /^(\d+)-([0-9a-f]+)-(.+)\.journal$/;
/**
 * `orphan-<pid>-<nonce>-<log frame id>-<id>.journal`, as the commit log hands journals over
 * (`commitLog.ts`, `transaction.ts`): the id is the record name the commit logged, or (before
 * journals carried it) the journal id.
 */
const HANDED_OVER_NAME = /^orphan-\d+-[0-9a-f]+-\d+-(.+)\.journal$/;
/** `[orphan-]<pid>-<nonce>-<journal id>.journal`, as daemons before the commit log wrote them. */
const EARLIER_NAME = /^(?:orphan-)?\d+-[0-9a-f]+-(.+)\.journal$/;

/**
 * The transaction a journal file was written for, by its `name` alone (for one whose header
 * cannot be read): the journal id that ends it, without the `.<unit>` a commit applied file by
 * file adds to it (transaction ids hold no dot: `commit.ts`); the name without `.journal` when it
 * has neither form. An earlier daemon's `orphan-` name whose id starts with digits and a dash is
 * read as a handed-over one, its id cut after them: for a name, not for anything acted on.
 */
export function transactionIdOfJournalName(name: string): string {
  const handedOver = HANDED_OVER_NAME.exec(name)?.[1];
  const recorded = handedOver === undefined ? undefined : parseRecordName(handedOver);
  if (recorded !== undefined) return recorded.transactionId;
  const journalId = handedOver ?? EARLIER_NAME.exec(name)?.[1] ?? name.replace(/\.journal$/, '');
  return journalId.replace(/\.\d+$/, '');
}

/** The undo record name a handed-over journal's file `name` carries (its commit logged it); undefined for an older name, which carries none. */
export function recordNameOfJournalName(name: string): string | undefined {
  const id = HANDED_OVER_NAME.exec(name)?.[1];
  return id !== undefined && parseRecordName(id) !== undefined ? id : undefined;
}

/** A `keep`'s temp older than this was left by a killed process (see `removeSetAsideOlderThan`). */
const TEMP_GRACE_MS = 3_600_000;

export class JournalStore {
  readonly directory: string;

  constructor(stateDir: string, readonly syncer: DirectorySyncer, readonly disk: DiskCalls) {
    this.directory = path.join(stateDir, 'journal');
  }

  async prepare(): Promise<void> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    await this.syncer.pin(this.directory);
  }

  /**
   * Writes a journal file `name` durably (replacing one of that name): a commit the log hands
   * over for recovery, or one kept aside. Names are `<pid>-<nonce>-….journal` (recovered once
   * that process is gone), `orphan-….journal` (by the next open) or `….journal.conflict` (kept for the age retention keeps).
   */
  async keep(name: string, chunks: readonly Uint8Array[]): Promise<void> {
    const file = path.join(this.directory, name);
    const temp = `${file}.tmp`;
    await removeIfPresent(temp, this.disk);
    const handle = await this.disk.open(temp, 'wx', 0o600);
    try {
      await handle.writev(chunks);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await this.disk.rename(temp, file);
    await this.syncer.sync(this.directory);
  }

  /** Drops a finished journal; fsynced so a power loss cannot bring it back and undo a reported commit. */
  async remove(file: string): Promise<void> {
    await removeIfPresent(file, this.disk);
    await this.syncer.sync(this.directory);
  }

  /**
   * Keeps a journal recovery could not fully apply (someone changed a file meanwhile), or not at
   * all: its pre-images are the only copy. Returns its new path, dated now (`setAsideAs`).
   */
  async setAside(file: string): Promise<string> {
    return setAsideAs(file, '.conflict', this.disk);
  }

  /**
   * Removes the journals set aside with a conflict once older than `maxAgeMs` (retention: like
   * trash, they hold old pre-images); returns how many. Also the temps of a `keep` killed before
   * its rename, once older than `TEMP_GRACE_MS`: a keep renames its temp within the call, and
   * its journal is still in the commit log (or was never kept), so no temp is the only copy; one
   * kept under a name no later keep takes again would otherwise stay for good.
   */
  async removeSetAsideOlderThan(maxAgeMs: number, now: number): Promise<number> {
    const ageLimitOf = (name: string) => (name.endsWith('.conflict') ? maxAgeMs : name.endsWith('.tmp') ? TEMP_GRACE_MS : undefined);
    const removed = await removeAgedFiles(this.directory, ageLimitOf, now, (file) => removeIfPresent(file, this.disk));
    return removed.filter((name) => name.endsWith('.conflict')).length;
  }

  /** The journal `file`; what can be told of it when it does not decode. */
  async load(file: string): Promise<Journal | DamagedJournal> {
    const bytes = await readFile(file);
    const journal = await decodeJournal(bytes);
    if (journal !== undefined) return journal;
    const newline = bytes.indexOf(0x0a);
    const header = newline < 0 ? undefined : await decodeJournalHeader(bytes.subarray(0, newline));
    return { claims: header?.record, headerSound: header?.failsChecksum === false };
  }

  /**
   * Journals whose writer is gone: not this process's, and not a live process's. Not a
   * `….journal.tmp`: a `keep` killed before its rename, whose journal is still in the commit log
   * (its intent neither done nor cancelled), handed over again by the next open.
   */
  async listAbandoned(): Promise<string[]> {
    const names = await readdir(this.directory);
    return names.filter((name) => name.endsWith('.journal') && isAbandoned(name)).map((name) => path.join(this.directory, name));
  }
}

function isAbandoned(name: string): boolean {
  const match = JOURNAL_NAME.exec(name);
  return match === null || isAbandonedOwner(Number(match[1]), match[2]!);
}

/** Whether files named for process `pid` with `nonce` were left by a process that is gone (not this one, not a live one). */
export function isAbandonedOwner(pid: number, nonce: string): boolean {
  if (nonce === PROCESS_NONCE) return false;
  return pid === process.pid || !isProcessAlive(pid);
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && 'code' in error && error.code === 'EPERM';
  }
}
