/**
 * The frames of a commit log segment (`commitLog.ts`): u32 LE payload length, u32 LE crc32 of the
 * payload, then the payload — one JSON line (`FrameHead`), then for an intent its journal bytes
 * (`journal.ts`) and any redo section. A torn tail fails its length or crc: the segment is read
 * up to there.
 */
import { crc32 } from 'node:zlib';

export type FrameHead =
  /** `redo`: the length of the redo section (`journal.ts`) that ends the body, when there is one. */
  | { readonly kind: 'intent'; readonly id: number; readonly journalId: string; readonly record: string; readonly redo?: number }
  | { readonly kind: 'done' | 'cancelled'; readonly id: number };

/** A frame's bytes: prefix, head line, body chunks (written with one writev, not copied). */
export function frameOf(head: FrameHead, body: readonly Uint8Array[] = []): Uint8Array[] {
  const line = Buffer.from(`${JSON.stringify(head)}\n`);
  const length = body.reduce((total, chunk) => total + chunk.byteLength, line.byteLength);
  let checksum = crc32(line);
  for (const chunk of body) checksum = crc32(chunk, checksum);
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32LE(length, 0);
  prefix.writeUInt32LE(checksum, 4);
  return [prefix, line, ...body];
}

/** The whole frames of a segment, up to the first torn or damaged one. */
export function framesOf(bytes: Uint8Array): { head: FrameHead; body: Uint8Array }[] {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const frames: { head: FrameHead; body: Uint8Array }[] = [];
  for (let offset = 0; offset + 8 <= buffer.byteLength; ) {
    const length = buffer.readUInt32LE(offset);
    const payload = buffer.subarray(offset + 8, offset + 8 + length);
    if (payload.byteLength < length || crc32(payload) !== buffer.readUInt32LE(offset + 4)) break;
    const newline = payload.indexOf(0x0a);
    if (newline < 0) break;
    frames.push({ head: JSON.parse(payload.subarray(0, newline).toString('utf8')) as FrameHead, body: payload.subarray(newline + 1) });
    offset += 8 + length;
  }
  return frames;
}
