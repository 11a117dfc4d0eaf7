/**
 * Undo records: what every committed transaction leaves in `<stateDir>/history/`, so it can be
 * undone, diffed and listed — after a restart too.
 *
 * A record is the commit's own intent journal, moved into `history/` as the commit's last step
 * (see `transaction.ts`; recovery does the same for a commit it rolls forward). The journal
 * already holds every pre-image and post-image hash, and moving it is one atomic rename, so a
 * crash never leaves an applied transaction without its record, nor a record of one that did
 * not apply: a journal still in `journal/` is a commit in flight, one in `history/` committed.
 *
 * File name: `<commit time, ms, 13 digits>-<pid>-<sequence>-<transactionId>.<unit>.record`. The
 * name orders records by commit; `unit` tells apart the per-file transactions of an
 * `atomic: false` patch, which share one transaction id.
 */
import { mkdir, open, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { DiskCalls } from './diskCalls.ts';
import { removeIfPresent, type DirectorySyncer } from './durable.ts';
import { hasErrorCode } from './ioErrors.ts';
import { decodeJournal, decodeJournalHeader, type Journal, type JournalRecord } from './journal.ts';

const FileChangeSchema = z.object({
  path: z.string(),
  fromPath: z.string().optional(),
  op: z.enum(['add', 'update', 'delete', 'rename']),
});

/** What a commit tells its record besides the journal's entries (stored in the journal's `meta`). */
export const RecordMetaSchema = z.object({
  /** The receipt's `format` (`undo` for an undo). */
  format: z.string(),
  /** The files of this unit as the receipt names them. */
  files: z.array(FileChangeSchema),
  /** This unit's index, and how many units the patch planned (1 unless `atomic: false`). */
  unit: z.number().int().nonnegative(),
  units: z.number().int().positive(),
  /** For an undo: the transaction it undid. */
  undoOf: z.string().optional(),
});

export type RecordMeta = z.infer<typeof RecordMetaSchema>;
export type FileChange = z.infer<typeof FileChangeSchema>;

/** A record found in `history/`, by name only. */
export interface RecordName {
  readonly file: string;
  /** Orders records by commit (string order). */
  readonly key: string;
  /** Commit time, ms since the epoch. */
  readonly at: number;
  readonly transactionId: string;
}

/** A record's header: the journal record and its meta (no pre-image bytes). */
export interface RecordHeader extends RecordName {
  readonly record: JournalRecord;
  readonly meta: RecordMeta;
}

/** A record with its pre-images. */
export interface LoadedRecord extends RecordHeader {
  readonly journal: Journal;
}

const RECORD_NAME = /^((\d{13})-\d+-\d+)-([A-Za-z0-9_-]+)\.(\d+)\.record$/;
let sequence = 0;

export class RecordStore {
  readonly directory: string;
  readonly #syncer: DirectorySyncer;
  readonly #disk: DiskCalls;

  constructor(stateDir: string, syncer: DirectorySyncer, disk: DiskCalls) {
    this.directory = path.join(stateDir, 'history');
    this.#syncer = syncer;
    this.#disk = disk;
  }

  async prepare(): Promise<void> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
  }

  /**
   * Makes the journal `file` (of a commit whose every rename is done) its transaction's record:
   * one rename, made durable. If the rename cannot be made durable it is taken back and this
   * throws, so the caller can still roll the commit back from the journal where it was.
   */
  async adopt(file: string, record: JournalRecord): Promise<void> {
    const meta = RecordMetaSchema.parse(record.meta);
    sequence += 1;
    const name = `${String(Date.now()).padStart(13, '0')}-${process.pid}-${sequence}-${record.transactionId}.${meta.unit}.record`;
    const target = path.join(this.directory, name);
    await this.#disk.rename(file, target);
    try {
      await this.#syncer.sync(this.directory);
    } catch (error) {
      await this.#disk.rename(target, file);
      throw error;
    }
    await this.#syncer.sync(path.dirname(file)).catch(() => undefined);
  }

  /** Every record, oldest first. */
  async list(): Promise<RecordName[]> {
    let names: string[];
    try {
      names = await readdir(this.directory);
    } catch (error) {
      if (hasErrorCode(error, 'ENOENT')) return [];
      throw error;
    }
    const records: RecordName[] = [];
    for (const name of names) {
      const match = RECORD_NAME.exec(name);
      if (match === null) continue;
      records.push({ file: path.join(this.directory, name), key: `${match[1]}.${match[4]}`, at: Number(match[2]), transactionId: match[3]! });
    }
    return records.sort((a, b) => compareKeys(a.key, b.key));
  }

  /** The record's header, or undefined when it is unreadable (or was pruned meanwhile). */
  async header(name: RecordName): Promise<RecordHeader | undefined> {
    const line = await readFirstLine(name.file);
    if (line === undefined) return undefined;
    const record = decodeJournalHeader(line);
    const meta = RecordMetaSchema.safeParse(record?.meta);
    if (record === undefined || !meta.success) return undefined;
    return { ...name, record, meta: meta.data };
  }

  /** The record with its pre-images, or undefined when it is unreadable (or was pruned meanwhile). */
  async load(name: RecordName): Promise<LoadedRecord | undefined> {
    let bytes: Buffer;
    try {
      bytes = await readFile(name.file);
    } catch (error) {
      if (hasErrorCode(error, 'ENOENT')) return undefined;
      throw error;
    }
    const journal = decodeJournal(bytes);
    const meta = RecordMetaSchema.safeParse(journal?.record.meta);
    if (journal === undefined || !meta.success) return undefined;
    return { ...name, record: journal.record, meta: meta.data, journal };
  }

  async remove(name: RecordName): Promise<void> {
    await removeIfPresent(name.file, this.#disk);
  }
}

/** Orders keys `<13-digit ms>-<pid>-<seq>.<unit>`: by time, then pid, then sequence, then unit. */
export function compareKeys(a: string, b: string): number {
  const left = a.split(/[-.]/).map(Number);
  const right = b.split(/[-.]/).map(Number);
  for (let index = 0; index < Math.max(left.length, right.length); index += 1) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

async function readFirstLine(file: string): Promise<Buffer | undefined> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
  try {
    const chunks: Buffer[] = [];
    for (let position = 0; ; ) {
      const chunk = Buffer.alloc(64 * 1024);
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) return undefined;
      const newline = chunk.subarray(0, bytesRead).indexOf(0x0a);
      if (newline >= 0) return Buffer.concat([...chunks, chunk.subarray(0, newline)]);
      chunks.push(chunk.subarray(0, bytesRead));
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
}
