/** Reading what is on disk at a guarded path, hashing, and the `version` strings of `file/read`. */
import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, type BigIntStats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { engineError } from '../engine/errors.ts';
import { LIMITS } from '../engine/limits.ts';
import { fail, ok, type FileSnapshot, type Result } from '../engine/types.ts';
import { SYNC_IO_MAX_BYTES } from './diskCalls.ts';
import type { GuardedPath, PathGuard } from './guard.ts';
import { errorFromFs, hasErrorCode } from './ioErrors.ts';
import { mapLimited } from './limited.ts';
import { nowNs, stampOf, type FileStamp } from './stamp.ts';

/** Permission bits and owner of a file, kept when its content is replaced. */
export interface FileOwner {
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
}

/** A snapshot plus what a rewrite must keep, and the stamp of the bytes read. */
export type DiskEntry =
  | { readonly kind: 'file'; readonly bytes: Uint8Array; readonly owner: FileOwner; readonly stamp: FileStamp }
  | { readonly kind: 'missing' }
  | { readonly kind: 'directory' };

const knownHashes = new WeakMap<Uint8Array, string>();

/** Lowercase hex sha256; remembered per byte array, since one snapshot is hashed for preconditions, receipts and the cache. */
export function sha256Hex(bytes: Uint8Array): string {
  let hash = knownHashes.get(bytes);
  if (hash === undefined) knownHashes.set(bytes, (hash = createHash('sha256').update(bytes).digest('hex')));
  return hash;
}

/**
 * A file's `version` as `file/read` returns it: `sha256:` and the first 16 hex digits of its
 * content's sha256. Derived from content only, so equal bytes give equal versions on any daemon.
 */
export function versionFromSha256(sha256: string): string {
  return `sha256:${sha256.slice(0, 16)}`;
}

// O_NOFOLLOW closes the gap between the guard's lstat and the open; O_NONBLOCK keeps a FIFO from hanging us.
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Reads a path the guard has passed: file bytes with owner, missing, or directory. */
export async function readDiskEntry(absolute: string, path: string): Promise<Result<DiskEntry>> {
  const small = readSmallEntrySync(absolute, path);
  if (small !== undefined) return small;
  let handle: FileHandle;
  try {
    handle = await open(absolute, READ_FLAGS);
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT', 'ENOTDIR')) return ok({ kind: 'missing' });
    return fail(errorFromFs(error, path, 'open'));
  }
  try {
    return await readOpenFile(handle, path);
  } catch (error) {
    return fail(errorFromFs(error, path, 'read'));
  } finally {
    await handle.close();
  }
}

/** `readDiskEntry` in one synchronous turn; undefined when the file is over `SYNC_IO_MAX_BYTES` (or grew past it while read). */
function readSmallEntrySync(absolute: string, path: string): Result<DiskEntry> | undefined {
  let fd: number;
  try {
    fd = openSync(absolute, READ_FLAGS);
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT', 'ENOTDIR')) return ok({ kind: 'missing' });
    return fail(errorFromFs(error, path, 'open'));
  }
  try {
    // Stamped before reading, as `readOpenFile` is.
    const takenAtNs = nowNs();
    const stats = fstatSync(fd, { bigint: true });
    const kind = entryKind(stats, path);
    if (kind !== undefined) return kind;
    const size = Number(stats.size);
    if (size > SYNC_IO_MAX_BYTES) return undefined;
    const buffer = Buffer.allocUnsafeSlow(size + 1); // not pooled, as in `readAll`
    const bytesRead = readSync(fd, buffer, 0, size + 1, 0);
    if (bytesRead !== size) return undefined;
    return ok({ kind: 'file', bytes: buffer.subarray(0, size), owner: ownerOf(stats), stamp: stampOf(stats, takenAtNs) });
  } catch (error) {
    return fail(errorFromFs(error, path, 'read'));
  } finally {
    closeSync(fd);
  }
}

/** A directory, or the refusal of anything but a regular file; undefined for a regular file. */
function entryKind(stats: BigIntStats, path: string): Result<DiskEntry> | undefined {
  if (stats.isDirectory()) return ok({ kind: 'directory' });
  if (!stats.isFile()) return fail(engineError('permission_denied', `${path} is not a regular file.`, { path }));
  return undefined;
}

async function readOpenFile(handle: FileHandle, path: string): Promise<Result<DiskEntry>> {
  // Stamped before reading: a write after the stat changes the stamp, so the cache can never pair old metadata with new bytes unnoticed.
  const takenAtNs = nowNs();
  const stats = await handle.stat({ bigint: true });
  const kind = entryKind(stats, path);
  if (kind !== undefined) return kind;
  const size = Number(stats.size);
  const tooLarge = checkSize(size, path);
  if (tooLarge !== undefined) return tooLarge;
  const bytes = await readAll(handle, size);
  // The file may have grown between stat and read.
  return checkSize(bytes.length, path) ?? ok({ kind: 'file', bytes, owner: ownerOf(stats), stamp: stampOf(stats, takenAtNs) });
}

export function ownerOf(stats: { readonly mode: bigint; readonly uid: bigint; readonly gid: bigint }): FileOwner {
  return { mode: Number(stats.mode & 0o7777n), uid: Number(stats.uid), gid: Number(stats.gid) };
}

/** One read for the usual case (size as stat said); a file that changed size meanwhile is read to its end. */
async function readAll(handle: FileHandle, size: number): Promise<Uint8Array> {
  const buffer = Buffer.allocUnsafeSlow(size + 1); // not pooled: a snapshot must not share (or clone) the 8 KiB pool
  const { bytesRead } = await handle.read(buffer, 0, size + 1, 0);
  if (bytesRead === size) return buffer.subarray(0, size);
  return handle.readFile();
}

function checkSize(size: number, path: string): Result<never> | undefined {
  if (size <= LIMITS.maxFileBytes) return undefined;
  const limit = { name: 'maxFileBytes', max: LIMITS.maxFileBytes, actual: size };
  return fail(engineError('limit_exceeded', `${path} is ${size} bytes; at most ${LIMITS.maxFileBytes} are accepted.`, { path, limit }));
}

export type GuardedEntries = Map<string, { readonly absolute: string; readonly entry: DiskEntry }>;

/** Guards every path first (nothing is read if one is refused), then reads them all from disk; keyed by normalised path. */
export async function readGuardedEntries(guard: PathGuard, paths: readonly string[]): Promise<Result<GuardedEntries>> {
  return readGuardedWith(guard, paths, (target) => readDiskEntry(target.absolute, target.path));
}

/** Like `readGuardedEntries`, with `read` deciding how each guarded path is read (e.g. through a cache). */
export async function readGuardedWith(
  guard: PathGuard, paths: readonly string[], read: (target: GuardedPath) => Promise<Result<DiskEntry>>,
): Promise<Result<GuardedEntries>> {
  const targets: GuardedPath[] = [];
  for (const guarded of paths.map((path) => guard.check(path))) {
    if (!guarded.ok) return guarded;
    targets.push(guarded.value);
  }
  const reads = await mapLimited(targets, async (target) => ({ target, entry: await read(target) }));
  const entries: GuardedEntries = new Map();
  for (const { target, entry } of reads) {
    if (!entry.ok) return entry;
    entries.set(target.path, { absolute: target.absolute, entry: entry.value });
  }
  return ok(entries);
}

/** The engine's view of an entry: bytes only. */
export function toSnapshot(entry: DiskEntry): FileSnapshot {
  return entry.kind === 'file' ? { kind: 'file', bytes: entry.bytes } : entry;
}

/** True when the entry is exactly `expected`: same kind and, for files, the same bytes. */
export function entryEquals(entry: DiskEntry, expected: FileSnapshot): boolean {
  if (entry.kind !== expected.kind) return false;
  if (entry.kind !== 'file' || expected.kind !== 'file') return true;
  return bytesEqual(entry.bytes, expected.bytes);
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decodes a text file for `file/read`, by the engine's rule (NUL or invalid UTF-8 is binary).
 * A BOM is kept in the string, so the content re-encodes to exactly the hashed bytes.
 */
export function decodeUtf8Text(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined;
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}
