/**
 * The last look before a rename: does the target still hold exactly what the commit verified?
 * Synchronous on purpose — the check and the rename right after it run back to back, so an
 * outside write can slip between them only within microseconds, instead of the milliseconds
 * that staging and fsyncing take after the commit's verification read.
 *
 * What remains is the gap between two system calls: an outside rename landing exactly there is
 * replaced unseen. Closing it takes an atomic compare-and-swap of directory entries
 * (`renameat2(RENAME_EXCHANGE)`), which Node does not offer.
 *
 * Files up to `CONTENT_CHECK_MAX_BYTES` are compared byte for byte; larger ones by stamp.
 */
import { close, closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { SYNC_IO_MAX_BYTES } from './diskCalls.ts';
import { bytesEqual, type DiskEntry } from './files.ts';
import { hasErrorCode, isShortage } from './ioErrors.ts';
import { sameStamp, stampOf } from './stamp.ts';

const CONTENT_CHECK_MAX_BYTES = 1024 * 1024;
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

type VerifiedFile = Extract<DiskEntry, { kind: 'file' }>;

/**
 * Runs `replace` (synchronous) if `absolute` still is `expected` (a file with those bytes), or
 * still free when `expected` is null; false, and nothing run, otherwise. Throws, nothing run,
 * when the look itself fails for a reason that is not the file's (out of descriptors, EIO).
 * The file is closed only after `replace`, keeping even that call out of the gap. Closing the
 * last reference to a replaced file frees it: tens of microseconds for a small file, less than
 * a thread-pool round trip costs the main thread, so it is closed synchronously; a large one
 * asynchronously.
 */
export function replaceIfUnchanged(absolute: string, expected: VerifiedFile | null, replace: () => void): boolean {
  let fd: number;
  try {
    fd = openSync(absolute, READ_FLAGS);
  } catch (error) {
    // Out of descriptors, say: that tells nothing of the file, so it is thrown, not taken for a change.
    if (isShortage(error) || hasErrorCode(error, 'EIO')) throw error;
    // ELOOP: a symlink now stands there; anything else we cannot vouch for either.
    if (!hasErrorCode(error, 'ENOENT', 'ENOTDIR') || expected !== null) return false;
    replace();
    return true;
  }
  try {
    if (expected === null || !holds(fd, expected)) return false;
    replace();
    return true;
  } finally {
    if (expected !== null && expected.bytes.byteLength <= SYNC_IO_MAX_BYTES) closeSync(fd);
    else close(fd, () => {});
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
