/**
 * The intent journal: one file per in-flight commit in `<stateDir>/journal/`, written before
 * the first rename and dropped after the last directory fsync. It holds the pre-image bytes of
 * every path the commit replaces, so recovery never depends on anything inside the tree.
 *
 * File layout: one line of JSON (the `JournalRecord`), then the pre-images back to back; each
 * entry's `before` gives its offset and length in that byte region.
 * File name: `<pid>-<processNonce>-<transactionId>.journal`, so a daemon can tell its own live
 * journals, and another live daemon's, from those a killed daemon left behind.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { DiskCalls } from './diskCalls.ts';
import { removeIfPresent, type DirectorySyncer } from './durable.ts';
import type { FileOwner } from './files.ts';

const OwnerSchema = z.object({ mode: z.number().int(), uid: z.number().int(), gid: z.number().int() });

const JournalEntrySchema = z.object({
  path: z.string(),
  /** Name of the staged temp file beside `path`; null when the path is moved to trash. */
  tempName: z.string().nullable(),
  trashed: z.boolean(),
  /** Where the pre-image sits in the blob region; null when the path did not exist. */
  before: z.object({ offset: z.number().int().nonnegative(), length: z.number().int().nonnegative(), owner: OwnerSchema }).nullable(),
  /** sha256 of the new content; null when the path is gone afterwards. */
  afterSha256: z.string().nullable(),
});

const JournalRecordSchema = z.object({
  format: z.literal(1),
  transactionId: z.string(),
  root: z.string(),
  startedAt: z.number(),
  entries: z.array(JournalEntrySchema),
  /** Directories the commit may create, workspace-relative, parents first. */
  directories: z.array(z.string()),
  /** What the commit's undo record needs besides the entries (see `records.ts`). */
  meta: z.unknown().optional(),
});

export type JournalEntry = z.infer<typeof JournalEntrySchema>;
export type JournalRecord = z.infer<typeof JournalRecordSchema>;

export interface Journal {
  readonly record: JournalRecord;
  /** Pre-image bytes per entry, aligned with `record.entries`; null where the path did not exist. */
  readonly preImages: readonly (Uint8Array | null)[];
}

export interface JournalEntryInput extends Omit<JournalEntry, 'before'> {
  readonly before: { readonly bytes: Uint8Array; readonly owner: FileOwner } | null;
}

/** The journal, and the chunks of its file (header line, then each pre-image), written with one writev and no copy. */
export function encodeJournal(
  transactionId: string, root: string, inputs: readonly JournalEntryInput[], directories: readonly string[], meta?: unknown,
): { journal: Journal; chunks: Uint8Array[] } {
  let offset = 0;
  const entries = inputs.map(({ before, ...entry }): JournalEntry => {
    if (before === null) return { ...entry, before: null };
    offset += before.bytes.byteLength;
    return { ...entry, before: { offset: offset - before.bytes.byteLength, length: before.bytes.byteLength, owner: before.owner } };
  });
  const record: JournalRecord = { format: 1, transactionId, root, startedAt: Date.now(), entries, directories: [...directories], ...(meta === undefined ? {} : { meta }) };
  const preImages = inputs.map((input) => input.before?.bytes ?? null);
  const header = Buffer.from(`${JSON.stringify(record)}\n`);
  return { journal: { record, preImages }, chunks: [header, ...preImages.filter((bytes) => bytes !== null)] };
}

/** Parses a journal file's first line; undefined when it is not a journal record. */
export function decodeJournalHeader(line: Uint8Array): JournalRecord | undefined {
  try {
    return JournalRecordSchema.parse(JSON.parse(Buffer.from(line).toString('utf8')));
  } catch {
    return undefined;
  }
}

/** Parses a journal file; undefined when it is truncated or not a journal (a crash while writing it: nothing was renamed yet). */
export function decodeJournal(bytes: Uint8Array): Journal | undefined {
  const newline = bytes.indexOf(0x0a);
  if (newline < 0) return undefined;
  const record = decodeJournalHeader(bytes.subarray(0, newline));
  if (record === undefined) return undefined;
  const blobs = bytes.subarray(newline + 1);
  const complete = record.entries.every((entry) => entry.before === null || entry.before.offset + entry.before.length <= blobs.byteLength);
  if (!complete) return undefined;
  const preImages = record.entries.map(({ before }) => (before === null ? null : blobs.subarray(before.offset, before.offset + before.length)));
  return { record, preImages };
}

/** Distinguishes this process from an earlier one that had the same pid (a restarted container's pid 1). */
const PROCESS_NONCE = randomBytes(4).toString('hex');
const JOURNAL_NAME = /^(\d+)-([0-9a-f]+)-(.+)\.journal$/;

export interface PendingJournal {
  readonly file: string;
  /** Settles once the journal and its directory entry are fsynced. */
  readonly durable: Promise<void>;
}

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
   * Writes the journal now and, when `fsync`, starts its fsync, which the caller overlaps with
   * staging. Without `fsync` the journal still survives a killed process (it is in the page
   * cache); only a power loss can drop it.
   */
  async begin(journalId: string, chunks: readonly Uint8Array[], fsync: boolean): Promise<PendingJournal> {
    const file = path.join(this.directory, `${process.pid}-${PROCESS_NONCE}-${journalId}.journal`);
    const handle = await this.disk.open(file, 'wx', 0o600);
    try {
      await handle.writev(chunks);
    } catch (error) {
      await handle.close();
      await removeIfPresent(file, this.disk);
      throw error;
    }
    const synced = fsync ? Promise.all([handle.sync(), this.syncer.sync(this.directory)]) : Promise.resolve();
    return { file, durable: synced.finally(() => handle.close()).then(() => undefined) };
  }

  /** Drops a finished journal; fsynced so a power loss cannot bring it back and undo a reported commit. */
  async remove(file: string): Promise<void> {
    await removeIfPresent(file, this.disk);
    await this.syncer.sync(this.directory);
  }

  /**
   * Hands a journal whose rollback failed in this process to the next `Workspace.open`: the
   * new name carries no live owner, so it counts as abandoned.
   */
  async orphan(file: string): Promise<void> {
    await this.disk.rename(file, path.join(this.directory, `orphan-${path.basename(file)}`));
  }

  /** Keeps a journal recovery could not fully apply (someone changed a file meanwhile): its pre-images are the only copy. */
  async setAside(file: string): Promise<void> {
    await this.disk.rename(file, `${file}.conflict`);
  }

  async load(file: string): Promise<Journal | undefined> {
    return decodeJournal(await readFile(file));
  }

  /** Journals whose writer is gone: not this process's, and not a live process's. */
  async listAbandoned(): Promise<string[]> {
    const names = await readdir(this.directory);
    return names.filter((name) => name.endsWith('.journal') && isAbandoned(name)).map((name) => path.join(this.directory, name));
  }
}

function isAbandoned(name: string): boolean {
  const match = JOURNAL_NAME.exec(name);
  if (match === null) return true;
  const pid = Number(match[1]);
  if (match[2] === PROCESS_NONCE) return false;
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
