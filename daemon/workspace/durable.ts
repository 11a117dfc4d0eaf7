/** Durable writes: exclusive temp files fsynced before use, and coalesced directory fsyncs. */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, fchmodSync, fchownSync, fstatSync, lstatSync, mkdirSync, openSync, rmdirSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { nodeDiskCalls, SYNC_IO_MAX_BYTES, writeAll, writeAllSync, type DiskCalls } from './diskCalls.ts';
import type { FileOwner } from './files.ts';
import { hasErrorCode } from './ioErrors.ts';

const TEMP_SUFFIX = '.patchd.tmp';
/** Room for the dot, random part and suffix within the usual 255-byte name limit. */
const MAX_NAME_IN_TEMP = 200;

/** Random per process; with a counter, names temps no other process (nor a crashed one) used: fetching random bytes per temp costs microseconds. */
const TEMP_NONCE = randomBytes(6).toString('hex');
let tempSequence = 0;

/** `.<name>.<nonce><n>.patchd.tmp`, beside `absolute` so the final rename stays on one filesystem. */
export function tempPathFor(absolute: string): string {
  tempSequence += 1;
  return tempBeside(absolute, `${TEMP_NONCE}${tempSequence.toString(36)}`);
}

/**
 * The temp a recovery restores `absolute` through, named after the transaction so that a
 * recovery killed mid-restore leaves a name the next recovery of the same journal removes.
 */
export function restoreTempPathFor(absolute: string, transactionId: string): string {
  return tempBeside(absolute, `${createHash('sha256').update(transactionId).digest('hex').slice(0, 12)}-restore`);
}

function tempBeside(absolute: string, tag: string): string {
  const name = path.basename(absolute).slice(0, MAX_NAME_IN_TEMP);
  return path.join(path.dirname(absolute), `.${name}.${tag}${TEMP_SUFFIX}`);
}

/** Whether a bare file name is one `tempPathFor` could have produced (checked before recovery unlinks it). */
export function isTempName(name: string): boolean {
  return name.startsWith('.') && name.endsWith(TEMP_SUFFIX) && !name.includes('/');
}

const processUid = process.getuid?.();
const processGid = process.getgid?.();
// Read once: the only way to learn the umask is to (re)set it, which must not race with other writes.
const umask = process.umask();

/**
 * Creates `file` (which must not exist), writes `bytes`, gives it `owner`'s mode (and, when we
 * run as root, its uid/gid) and fsyncs. A new file without `owner` gets 0o644 less the umask.
 * The chmod/chown happen only when they change something.
 */
export async function writeDurably(file: string, bytes: Uint8Array, owner?: FileOwner, disk: DiskCalls = nodeDiskCalls): Promise<void> {
  const fd = await writeUnsynced(file, bytes, owner, disk);
  try {
    await disk.fsync(fd);
  } finally {
    disk.closeSync(fd);
  }
}

/** `writeDurably` without the fsync: returns the open descriptor, for the caller to fsync and close. */
export async function writeUnsynced(file: string, bytes: Uint8Array, owner?: FileOwner, disk: DiskCalls = nodeDiskCalls): Promise<number> {
  // Created synchronously, even for a large file: a create holds its directory's lock while it
  // runs, which on a busy filesystem can take a millisecond (on the bench machine, ext4 without a
  // journal, the inode allocator steps over every inode freed in the last seconds, and each
  // commit frees one), and a commit's rename into that directory, made on the main thread right
  // after its last look (`confirm.ts`), would queue behind a create running on the thread pool,
  // widening that gap from microseconds to milliseconds. Tried: externalWriter.test.ts then lost
  // an outside write in 5 of 88 runs under load.
  const fd = disk.openSync(file, 'wx', owner?.mode ?? 0o644);
  try {
    // A small file's bytes are written synchronously (page cache, microseconds); a large one's on the thread pool.
    if (bytes.byteLength <= SYNC_IO_MAX_BYTES) writeAllSync(disk, fd, [bytes]);
    else await writeAll(disk, fd, [bytes]);
    if (owner !== undefined) applyOwner(fd, owner);
    return fd;
  } catch (error) {
    disk.closeSync(fd);
    throw error;
  }
}

function ownerChanges(owner: FileOwner): { chown: boolean; chmod: boolean } {
  const chown = processUid === 0 && (owner.uid !== processUid || owner.gid !== processGid);
  // After chown, which clears setuid/setgid bits; and whenever the umask stripped bits from the open mode.
  return { chown, chmod: chown || (owner.mode & umask) !== 0 || owner.mode > 0o777 };
}

function applyOwner(fd: number, owner: FileOwner): void {
  const { chown, chmod } = ownerChanges(owner);
  if (chown) fchownSync(fd, owner.uid, owner.gid);
  if (chmod) fchmodSync(fd, owner.mode);
}

/**
 * Makes the directory `absolute` (its parent must be there; EEXIST when something is), synchronously
 * like every create in the tree (see `writeDurably`). With `owner`, it takes that mode and (when we
 * run as root) uid/gid: the mode a directory had, made again. Set on the directory itself, by
 * descriptor, since mkdir takes the umask off and a setgid parent passes its bit on.
 */
export function makeDirectory(absolute: string, owner?: FileOwner): void {
  mkdirSync(absolute, owner === undefined ? 0o777 : owner.mode & 0o777);
  if (owner === undefined) return;
  try {
    applyDirectoryOwner(absolute, owner);
  } catch (error) {
    // Just made, so empty: not left behind with the wrong mode.
    rmdirSync(absolute);
    throw error;
  }
}

function applyDirectoryOwner(absolute: string, owner: FileOwner): void {
  const fd = openSync(absolute, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const stats = fstatSync(fd);
    const chown = processUid === 0 && (stats.uid !== owner.uid || stats.gid !== owner.gid);
    if (chown) fchownSync(fd, owner.uid, owner.gid);
    // After chown, which may clear setgid.
    if (chown || (stats.mode & 0o7777) !== owner.mode) fchmodSync(fd, owner.mode);
  } finally {
    closeSync(fd);
  }
}

export async function removeIfPresent(file: string, disk: DiskCalls = nodeDiskCalls): Promise<void> {
  try {
    await disk.unlink(file);
  } catch (error) {
    if (!hasErrorCode(error, 'ENOENT', 'ENOTDIR')) throw error;
  }
}

/**
 * `removeIfPresent` for a path in the tree: synchronous, like every create and removal there (see
 * `writeDurably`). A read-only filesystem refuses the unlink of a file that is not there either
 * (EROFS before the lookup): that is no failure.
 */
export function removeFromTreeIfPresent(file: string, disk: DiskCalls): void {
  try {
    disk.unlinkSync(file);
  } catch (error) {
    if (!hasErrorCode(error, 'ENOENT', 'ENOTDIR') && isPresent(file)) throw error;
  }
}

/** Whether anything is at `path`; true when that cannot be told (a failure to remove it then stands). */
export function isPresent(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    return !hasErrorCode(error, 'ENOENT', 'ENOTDIR');
  }
}

/** Some filesystems cannot fsync a directory; their renames are as durable as they get. */
function cannotSyncDirectory(error: unknown): boolean {
  return hasErrorCode(error, 'EINVAL', 'ENOTSUP');
}

async function fsyncHandle(handle: FileHandle): Promise<void> {
  try {
    await handle.sync();
  } catch (error) {
    if (!cannotSyncDirectory(error)) throw error;
  }
}

/** Opened and closed synchronously (a lookup in the dentry cache): only the fsync is a thread-pool round trip. */
async function fsyncDirectory(directory: string, disk: DiskCalls): Promise<void> {
  const fd = disk.openSync(directory, 'r');
  try {
    await disk.fsync(fd);
  } catch (error) {
    if (!cannotSyncDirectory(error)) throw error;
  } finally {
    disk.closeSync(fd);
  }
}

interface SyncSlot {
  running: Promise<void>;
  queued: Promise<void> | undefined;
}

/**
 * Group commit for directory fsyncs: a caller arriving while a directory's fsync runs shares
 * the next one (which starts after its change, so it covers it) instead of queueing its own.
 * Under many concurrent small commits to one directory this turns N fsyncs into about two.
 */
export class DirectorySyncer {
  readonly #slots = new Map<string, SyncSlot>();
  /** Directories we own (the journal dir) stay open: one round trip per fsync instead of three. */
  readonly #pinned = new Map<string, FileHandle>();
  readonly #disk: DiskCalls;

  constructor(disk: DiskCalls = nodeDiskCalls) {
    this.#disk = disk;
  }

  /** Keeps `directory` open for its fsyncs; pinned again, it is opened anew (it may have been removed and made again since). */
  async pin(directory: string): Promise<void> {
    const handle = await this.#disk.open(directory, 'r');
    const earlier = this.#pinned.get(directory);
    this.#pinned.set(directory, handle);
    await earlier?.close().catch(() => undefined);
  }

  sync(directory: string): Promise<void> {
    const slot = this.#slots.get(directory);
    if (slot === undefined) return this.#begin(directory);
    slot.queued ??= slot.running.catch(() => undefined).then(() => this.#begin(directory));
    return slot.queued;
  }

  /** Closes pinned directories; call once no sync is pending. */
  async close(): Promise<void> {
    const handles = [...this.#pinned.values()];
    this.#pinned.clear();
    await Promise.all(handles.map((handle) => handle.close()));
  }

  #begin(directory: string): Promise<void> {
    const pinned = this.#pinned.get(directory);
    const running: Promise<void> = (pinned === undefined ? fsyncDirectory(directory, this.#disk) : fsyncHandle(pinned)).finally(() => {
      const current = this.#slots.get(directory);
      if (current?.running === running && current.queued === undefined) this.#slots.delete(directory);
    });
    const slot = this.#slots.get(directory);
    if (slot === undefined) {
      this.#slots.set(directory, { running, queued: undefined });
    } else {
      slot.running = running;
      slot.queued = undefined;
    }
    return running;
  }
}
