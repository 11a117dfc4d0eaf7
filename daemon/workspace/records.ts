/**
 * Undo records: what every committed transaction leaves in `<stateDir>/history/`, so it can be
 * undone, diffed and listed — after a restart too.
 *
 * A record is the commit's own journal (every pre-image and post-image hash; `journal.ts`). A
 * commit logs it as its intent in the commit log before its first rename, writes it here once
 * that intent is durable (while its renames and directory fsyncs run), and logs itself done
 * only after both (see `commitLog.ts`, which also says how recovery keeps exactly the records
 * of the commits that applied). Written here without fsync, and straight under its own name:
 * the log holds the durable copy until its checkpoint fsyncs the record, and recovery re-writes
 * a record it finds short (or discards it, for a commit that did not finish). So a record is
 * never created twice (a temp and a rename, about a tenth of a busy daemon's CPU per commit).
 * A record that cannot be read whole is reported as such (`DamagedRecord`); the history asks
 * the commit log whether its commit is still in flight (`history.ts`). If so, it is being
 * written, and passed over: its commit has not been reported yet, or is a small one-file commit
 * reported just before its record (`transaction.ts`; a workspace's own queries wait for it).
 * Otherwise it is damaged, and said to be — never passed over in silence. Each pre-image carries
 * its sha256 (records written before it did have none), checked before an undo or a session
 * diff uses its bytes, and by the listing of every record it lists; the header carries a
 * checksum of its own (`journal.ts`), checked by every read of it, so a header changed since
 * it was written is damaged however well it parses. A record is bound to its workspace and its
 * name: one whose header names another root (copied from another workspace's history), or
 * another transaction or unit than its file name, is damaged too, so it never drives an undo
 * or a session diff here. Encoding needs no zod; reading loads the schemas lazily.
 *
 * File name: `<commit time, ms, 13 digits>-<pid>.<processNonce>-<sequence>-<transactionId>.<unit>.record`
 * (`<time>-<pid>-<sequence>-…` before patchd named the process nonce: `journal.ts`). The name
 * orders records by commit; `unit` tells apart the per-file transactions of an `atomic: false`
 * patch, which share one transaction id. The sequence counts the names a process gave, in the
 * order its commits logged their intents, so of two records of one process (pid and nonce) the
 * later sequence began later, however the clock was set (`orderOfRecordName`, `begunAfter`).
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readdir, readFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { SYNC_IO_MAX_BYTES, totalBytes, writeAll, writeAllSync, type DiskCalls } from './diskCalls.ts';
import { removeIfPresent, type DirectorySyncer } from './durable.ts';
import { sha256Hex } from './files.ts';
import { hasErrorCode, ifPresent } from './ioErrors.ts';
import { parseRecordName } from './recordNames.ts';
import { decodeJournal, decodeJournalHeader, PROCESS_NONCE, type Journal, type JournalRecord } from './journal.ts';

export interface FileChange {
  readonly path: string;
  readonly fromPath?: string | undefined;
  readonly op: 'add' | 'update' | 'delete' | 'rename';
}

/** What a commit tells its record besides the journal's entries (stored in the journal's `meta`). */
export interface RecordMeta {
  /** The receipt's `format` (`undo` for an undo). */
  readonly format: string;
  /** The files of this unit as the receipt names them. */
  readonly files: readonly FileChange[];
  /** This unit's index, and how many units the patch planned (1 unless `atomic: false`). */
  readonly unit: number;
  readonly units: number;
  /** For an undo: the transaction it undid. */
  readonly undoOf?: string | undefined;
}

/** A record found in `history/`, by name only. */
export interface RecordName {
  readonly file: string;
  /** Orders records by commit (`compareKeys`). */
  readonly key: string;
  /** Commit time, ms since the epoch. */
  readonly at: number;
  readonly transactionId: string;
  /** The unit its name gives (`RecordMeta.unit`). */
  readonly unit: number;
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

/**
 * A record that is there but cannot be trusted: cut short, not a record at all, a header that
 * fails its checksum, another workspace's, transaction's or unit's, or (once loaded) a pre-image
 * whose bytes no longer hash to the sha256 recorded with it. `damage` says which, as a predicate of "the record" (`is cut
 * short: …`). Its commit may be writing it still (see `history.ts`).
 */
export interface DamagedRecord extends RecordName {
  readonly damage: string;
  /** Set by `header` when the record's header is whole and its own (the damage lies after it): what the listing can still tell of it. */
  readonly meta?: RecordMeta | undefined;
}

export function isDamaged<T extends object>(read: T | DamagedRecord): read is DamagedRecord {
  return 'damage' in read;
}

/** How many records a checkpoint fsyncs at once. */
const SYNC_BATCH = 64;
/** An empty file naming the newest key retention removed (see `notePruned`); not a record name, so listing passes it over. */
const PRUNE_MARK_PREFIX = 'pruned-through-';
const PRUNE_MARK = /^pruned-through-(\d{13}-\d+-\d+\.\d+)$/;
let sequence = 0;

export class RecordStore {
  readonly directory: string;
  /** The workspace's root (a realpath), as every record written for it names it. */
  readonly #root: string;
  readonly #syncer: DirectorySyncer;
  readonly #disk: DiskCalls;

  constructor(stateDir: string, root: string, syncer: DirectorySyncer, disk: DiskCalls) {
    this.directory = path.join(stateDir, 'history');
    this.#root = root;
    this.#syncer = syncer;
    this.#disk = disk;
  }

  async prepare(): Promise<void> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
  }

  /** A new record's file name: ordered by commit (this call's time, then this process's sequence), unique. */
  nameFor(record: JournalRecord, meta: RecordMeta): string {
    sequence += 1;
    return `${String(Date.now()).padStart(13, '0')}-${process.pid}.${PROCESS_NONCE}-${sequence}-${record.transactionId}.${meta.unit}.record`;
  }

  /**
   * Writes a committing transaction's record under `name` (from `nameFor`), without fsync and
   * without a temp (see the module comment). Created, written and closed on the main thread, as
   * the temps in the tree are, unless it is large: three thread-pool round trips cost the main
   * thread more than the calls themselves. Measured, 1,000 one-file commits 32 in flight, A/B
   * interleaved: 3 to 7 % more commits per second than on the thread pool, on ext4 with a
   * journal (a loop device) as without one; sequential commits no slower.
   */
  async write(name: string, chunks: readonly Uint8Array[]): Promise<void> {
    const file = path.join(this.directory, name);
    const fd = this.#disk.openSync(file, 'w', 0o600);
    try {
      if (totalBytes(chunks) <= SYNC_IO_MAX_BYTES) writeAllSync(this.#disk, fd, chunks);
      else await writeAll(this.#disk, fd, chunks);
    } catch (error) {
      // A torn record would be listed (its header may be whole) yet could not be undone; a failed close must not keep it.
      try {
        this.#disk.closeSync(fd);
      } finally {
        await removeIfPresent(file, this.#disk).catch(() => undefined);
      }
      throw error;
    }
    this.#disk.closeSync(fd);
  }

  /** Writes `bytes` as record `name` durably, unless it already holds them (recovery re-creating a record a power loss dropped). */
  async restore(name: string, bytes: Uint8Array): Promise<void> {
    const target = path.join(this.directory, name);
    const current = await ifPresent(readFile(target));
    if (current !== undefined && Buffer.compare(current, bytes) === 0) return;
    await this.write(name, [bytes]);
    await this.syncFiles([name]);
  }

  /** Drops a record written for a commit that did not finish. */
  async discard(name: string): Promise<void> {
    await removeIfPresent(path.join(this.directory, name), this.#disk);
  }

  /**
   * Makes records written by `write` durable: each file (a bounded number at a time, not to run
   * out of descriptors; opened and closed synchronously, fsynced on the thread pool), then the directory.
   */
  async syncFiles(names: readonly string[]): Promise<void> {
    for (let start = 0; start < names.length; start += SYNC_BATCH) await Promise.all(names.slice(start, start + SYNC_BATCH).map(async (name) => {
      let fd;
      try {
        fd = this.#disk.openSync(path.join(this.directory, name), 'r');
      } catch (error) {
        // Pruned by retention meanwhile: nothing left to keep.
        if (hasErrorCode(error, 'ENOENT')) return;
        throw error;
      }
      try {
        await this.#disk.fsync(fd);
      } finally {
        this.#disk.closeSync(fd);
      }
    }));
    await this.#syncer.sync(this.directory);
  }

  /**
   * Makes the journal `file` (a commit recovery rolled forward) its transaction's record: one
   * rename, made durable. Named `name`, the name its commit logged (`recordNameOfJournalName`), so
   * it lists where it committed, not where it was recovered; a new name where the journal tells
   * none (handed over before patchd named it) or one not this transaction's and unit's. A record
   * already there under that name is replaced: the log's hand-over discards it (written for a
   * commit not yet done), and the journal holds the same bytes and the redo section besides.
   * Retention may since have noted a newer record pruned (`notePruned`): a window starting at
   * this one is then refused as past retention — a note that claims too much, never too little.
   */
  async adopt(file: string, record: JournalRecord, name?: string): Promise<void> {
    const { RecordMetaSchema } = await import('./recordSchemas.ts');
    const meta = RecordMetaSchema.parse(record.meta);
    const logged = name === undefined ? undefined : parseRecordName(name);
    const fits = logged !== undefined && logged.transactionId === record.transactionId && Number(logged.unit) === meta.unit;
    const target = path.join(this.directory, fits ? name! : this.nameFor(record, meta));
    await this.#disk.rename(file, target);
    await this.#syncer.sync(this.directory);
    await this.#syncer.sync(path.dirname(file));
  }

  /** Every record, oldest first. */
  async list(): Promise<RecordName[]> {
    const names = (await ifPresent(readdir(this.directory))) ?? [];
    const records: { name: RecordName; order: number[] }[] = [];
    for (const name of names) {
      const parts = parseRecordName(name);
      if (parts === undefined) continue;
      const { at, pid, sequence, transactionId, unit } = parts;
      const key = `${at}-${pid}-${sequence}.${unit}`;
      records.push({ name: { file: path.join(this.directory, name), key, at: Number(at), transactionId, unit: Number(unit) }, order: keyParts(key) });
    }
    // Each key is split once: a long history is sorted in milliseconds, not seconds.
    return records.sort((a, b) => compareParts(a.order, b.order)).map(({ name }) => name);
  }

  /** The newest key retention removed, or undefined when it removed none: a window starting before it lost transactions. */
  async prunedThrough(): Promise<string | undefined> {
    return (await this.#pruneMarks()).reduce<string | undefined>((newest, key) => (newest === undefined || compareKeys(key, newest) > 0 ? key : newest), undefined);
  }

  /**
   * Notes, durably, that retention removes records up to `key`, before it removes them: a crash
   * in between leaves a note that claims too much (a session diff refused that could have been
   * told), never one that claims too little (one told wrong). Each note is a file of its own,
   * named by its key, so two processes pruning at once cannot overwrite a newer note with an
   * older one; older notes are removed once a newer one is durable.
   */
  async notePruned(key: string): Promise<void> {
    const marks = await this.#pruneMarks();
    if (marks.some((mark) => compareKeys(mark, key) >= 0)) return;
    const handle = await this.#disk.open(path.join(this.directory, `${PRUNE_MARK_PREFIX}${key}`), 'w', 0o600);
    await handle.close();
    await this.#syncer.sync(this.directory);
    await Promise.all(marks.map((mark) => removeIfPresent(path.join(this.directory, `${PRUNE_MARK_PREFIX}${mark}`), this.#disk)));
  }

  async #pruneMarks(): Promise<string[]> {
    const names = (await ifPresent(readdir(this.directory))) ?? [];
    return names.flatMap((name) => PRUNE_MARK.exec(name)?.[1] ?? []);
  }

  /**
   * The record's header; damaged when it cannot be read, fails its checksum, is not this
   * workspace's or this name's, or its file is shorter than its header says (a pre-image cut short: told from the size), and
   * with `verify` when a pre-image fails its sha256 — read a chunk at a time, so a large record
   * costs its reading and hashing, not its size in memory; undefined when it is gone (pruned
   * meanwhile).
   */
  async header(name: RecordName, verify = false): Promise<RecordHeader | DamagedRecord | undefined> {
    const handle = await ifPresent(open(name.file, 'r'));
    if (handle === undefined) return undefined;
    try {
      const head = await readFirstLine(handle);
      const checked = await checkedHeader(head.line, head.size);
      if (typeof checked === 'string') return damaged(name, checked);
      const { record, meta, cutShort } = checked;
      const foreign = this.#bindingDamage(name, record, meta);
      if (foreign !== undefined) return damaged(name, foreign);
      if (cutShort !== undefined) return damaged(name, cutShort, meta);
      const damage = verify ? await preImageDamageOnDisk(handle, head.prefix, head.line!.byteLength + 1, record) : undefined;
      return damage === undefined ? { ...name, record, meta } : damaged(name, damage, meta);
    } finally {
      await handle.close();
    }
  }

  /**
   * The record with its pre-images; damaged when it cannot be read whole or, with `verify` (the
   * default), when a pre-image fails its sha256 (`preImageDamage` checks one); undefined when it
   * is gone (pruned meanwhile).
   */
  async load(name: RecordName, verify = true): Promise<LoadedRecord | DamagedRecord | undefined> {
    const bytes = await ifPresent(readFile(name.file));
    if (bytes === undefined) return undefined;
    const journal = await decodeJournal(bytes);
    if (journal === undefined) return damaged(name, await whyUndecodable(bytes));
    const meta = await recordMeta(journal.record);
    if (typeof meta === 'string') return damaged(name, meta);
    const foreign = this.#bindingDamage(name, journal.record, meta);
    if (foreign !== undefined) return damaged(name, foreign);
    const loaded: LoadedRecord = { ...name, record: journal.record, meta, journal };
    if (!verify) return loaded;
    for (let index = 0; index < journal.record.entries.length; index += 1) {
      const damage = preImageDamage(loaded, index);
      if (damage !== undefined) return damaged(name, damage);
    }
    return loaded;
  }

  /**
   * Why a record whose header reads well is not this workspace's record `name`: it names another
   * root (copied from another workspace's history: its pre-images are that tree's, and undoing it
   * here would write them over this one's files), or another transaction or unit than its file
   * name (a record copied under another unit would count one unit's files twice, and undo them
   * twice). The other root is not told: it is another workspace's path.
   */
  #bindingDamage(name: RecordName, record: JournalRecord, meta: RecordMeta): string | undefined {
    if (record.root !== this.#root) return 'was written for another workspace (its header names another root), not this one';
    if (record.transactionId !== name.transactionId) {
      const held = record.transactionId.length > 80 ? `${record.transactionId.slice(0, 80)}…` : record.transactionId;
      return `is named for transaction ${name.transactionId} but holds another transaction's (${JSON.stringify(held)})`;
    }
    return meta.unit === name.unit ? undefined : `is named for unit ${name.unit} of its transaction but was written for another unit (${meta.unit})`;
  }

  async remove(name: RecordName): Promise<void> {
    await removeIfPresent(name.file, this.#disk);
  }
}

/**
 * When a transaction began, as far as can be told: its time, and — where its record name tells
 * them — its process (`<pid>.<nonce>`) and its place in that process's order.
 */
export interface BeginOrder {
  readonly at: number;
  readonly process?: string | undefined;
  readonly sequence?: number | undefined;
}

/** The begin order a record name tells (`process` only when it names the nonce); undefined when it is not a record name. */
export function orderOfRecordName(name: string): BeginOrder | undefined {
  const parts = parseRecordName(name);
  if (parts === undefined) return undefined;
  const { at, pid, nonce, sequence } = parts;
  return nonce === undefined ? { at: Number(at) } : { at: Number(at), process: `${pid}.${nonce}`, sequence: Number(sequence) };
}

/**
 * Whether `later` began after `earlier`: exactly, by their sequences, when both are of one
 * process; else by the clock, `later` at most `slackMs` before `earlier` (a clock stepped back
 * between them; a negative slack asks for `later` strictly after).
 */
export function begunAfter(later: BeginOrder, earlier: BeginOrder, slackMs: number): boolean {
  if (later.process !== undefined && later.process === earlier.process) return later.sequence! > earlier.sequence!;
  return later.at >= earlier.at - slackMs;
}

/** Orders keys `<13-digit ms>-<pid>-<seq>.<unit>`: by time, then pid, then sequence, then unit. */
export function compareKeys(a: string, b: string): number {
  return compareParts(keyParts(a), keyParts(b));
}

function keyParts(key: string): number[] {
  return key.split(/[-.]/).map(Number);
}

function compareParts(left: readonly number[], right: readonly number[]): number {
  for (let index = 0; index < Math.max(left.length, right.length); index += 1) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/**
 * Why the pre-image at `index` of a loaded record cannot be used: its bytes no longer hash to
 * the sha256 recorded with them. Undefined when they do, or when the record (written before
 * patchd kept that hash) has none. Hashed through `sha256Hex`: an undo that restores these bytes
 * finds their hash known when it commits them.
 */
export function preImageDamage({ record, journal }: LoadedRecord, index: number): string | undefined {
  const expected = record.entries[index]?.before?.sha256;
  const bytes = journal.preImages[index];
  if (expected === undefined || bytes === null || bytes === undefined || sha256Hex(bytes) === expected) return undefined;
  return preImageMismatch(record.entries[index]!.path);
}

function preImageMismatch(path: string): string {
  return `holds a pre-image of ${path} that no longer matches the sha256 recorded with it`;
}

/** How much of a pre-image the listing reads at once to hash it. */
const HASH_CHUNK_BYTES = 1024 * 1024;

/**
 * `preImageDamage` for every pre-image of a record on disk, read from `handle` a chunk at a time
 * (`prefix`, the file's start already read for its header, serves the pre-images inside it: a
 * small record is read once). Pre-images lie after the header line, from `bodyStart`.
 */
async function preImageDamageOnDisk(handle: FileHandle, prefix: Buffer, bodyStart: number, record: JournalRecord): Promise<string | undefined> {
  let chunk: Buffer | undefined;
  for (const { path, before } of record.entries) {
    if (before?.sha256 === undefined) continue;
    const start = bodyStart + before.offset;
    const hash = createHash('sha256');
    if (start + before.length <= prefix.byteLength) {
      hash.update(prefix.subarray(start, start + before.length));
    } else {
      chunk ??= Buffer.allocUnsafe(HASH_CHUNK_BYTES);
      for (let done = 0; done < before.length; ) {
        const { bytesRead } = await handle.read(chunk, 0, Math.min(chunk.byteLength, before.length - done), start + done);
        // Shorter than its size said a moment ago: cut short since, which no longer matches either.
        if (bytesRead === 0) return preImageMismatch(path);
        hash.update(chunk.subarray(0, bytesRead));
        done += bytesRead;
      }
    }
    if (hash.digest('hex') !== before.sha256) return preImageMismatch(path);
  }
  return undefined;
}

function damaged(name: RecordName, damage: string, meta?: RecordMeta): DamagedRecord {
  return meta === undefined ? { ...name, damage } : { ...name, damage, meta };
}

/**
 * The header and meta of a record whose first line is `line` (undefined when it has none) in a
 * file of `size` bytes — with `cutShort` when the file is shorter than the header says — or why
 * the header cannot be read: the checks `header` makes from the first line and the size, and
 * `whyUndecodable` from all the bytes.
 */
async function checkedHeader(line: Uint8Array | undefined, size: number): Promise<{ record: JournalRecord; meta: RecordMeta; cutShort?: string } | string> {
  if (line === undefined) return size === 0 ? 'is empty' : 'has no header line (cut short, or not a record)';
  const header = await decodeJournalHeader(line);
  if (header === undefined) return 'has a header line that is not an undo record\'s (damaged, or not a record)';
  if (header.failsChecksum) return 'has a header that fails its checksum (changed since it was written: a disk fault, or an edit by hand), so nothing it says can be trusted';
  const { record } = header;
  const meta = await recordMeta(record);
  if (typeof meta === 'string') return meta;
  const needed = line.byteLength + 1 + preImagesEnd(record);
  return size < needed ? { record, meta, cutShort: `is cut short: ${size} of the ${needed} bytes its header describes` } : { record, meta };
}

/** A record's meta, or why it is not an undo record's. */
async function recordMeta(record: JournalRecord): Promise<RecordMeta | string> {
  const { RecordMetaSchema } = await import('./recordSchemas.ts');
  const meta = RecordMetaSchema.safeParse(record.meta);
  return meta.success ? meta.data : 'has a header that is not an undo record\'s';
}

/** Where a record's pre-images end, after its header line. */
function preImagesEnd(record: JournalRecord): number {
  return record.entries.reduce((end, { before }) => Math.max(end, before === null ? 0 : before.offset + before.length), 0);
}

/** In words, why `decodeJournal` refused a record's bytes. */
async function whyUndecodable(bytes: Uint8Array): Promise<string> {
  const newline = bytes.indexOf(0x0a);
  const checked = await checkedHeader(newline < 0 ? undefined : bytes.subarray(0, newline), bytes.byteLength);
  if (typeof checked === 'string') return checked;
  return checked.cutShort ?? 'has bytes after its pre-images that are not a record\'s';
}

/**
 * A file's first line (undefined when it has none: no newline), its size, and `prefix`: the
 * bytes read from its start to find the line (the line, and whatever followed it in the same read).
 */
async function readFirstLine(handle: FileHandle): Promise<{ readonly line: Buffer | undefined; readonly size: number; readonly prefix: Buffer }> {
  const { size } = await handle.stat();
  const chunks: Buffer[] = [];
  for (let position = 0; ; ) {
    const chunk = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
    if (bytesRead === 0) return { line: undefined, size, prefix: Buffer.concat(chunks) };
    const newline = chunk.subarray(0, bytesRead).indexOf(0x0a);
    chunks.push(chunk.subarray(0, bytesRead));
    position += bytesRead;
    if (newline < 0) continue;
    const prefix = Buffer.concat(chunks);
    // Sized after the read, as a file still being written may have grown.
    return { line: prefix.subarray(0, position - bytesRead + newline), size: Math.max(size, position), prefix };
  }
}
