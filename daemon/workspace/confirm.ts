/**
 * The last look before a rename: does the target still hold exactly what the commit verified?
 * Synchronous on purpose — the check and the rename that follows it run in one turn of the
 * event loop, so an outside write can slip between them only within microseconds, instead of
 * the milliseconds that staging and fsyncing take after the commit's verification read.
 *
 * Files up to `CONTENT_CHECK_MAX_BYTES` are compared byte for byte; larger ones by stamp.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { bytesEqual, type DiskEntry } from './files.ts';
import { hasErrorCode } from './ioErrors.ts';
import { sameStamp, stampOf } from './stamp.ts';

const CONTENT_CHECK_MAX_BYTES = 1024 * 1024;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

type VerifiedFile = Extract<DiskEntry, { kind: 'file' }>;

/** True when `absolute` is still `expected` (a file with those bytes), or still free when `expected` is null. */
export function stillHolds(absolute: string, expected: VerifiedFile | null): boolean {
  let fd: number;
  try {
    fd = openSync(absolute, READ_FLAGS);
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT', 'ENOTDIR')) return expected === null;
    // ELOOP: a symlink now stands there; anything else we cannot vouch for either.
    return false;
  }
  try {
    return expected !== null && holds(fd, expected);
  } finally {
    closeSync(fd);
  }
}

function holds(fd: number, expected: VerifiedFile): boolean {
  const stats = fstatSync(fd, { bigint: true });
  if (!stats.isFile() || stats.size !== BigInt(expected.bytes.byteLength)) return false;
  if (expected.bytes.byteLength > CONTENT_CHECK_MAX_BYTES) return sameStamp(stampOf(stats, 0n), expected.stamp);
  const buffer = Buffer.allocUnsafe(expected.bytes.byteLength + 1);
  const read = readSync(fd, buffer, 0, buffer.byteLength, 0);
  return read === expected.bytes.byteLength && bytesEqual(buffer.subarray(0, read), expected.bytes);
}
