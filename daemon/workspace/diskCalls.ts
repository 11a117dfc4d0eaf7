/**
 * The system calls that make a commit durable, behind one seam: staging temps, their fsyncs,
 * the renames onto targets, journal and record writes and directory fsyncs all go through a
 * `DiskCalls`. The workspace uses `nodeDiskCalls`; tests pass one that records the calls (to
 * check that a staged file is fsynced before it is renamed into place) or that dies at a chosen
 * call (to crash a commit or a recovery at a precise instant).
 *
 * Small files are created, written and closed synchronously (`openSync`, `writevSync`,
 * `closeSync`): those calls touch only the page cache and take microseconds, while each
 * thread-pool round trip costs the main thread more than that on a busy machine. Only the
 * fsync, which waits for the disk, goes to the thread pool (`fsync`), and the bytes of a large
 * file (`writev`). Undo records, outside the tree, are written the same way (see `records.ts`).
 */
import { closeSync, fdatasync as fdatasyncCallback, fsync as fsyncCallback, openSync, renameSync, unlinkSync, writev as writevCallback, writevSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { promisify } from 'node:util';

/**
 * Files up to this size are read, written and closed synchronously on the main thread (page
 * cache, microseconds); larger ones go through the thread pool, not to stall every other patch.
 */
export const SYNC_IO_MAX_BYTES = 256 * 1024;

export interface DiskCalls {
  /** `fs.promises.open`; every fsync of a file opened this way goes through the handle it returns. */
  open(path: string, flags: string, mode?: number): Promise<FileHandle>;
  /** `fs.openSync`: a descriptor for `writevSync`, `fsync` and `closeSync`. */
  openSync(path: string, flags: string, mode?: number): number;
  /** One `writev` at the file's current position; returns the bytes written (possibly fewer than given). */
  writevSync(fd: number, chunks: readonly Uint8Array[]): number;
  /** One `writev` at the file's current position, on the thread pool; returns the bytes written (possibly fewer than given). */
  writev(fd: number, chunks: readonly Uint8Array[]): Promise<number>;
  /** fsync of a descriptor from `openSync`, on the thread pool. */
  fsync(fd: number): Promise<void>;
  /** fdatasync of a descriptor from `openSync`, on the thread pool. */
  fdatasync(fd: number): Promise<void>;
  closeSync(fd: number): void;
  rename(from: string, to: string): Promise<void>;
  /** Synchronous, so a commit can rename right after its last look at the target (see `confirm.ts`). */
  renameSync(from: string, to: string): void;
  unlink(path: string): Promise<void>;
  /** Synchronous, so a rollback, or a delete with the trash on another filesystem, can unlink right after a last look at the file (see `confirm.ts`). */
  unlinkSync(path: string): void;
}

export const nodeDiskCalls: DiskCalls = {
  open,
  openSync,
  writevSync: (fd, chunks) => writevSync(fd, chunks as Uint8Array[]),
  writev: (fd, chunks) => new Promise((resolve, reject) => writevCallback(fd, chunks as Uint8Array[], (error, written) => (error === null ? resolve(written) : reject(error)))),
  fsync: promisify(fsyncCallback),
  fdatasync: promisify(fdatasyncCallback),
  closeSync,
  rename,
  renameSync,
  unlink,
  unlinkSync,
};

/** Writes every byte of `chunks` at the descriptor's position on the thread pool, finishing a short `writev` with further calls. */
export async function writeAll(disk: DiskCalls, fd: number, chunks: readonly Uint8Array[]): Promise<void> {
  for (let rest = nonEmpty(chunks); rest.length > 0; ) rest = remainder(rest, await disk.writev(fd, rest));
}

/** Writes every byte of `chunks` at the descriptor's position, finishing a short `writev` with further calls. */
export function writeAllSync(disk: DiskCalls, fd: number, chunks: readonly Uint8Array[]): void {
  for (let rest = nonEmpty(chunks); rest.length > 0; ) rest = remainder(rest, disk.writevSync(fd, rest));
}

export function totalBytes(chunks: readonly Uint8Array[]): number {
  return chunks.reduce((total, chunk) => total + chunk.byteLength, 0);
}

function nonEmpty(chunks: readonly Uint8Array[]): Uint8Array[] {
  return chunks.filter((chunk) => chunk.byteLength > 0);
}

/** What is left of `chunks` once a writev wrote `written` bytes of them. */
function remainder(chunks: Uint8Array[], written: number): Uint8Array[] {
  // A regular file takes at least one byte or fails; zero would otherwise loop for ever.
  if (written === 0) throw Object.assign(new Error('EIO: write wrote nothing'), { code: 'EIO' });
  let index = 0;
  while (index < chunks.length && written >= chunks[index]!.byteLength) written -= chunks[index++]!.byteLength;
  const rest = chunks.slice(index);
  if (rest.length > 0 && written > 0) rest[0] = rest[0]!.subarray(written);
  return rest;
}
