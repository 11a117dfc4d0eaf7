/**
 * The body git writes for a file it takes as binary (`git diff --binary`): a full `index` line
 * and a `GIT binary patch` of two literal hunks — the new content, then the old (so the patch
 * reverses) — each zlib-deflated and written in git's base85, 52 bytes a line behind a length
 * letter. `git apply` checks the file against the old blob id, inflates the new content and
 * checks it against the new id: the bytes come out exactly, or the patch is refused.
 */
import { constants, deflateSync } from 'node:zlib';
import { blobIdOf } from './blobs.ts';

/** git's base85 alphabet (`base85.c`). */
const EN85 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~';
const BYTES_PER_LINE = 52;
/** A missing side's blob id. */
const NULL_ID = '0'.repeat(40);

/**
 * `index <old>..<new>[ <mode>]` then the binary patch, for a file whose content goes from
 * `before` to `after` (null: the side is missing). `mode` is the file's git mode when both sides
 * have the same one (git writes it on the index line then), undefined otherwise.
 */
export function gitBinaryBody(before: Uint8Array | null, after: Uint8Array | null, mode: string | undefined): string {
  // SHA-1 ids: what `git apply` checks outside a SHA-256 repository.
  const ids = `${before === null ? NULL_ID : blobIdOf(before, 'sha1')}..${after === null ? NULL_ID : blobIdOf(after, 'sha1')}`;
  const empty = new Uint8Array(0);
  return `index ${ids}${mode === undefined ? '' : ` ${mode}`}\nGIT binary patch\n${literal(after ?? empty)}${literal(before ?? empty)}`;
}

/** One literal hunk: its inflated size, the deflated bytes in base85 lines, an empty line. Deflated as git does (`core.compression` unset: fastest). */
function literal(bytes: Uint8Array): string {
  const deflated = deflateSync(bytes, { level: constants.Z_BEST_SPEED });
  const lines: string[] = [];
  for (let start = 0; start < deflated.byteLength; start += BYTES_PER_LINE) {
    const chunk = deflated.subarray(start, start + BYTES_PER_LINE);
    lines.push(lengthLetter(chunk.byteLength) + encode85(chunk));
  }
  return `literal ${bytes.byteLength}\n${lines.map((line) => `${line}\n`).join('')}\n`;
}

/** 1–26 bytes: `A`–`Z`; 27–52: `a`–`z`. */
function lengthLetter(length: number): string {
  return String.fromCharCode(length <= 26 ? 64 + length : 96 + length - 26);
}

/** Each group of 4 bytes (big-endian, the last one padded with zeros) as 5 characters, most significant first. */
function encode85(bytes: Uint8Array): string {
  let text = '';
  for (let start = 0; start < bytes.byteLength; start += 4) {
    let value = 0;
    for (let index = 0; index < 4; index += 1) value = value * 256 + (bytes[start + index] ?? 0);
    const group: string[] = [];
    for (let digit = 0; digit < 5; digit += 1) {
      group.unshift(EN85[value % 85]!);
      value = Math.floor(value / 85);
    }
    text += group.join('');
  }
  return text;
}
