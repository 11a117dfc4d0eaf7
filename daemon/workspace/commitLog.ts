/**
 * The commit log: group commit for journals and undo records (DESIGN, Durability).
 *
 * Every transaction appends an intent frame — its journal (pre-images, post-image hashes) and
 * the name its undo record takes — and, once its renames and directory fsyncs are durable, a
 * done frame. Frames are written at once (synchronously, to the page cache) and concurrent
 * transactions share the fdatasyncs: one makes durable every frame written before it started;
 * a write never waits for an fdatasync. So concurrent commits share their log fsyncs, and a
 * one-file commit writes no journal file of its own.
 *
 * The order that keeps every guarantee, per transaction:
 *   intent durable (overlapping the fsync of its staged temps) → renames → parent directories
 *   fsynced (coalesced, `DirectorySyncer`) → done → reported applied;
 *   the record is written to `history/` (no fsync) once the intent is durable, and before done.
 * The log holds the durable copy of each record until a checkpoint (a full segment whose every
 * intent is settled, or `close`) fsyncs the records and deletes the segment.
 *
 * "Done" before the report means durable for a commit of several paths, and only written for a
 * commit of one path (its fdatasync follows at once). That is enough because the renames are
 * durable by then: a commit whose done frame a power loss drops is found unsettled with its one
 * post-image in place, and recovery rolls it forward with its record, as if done had been
 * durable. A kill loses nothing written. No later commit of patchd can change the file first:
 * it renames only once its own intent is durable, and that fdatasync covers the done frame
 * written before (a segment whose write or fdatasync failed is not trusted again, and a done
 * frame whose fdatasync failed is written once more to another segment). What remains is an
 * outside writer changing the file in that instant before a power loss: recovery then leaves
 * the file as that writer left it, as it would have anyway, and keeps the journal aside
 * instead of a record. For several paths that would mean rolling the others back, so they
 * wait for the fdatasync.
 *
 * A small one-file write goes further (`transaction.ts`): its intent also carries the
 * post-image (a redo section), it is reported once renamed, and its done frame follows the
 * fsyncs of the file and its directory, after the report. Until then it is unsettled like any
 * commit killed before done, and recovery finishes it — from the post-image in the log when a
 * reboot may have lost the rename (`recovery.ts`).
 *
 * Recovery (`recoverAbandoned`, on open, for the segments of a dead process, or of a log of this
 * process closed since with a commit unsettled): a done intent's record is re-written if a power
 * loss dropped it; an intent with neither done nor cancelled is a commit that was never reported
 * applied, or a one-file commit whose done frame a power loss dropped (or whose record could not
 * be written): its record, if written, is discarded and it becomes a journal file in `journal/`
 * (named with that record's name: `journal.ts`), which journal recovery (`recovery.ts`) rolls
 * forward (the journal then becomes the record, under that name) or back. So a crash never leaves an applied transaction without its record, nor a record of one
 * that did not apply — except where an outside writer changed a file after a commit renamed it
 * and before it was logged done: recovery then sees neither image, leaves the file alone and
 * keeps the journal aside as a conflict, without a record.
 *
 * Segment file: `<pid>-<processNonce>-<seq>.log` in `<stateDir>/log/`; its frames, and how a
 * torn tail is told from damage: `logFrames.ts`. A torn tail is read up to. Damage before it
 * (a disk fault) is skipped: the frames after it are recovered as any others, and the segment is
 * kept aside as `<name>.damaged`, which neither recovery nor `unsettledRecords` reads (retention
 * removes it once older than the age it keeps), and reported to the caller, who logs it with the
 * bytes lost. What a damaged frame held cannot be read, so:
 * - a done frame: its intent looks unsettled and goes to journal recovery, which rolls the
 *   commit forward when its post-images are in place, as for a done frame a power loss dropped,
 *   or a later commit that changed one of its paths since started from them (told by that
 *   commit's record: `recovery.ts`). Where that record is gone (pruned), the later commit made
 *   again a path this one deleted, or a path was changed outside patchd, recovery rolls the
 *   commit back where its post-images still are, undoing part of a commit reported applied,
 *   which the recovery report tells;
 * - a cancelled frame: its commit was rolled back (or handed to `journal/`): recovery finds its
 *   pre-images in place;
 * - an intent: its commit is unknown. A done or cancelled frame of its id, found after, settles
 *   nothing (ids count per process: it can be no other intent's). A commit it logged that was in
 *   flight stays as the kill left it — half-applied, its temps and record with it — and nothing
 *   can roll it back: its journal was in that frame. The segment kept aside is the evidence.
 */
import { fstatSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setAsideAs } from './agedFiles.ts';
import { totalBytes, writeAllSync, type DiskCalls } from './diskCalls.ts';
import { isPresent, removeIfPresent, type DirectorySyncer } from './durable.ts';
import { hasErrorCode, ifPresent } from './ioErrors.ts';
import { isAbandonedOwner, PROCESS_NONCE, type JournalStore } from './journal.ts';
import { frameOf, framesOf, type ByteRange, type FrameHead } from './logFrames.ts';
import type { RecordStore } from './records.ts';

/** A segment is retired (and checkpointed once settled) after this many intents or bytes. */
const SEGMENT_MAX_INTENTS = 2048;
const SEGMENT_MAX_BYTES = 32 * 1024 * 1024;
const SEGMENT_NAME = /^(\d+)-([0-9a-f]+)-(\d+)\.log$/;
/** Ends the name of a segment kept aside as damaged (retention removes it once old: `retention.ts`). */
export const DAMAGED_SEGMENT_SUFFIX = '.damaged';

/**
 * Why frames are refused once the state dir is gone (removed by hand, or by a cleaner of temp
 * directories): frames written to a deleted segment would reach nothing a recovery reads. The
 * workspace then makes the state dir anew (`stateDirRemade.ts`). A segment removed alone is
 * only replaced: the next frame opens a new one.
 */
const STATE_DIR_REMOVED = "the workspace's state directory (its commit log and undo records) was removed while the workspace was open";
const segmentRemoved = (file: string): string => `the workspace's commit log segment ${file} was removed while the workspace was open; the next commit writes a new one`;

/** A dead process's segment found damaged by `recoverAbandoned`, recovered past the damage and kept aside. */
export interface DamagedSegment {
  /** Its name in `log/`. */
  readonly segment: string;
  /** The file it is kept as. */
  readonly keptAs: string;
  /** The bytes skipped: no frame could be read from them. */
  readonly damaged: readonly ByteRange[];
}

/** What the log says of a `DamagedSegment` (see the module comment). */
export const DAMAGED_LOG_SEGMENT = 'commit log segment damaged: what it logged in the damaged bytes was lost (a commit in flight there may stay half-applied); the rest was recovered, and the segment kept aside';

/** A logged transaction, as `done` and `cancelled` take it. */
export interface Intent {
  readonly id: number;
  readonly record: string;
  /**
   * Settles once the intent frame is written (not yet fsynced): from then on a killed process
   * leaves it for recovery, so the commit may put temps in the tree.
   */
  readonly written: Promise<void>;
  /** Settles once the intent frame is durable. */
  readonly durable: Promise<void>;
}

interface Segment {
  readonly file: string;
  /** Open from creation until the checkpoint (or `close`). */
  fd: number | undefined;
  /** Settles once the segment's directory entry is durable: no fdatasync of it counts before that too has settled. */
  readonly ready: Promise<void>;
  intents: number;
  bytes: number;
  /** Set after a failed write: later frames go to a new segment, so a frame the write cut short stays a torn tail. */
  broken: boolean;
  /** Intents written here whose done or cancelled frame is not durable yet. */
  readonly unsettled: Set<number>;
  /** Records of the intents here that are done: fsynced by the checkpoint before the segment goes. */
  readonly records: string[];
}

/** A frame on its way to disk: written by one writev, then made durable by an fdatasync that starts after it. */
class Pending {
  readonly kind: FrameHead['kind'];
  readonly frame: Uint8Array[];
  /** Set for an intent frame: added to its segment's unsettled intents once written. */
  readonly intentId: number | undefined;
  /** A done frame whose fdatasync failed is written once more, to a fresh segment. */
  retried = false;
  segment: Segment | undefined;
  readonly written: Promise<Segment>;
  readonly durable: Promise<Segment>;
  wrote!: (segment: Segment) => void;
  synced!: (segment: Segment) => void;
  #failWrite!: (error: unknown) => void;
  #failSync!: (error: unknown) => void;

  constructor(kind: FrameHead['kind'], frame: Uint8Array[], intentId?: number) {
    this.kind = kind;
    this.frame = frame;
    this.intentId = intentId;
    this.written = new Promise((resolve, reject) => ((this.wrote = resolve), (this.#failWrite = reject)));
    this.durable = new Promise((resolve, reject) => ((this.synced = resolve), (this.#failSync = reject)));
    // Callers await one or the other; a failure must not also surface as an unhandled rejection.
    this.written.catch(() => undefined);
    this.durable.catch(() => undefined);
  }

  failWrite(error: unknown): void {
    this.#failWrite(error);
    this.#failSync(error);
  }

  failSync(error: unknown): void {
    this.#failSync(error);
  }
}

/** Runs `work` on batches, one run at a time; each run takes every item added while the previous one ran. */
class BatchRunner<T> {
  readonly #work: (batch: T[]) => Promise<void>;
  #queue: T[] = [];
  /** The run under way, if any. */
  running: Promise<void> | undefined;

  constructor(work: (batch: T[]) => Promise<void>) {
    this.#work = work;
  }

  add(items: readonly T[]): void {
    this.#queue.push(...items);
    this.#kick();
  }

  #kick(): void {
    if (this.running !== undefined || this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    this.running = this.#work(batch).finally(() => {
      this.running = undefined;
      this.#kick();
    });
  }
}

let segmentSequence = 0;
let frameSequence = 0;
/**
 * Segment files an open `CommitLog` of this process writes or will checkpoint. Any other segment
 * of this process was left by a log closed since (a workspace closed with a commit unsettled,
 * say its record could not be written): the next open recovers it as a dead process's.
 */
const heldSegments = new Set<string>();

export class CommitLog {
  readonly directory: string;
  readonly #syncer: DirectorySyncer;
  readonly #disk: DiskCalls;
  readonly #records: RecordStore;
  #current: Segment | undefined;
  /** Full or broken segments still holding unsettled intents or awaiting their checkpoint. */
  readonly #retired = new Set<Segment>();
  readonly #segmentOf = new Map<number, Segment>();
  /** Frames written and not yet durable: the next fdatasync takes them all. */
  readonly #flusher = new BatchRunner<Pending>((batch) => this.#sync(batch));
  readonly #checkpoints = new Set<Promise<void>>();

  constructor(stateDir: string, syncer: DirectorySyncer, disk: DiskCalls, records: RecordStore) {
    this.directory = path.join(stateDir, 'log');
    this.#syncer = syncer;
    this.#disk = disk;
    this.#records = records;
  }

  async prepare(): Promise<void> {
    await mkdir(this.directory, { recursive: true, mode: 0o700 });
    await this.#syncer.pin(this.directory);
  }

  /**
   * Logs a transaction's journal (`chunks`), the name of its record and any redo section (the
   * post-images of a commit reported before its fsyncs); `durable` settles with the flush that
   * carries it.
   */
  intent(journalId: string, chunks: readonly Uint8Array[], record: string, redo?: readonly Uint8Array[]): Intent {
    frameSequence += 1;
    const id = frameSequence;
    const head: FrameHead = redo === undefined
      ? { kind: 'intent', id, journalId, record }
      : { kind: 'intent', id, journalId, record, redo: totalBytes(redo) };
    const pending = this.#append(head, redo === undefined ? chunks : [...chunks, ...redo]);
    const durable = pending.durable.then(() => undefined);
    // A failed write settles `written` too: `durable` carries the error.
    return { id, record, written: pending.written.then(() => undefined, () => undefined), durable };
  }

  /**
   * Marks the transaction committed; once this settles it may be reported applied. With
   * `written`, that is once the done frame is written, before its fdatasync (which follows at
   * once): enough for a one-file commit, see the module comment.
   */
  async done(intent: Intent, until: 'written' | 'durable'): Promise<void> {
    await intent.durable;
    const pending = this.#append({ kind: 'done', id: intent.id });
    const settled = pending.durable.then(() => this.#settle(intent, true));
    if (until === 'durable') return settled;
    // A failed fdatasync leaves the intent unsettled: its segment stays for recovery.
    settled.catch(() => undefined);
    await pending.written;
  }

  /** Marks the transaction rolled back (or handed to `journal/`): recovery leaves it alone. */
  async cancelled(intent: Intent): Promise<void> {
    await this.#append({ kind: 'cancelled', id: intent.id }).durable;
    this.#settle(intent, false);
  }

  /** Waits until every frame is written and durable, then checkpoints every settled segment and closes the log. Call once no commit is in flight. */
  async close(): Promise<void> {
    while (this.#flusher.running !== undefined) await this.#flusher.running.catch(() => undefined);
    if (this.#current !== undefined) this.#retire(this.#current);
    await Promise.allSettled([...this.#checkpoints]);
    for (const segment of this.#retired) {
      this.#closeSegment(segment);
      heldSegments.delete(segment.file);
    }
  }

  /**
   * Finishes the segments dead processes left (see the module comment), before journal recovery
   * runs on what this hands to `journal/`; returns those found damaged, now kept aside.
   */
  async recoverAbandoned(journals: JournalStore): Promise<DamagedSegment[]> {
    const segments = await this.#abandonedSegments();
    const kept: DamagedSegment[] = [];
    for (const [owner, names] of segments) {
      const read = await Promise.all(names.map(async (name) => ({ name, ...framesOf(await readFile(path.join(this.directory, name))) })));
      const frames = read.flatMap((segment) => segment.frames);
      const outcomes = outcomesOf(frames);
      for (const { head, body } of frames) {
        if (head.kind !== 'intent') continue;
        const outcome = outcomes.get(head.id);
        if (outcome === 'done') {
          await this.#records.restore(head.record, body.subarray(0, body.byteLength - (head.redo ?? 0)));
        } else if (outcome === undefined) {
          await this.#records.discard(head.record);
          // `orphan-`: journal recovery, which follows, takes it even when its owner is this process.
          await journals.keep(`orphan-${owner}-${head.id}-${head.record}.journal`, [body]);
        }
      }
      await this.#records.syncFiles([]);
      for (const { name, damaged } of read) {
        if (damaged.length === 0) await removeIfPresent(path.join(this.directory, name), this.#disk);
        else kept.push({ segment: name, keptAs: await this.#keepAside(name), damaged });
      }
      await this.#syncer.sync(this.directory);
    }
    return kept;
  }

  /** Whether a dead process left segments for `recoverAbandoned`. */
  async hasAbandoned(): Promise<boolean> {
    return (await this.#abandonedSegments()).size > 0;
  }

  async #abandonedSegments(): Promise<Map<string, string[]>> {
    return segmentsByOwner(await readdir(this.directory), (name, pid, nonce) => isAbandonedSegment(path.join(this.directory, name), pid, nonce));
  }

  /** Renames a damaged segment out of the reader's way, its age (for retention) counted from now. */
  async #keepAside(name: string): Promise<string> {
    return setAsideAs(path.join(this.directory, name), DAMAGED_SEGMENT_SUFFIX, this.#disk);
  }

  /**
   * The names of the records whose commits are in flight, in every process using this state
   * dir: each named by an intent of a segment in `log/` with neither a done nor a cancelled frame
   * (its commit is under way, or its process died before either, for the next open to recover).
   * Such a record may be unreadable because it is being written; any other was written whole
   * before its done frame (a record is written before done, and a segment goes only once every
   * intent in it is settled). Reads every segment: for the rare history query that meets a
   * record it cannot read, not for a commit.
   */
  async unsettledRecords(): Promise<Set<string>> {
    const names = (await ifPresent(readdir(this.directory))) ?? [];
    const unsettled = new Set<string>();
    for (const segments of segmentsByOwner(names).values()) {
      const frames: { head: FrameHead }[] = [];
      for (const name of segments) {
        // Gone since the listing: checkpointed, so every intent in it was settled.
        const bytes = await ifPresent(readFile(path.join(this.directory, name)));
        if (bytes !== undefined) frames.push(...framesOf(bytes).frames);
      }
      const outcomes = outcomesOf(frames);
      for (const { head } of frames) if (head.kind === 'intent' && !outcomes.has(head.id)) unsettled.add(head.record);
    }
    return unsettled;
  }

  #append(head: FrameHead, body?: readonly Uint8Array[]): Pending {
    const pending = new Pending(head.kind, frameOf(head, body), head.kind === 'intent' ? head.id : undefined);
    this.#write([pending]);
    return pending;
  }

  /**
   * Writes frames at once, synchronously (the page cache: microseconds, less than a thread-pool
   * round trip costs; see `diskCalls.ts`); fdatasyncs run one at a time (`BatchRunner`), and
   * frames written while one runs are made durable by the next. So a write never waits for an
   * fdatasync, and every fdatasync covers all frames written before it started — a frame is
   * durable only once every frame written before it is.
   */
  #write(batch: readonly Pending[]): void {
    if (batch.length === 0) return;
    let segment: Segment | undefined;
    try {
      segment = this.#writable();
      const chunks = batch.flatMap((pending) => pending.frame);
      writeAllSync(this.#disk, segment.fd!, chunks);
      segment.bytes += totalBytes(chunks);
      segment.intents += batch.length;
    } catch (error) {
      if (segment !== undefined) segment.broken = true;
      for (const pending of batch) pending.failWrite(error);
      return;
    }
    for (const pending of batch) {
      pending.segment = segment;
      if (pending.intentId !== undefined) {
        segment.unsettled.add(pending.intentId);
        this.#segmentOf.set(pending.intentId, segment);
      }
      pending.wrote(segment);
    }
    this.#flusher.add(batch);
  }

  /**
   * One fdatasync (per segment: a batch spans two when a segment filled up) for every frame
   * written before it started. Any failure fails the whole batch, and frames written to a
   * segment that failed before are not trusted to a later fdatasync of it (after an error the
   * kernel may have dropped them): so no frame is durable unless all frames before it are. A
   * done frame that fails is written once more to a fresh segment: its commit was reported.
   */
  async #sync(batch: readonly Pending[]): Promise<void> {
    const segments = [...new Set(batch.map((pending) => pending.segment!))];
    try {
      if (segments.some((segment) => segment.broken)) throw new Error('EIO: an earlier write or fdatasync of this log segment failed');
      // A new segment's directory entry and its frames are made durable side by side: a frame counts once both are.
      await Promise.all(segments.flatMap((segment) => [segment.ready, this.#disk.fdatasync(segment.fd!)]));
      const removed = segments.find((segment) => segment.fd !== undefined && fstatSync(segment.fd).nlink === 0);
      if (removed !== undefined) throw new Error(isPresent(this.directory) ? segmentRemoved(removed.file) : STATE_DIR_REMOVED);
    } catch (error) {
      for (const segment of segments) segment.broken = true;
      const retries: Pending[] = [];
      for (const pending of batch) {
        if (pending.kind === 'done' && !pending.retried) {
          pending.retried = true;
          retries.push(pending);
        } else {
          pending.failSync(error);
        }
      }
      this.#write(retries);
      return;
    }
    for (const pending of batch) pending.synced(pending.segment!);
  }

  /** The segment to append to: the current one, or a new one (its directory entry made durable before it counts) when that is full or broken. */
  #writable(): Segment {
    const current = this.#current;
    if (current !== undefined && !current.broken && current.intents < SEGMENT_MAX_INTENTS && current.bytes < SEGMENT_MAX_BYTES) return current;
    if (current !== undefined) this.#retire(current);
    segmentSequence += 1;
    const file = path.join(this.directory, `${process.pid}-${PROCESS_NONCE}-${segmentSequence}.log`);
    const fd = openSegment(file, this.#disk);
    heldSegments.add(file);
    const ready = this.#syncer.sync(this.directory);
    // Awaited by each fdatasync of the segment; a segment nobody syncs must not raise an unhandled rejection.
    ready.catch(() => undefined);
    const segment: Segment = { file, fd, ready, intents: 0, bytes: 0, broken: false, unsettled: new Set(), records: [] };
    this.#current = segment;
    return segment;
  }

  #closeSegment(segment: Segment): void {
    if (segment.fd === undefined) return;
    const fd = segment.fd;
    segment.fd = undefined;
    this.#disk.closeSync(fd);
  }

  #settle(intent: Intent, done: boolean): void {
    const segment = this.#segmentOf.get(intent.id);
    this.#segmentOf.delete(intent.id);
    if (segment === undefined) return;
    segment.unsettled.delete(intent.id);
    if (done) segment.records.push(intent.record);
    if (segment !== this.#current && segment.unsettled.size === 0) this.#checkpoint(segment);
  }

  #retire(segment: Segment): void {
    if (this.#current === segment) this.#current = undefined;
    this.#retired.add(segment);
    if (segment.unsettled.size === 0) this.#checkpoint(segment);
  }

  /**
   * Once every intent of a retired segment is settled: its records are made durable, then the
   * segment goes. On failure the segment stays, for recovery after this process ends.
   */
  #checkpoint(segment: Segment): void {
    const running: Promise<void> = (async () => {
      await this.#records.syncFiles(segment.records);
      this.#closeSegment(segment);
      await removeIfPresent(segment.file, this.#disk);
      heldSegments.delete(segment.file);
      this.#retired.delete(segment);
      await this.#syncer.sync(this.directory);
    })().catch(() => undefined).finally(() => this.#checkpoints.delete(running));
    this.#checkpoints.add(running);
  }
}

function openSegment(file: string, disk: DiskCalls): number {
  try {
    return disk.openSync(file, 'a', 0o600);
  } catch (error) {
    throw hasErrorCode(error, 'ENOENT') ? new Error(STATE_DIR_REMOVED, { cause: error }) : error;
  }
}

/**
 * The segment files among `names` (those `keep` takes, all by default), grouped by the process
 * that wrote them, each group in the order it was written: frame ids count per process, and a
 * done frame may sit in a later segment of its process than its intent.
 */
function segmentsByOwner(names: readonly string[], keep: (name: string, pid: number, nonce: string) => boolean = () => true): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const name of [...names].sort(bySequence)) {
    const match = SEGMENT_NAME.exec(name);
    if (match === null || !keep(name, Number(match[1]), match[2]!)) continue;
    const owner = `${match[1]}-${match[2]}`;
    owners.set(owner, [...(owners.get(owner) ?? []), name]);
  }
  return owners;
}

/** How each intent among one process's frames was settled; an intent missing from it is unsettled. */
function outcomesOf(frames: readonly { head: FrameHead }[]): Map<number, 'done' | 'cancelled'> {
  const outcomes = new Map<number, 'done' | 'cancelled'>();
  for (const { head } of frames) if (head.kind !== 'intent') outcomes.set(head.id, head.kind);
  return outcomes;
}

/** A dead process's segment, or one of this process's that no open log holds (see `heldSegments`). */
function isAbandonedSegment(file: string, pid: number, nonce: string): boolean {
  if (pid === process.pid && nonce === PROCESS_NONCE) return !heldSegments.has(file);
  return isAbandonedOwner(pid, nonce);
}

function bySequence(a: string, b: string): number {
  return Number(SEGMENT_NAME.exec(a)?.[3] ?? 0) - Number(SEGMENT_NAME.exec(b)?.[3] ?? 0);
}
