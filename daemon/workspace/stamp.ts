/**
 * A file's stamp: the metadata that changes whenever its content may have (inode, size,
 * mtime, ctime — ctime cannot be set by anyone). Equal stamps mean equal content, except in
 * the "racy" case git knows well: filesystem clocks tick coarsely (up to a jiffy, 10 ms), so
 * a write landing in the same tick as the write a stamp saw leaves the stamp unchanged. A
 * stamp taken at least `RACY_NS` after the file last changed cannot be fooled that way.
 */
import type { BigIntStats } from 'node:fs';

export interface FileStamp {
  readonly ino: bigint;
  readonly size: bigint;
  readonly mtimeNs: bigint;
  readonly ctimeNs: bigint;
  /** When the file was created (0 where the filesystem does not say): with `ino`, which file this is (see `fileIdentity` in arrivals.ts). */
  readonly birthtimeNs: bigint;
  /** Wall-clock time (ns) just before the stat was taken. */
  readonly takenAtNs: bigint;
}

/** Two filesystem ticks and then some. */
export const RACY_NS = 20_000_000n;

/** Wall-clock time in ns: the clock file timestamps are taken from. */
export function nowNs(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

export function stampOf(stats: BigIntStats, takenAtNs: bigint): FileStamp {
  return { ino: stats.ino, size: stats.size, mtimeNs: stats.mtimeNs, ctimeNs: stats.ctimeNs, birthtimeNs: stats.birthtimeNs, takenAtNs };
}

export function sameStamp(a: FileStamp, b: FileStamp): boolean {
  return a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ctimeNs === b.ctimeNs;
}

/** True when the file changed too shortly before the stamp was taken for the stamp to vouch for its content. */
export function isRacy(stamp: FileStamp): boolean {
  return stamp.takenAtNs - stamp.ctimeNs < RACY_NS;
}
