/**
 * The frames of a commit log segment (`commitLog.ts`): u32 LE payload length, u32 LE crc32 of the
 * payload, then the payload — one JSON line (`FrameHead`), then for an intent its journal bytes
 * (`journal.ts`) and any redo section.
 *
 * A segment is only appended to, one writev per batch of frames, so a kill or a power loss can
 * only leave its end short (or, past its last fdatasync, holding bytes never written): a frame
 * that fails its length, crc or head with no whole frame after it is a torn tail, and the segment
 * is read up to it. A frame that fails with a whole frame after it was damaged where it lies (a
 * disk fault, a flipped byte; or a power loss that kept a later block of unsynced frames and not
 * an earlier one): the reader goes on from the next whole frame and reports the bytes it skipped.
 * That is where the damaged frame's length leads, when a whole frame starts there (damage in the
 * payload, most of a frame, leaves the length intact); else the first offset after it where a
 * whole frame validates: its length fits in what is left, its payload starts with `{"kind":`
 * (every head's first key; both checked before any crc is computed), its crc matches and its
 * first line is a head the log writes. That search may take a frame held in the damaged frame's
 * body (a patched file holding log bytes) for one — only when the damage hit that frame's length,
 * where the bytes cannot tell.
 */
import { crc32 } from 'node:zlib';

export type FrameHead =
  /** `redo`: the length of the redo section (`journal.ts`) that ends the body, when there is one. */
  | { readonly kind: 'intent'; readonly id: number; readonly journalId: string; readonly record: string; readonly redo?: number }
  | { readonly kind: 'done' | 'cancelled'; readonly id: number };

export interface Frame {
  readonly head: FrameHead;
  readonly body: Uint8Array;
}

/** Bytes `start` to `end` (exclusive) of a segment. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export interface SegmentFrames {
  /** Every whole frame, in order, those after damage included. */
  readonly frames: Frame[];
  /** Where damaged bytes were skipped to reach a whole frame after them; a torn tail is not damage. */
  readonly damaged: ByteRange[];
}

const PREFIX_BYTES = 8;
/** How every payload starts: `JSON.stringify` keeps a head's `kind` first. */
const HEAD_START = Buffer.from('{"kind":');

/** A frame's bytes: prefix, head line, body chunks (written with one writev, not copied). */
export function frameOf(head: FrameHead, body: readonly Uint8Array[] = []): Uint8Array[] {
  const line = Buffer.from(`${JSON.stringify(head)}\n`);
  const length = body.reduce((total, chunk) => total + chunk.byteLength, line.byteLength);
  let checksum = crc32(line);
  for (const chunk of body) checksum = crc32(chunk, checksum);
  const prefix = Buffer.alloc(PREFIX_BYTES);
  prefix.writeUInt32LE(length, 0);
  prefix.writeUInt32LE(checksum, 4);
  return [prefix, line, ...body];
}

/** The whole frames of a segment, read on past damage, up to a torn tail (see the module comment). */
export function framesOf(bytes: Uint8Array): SegmentFrames {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const frames: Frame[] = [];
  const damaged: ByteRange[] = [];
  for (let offset = 0; offset < buffer.byteLength; ) {
    const frame = frameAt(buffer, offset);
    if (frame !== undefined) {
      frames.push(frame);
      offset = frameEnd(buffer, offset);
      continue;
    }
    const next = nextFrameAfter(buffer, offset);
    if (next === undefined) break;
    damaged.push({ start: offset, end: next });
    offset = next;
  }
  return { frames, damaged };
}

function frameEnd(buffer: Buffer, offset: number): number {
  return offset + PREFIX_BYTES + buffer.readUInt32LE(offset);
}

/** The frame at `offset`, if a whole one starts there; the cheap checks first (see the module comment). */
function frameAt(buffer: Buffer, offset: number): Frame | undefined {
  if (offset + PREFIX_BYTES > buffer.byteLength) return undefined;
  const end = frameEnd(buffer, offset);
  if (end > buffer.byteLength) return undefined;
  const payload = buffer.subarray(offset + PREFIX_BYTES, end);
  if (!payload.subarray(0, HEAD_START.byteLength).equals(HEAD_START) || crc32(payload) !== buffer.readUInt32LE(offset + 4)) return undefined;
  const newline = payload.indexOf(0x0a);
  const head = newline < 0 ? undefined : parseHead(payload.subarray(0, newline), payload.byteLength - newline - 1);
  return head === undefined ? undefined : { head, body: payload.subarray(newline + 1) };
}

/** Where reading goes on after the damaged frame at `offset`; undefined when nothing whole follows (a torn tail). */
function nextFrameAfter(buffer: Buffer, offset: number): number | undefined {
  if (offset + PREFIX_BYTES > buffer.byteLength) return undefined;
  const declared = frameEnd(buffer, offset);
  if (frameAt(buffer, declared) !== undefined) return declared;
  for (let at = buffer.indexOf(HEAD_START, offset + 1 + PREFIX_BYTES); at >= 0; at = buffer.indexOf(HEAD_START, at + 1)) {
    if (frameAt(buffer, at - PREFIX_BYTES) !== undefined) return at - PREFIX_BYTES;
  }
  return undefined;
}

/** A head line as the log writes one; undefined for anything else. */
function parseHead(line: Uint8Array, bodyBytes: number): FrameHead | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(line).toString('utf8'));
  } catch {
    return undefined;
  }
  const { kind, id, journalId, record, redo } = (value ?? {}) as Record<string, unknown>;
  if (!Number.isSafeInteger(id)) return undefined;
  if (kind === 'done' || kind === 'cancelled') return value as FrameHead;
  const redoFits = redo === undefined || (Number.isSafeInteger(redo) && (redo as number) >= 0 && (redo as number) <= bodyBytes);
  return kind === 'intent' && isFileName(journalId) && isFileName(record) && redoFits ? (value as FrameHead) : undefined;
}

/**
 * A name the log gives a file in `journal/` or `history/`: recovery writes and removes files by
 * the names an intent holds, and a frame found past damage may be log bytes inside a patched file.
 */
function isFileName(name: unknown): boolean {
  return typeof name === 'string' && name !== '' && name !== '.' && name !== '..' && !/[/\0]/.test(name);
}
