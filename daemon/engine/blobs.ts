/**
 * What a git diff's `index` line says of a file. Whether it was empty: the empty blob's id is
 * known without hashing, and lines only added (a diff of an empty file, or one made with `-U0`)
 * match anywhere, so this is what stops them being added a second time, or into a file emptied
 * since the diff was made. And whether the file already is the diff's new side: its bytes hash to
 * the new blob, so the diff was applied (a hunk whose old lines reappear inside its own new ones
 * would otherwise find them and apply again). And, for a delete that lists no lines, whether the
 * file is the one deleted. An id that matches nothing (a model's made-up one) says nothing, but
 * proves nothing either: such a delete is refused.
 */
import { createHash } from 'node:crypto';
import { alreadyThere, engineError, type EngineError } from './errors.ts';
import type { BlobIds } from './types.ts';

/** git's id of the empty blob, SHA-1 and SHA-256; an `index` line may abbreviate it. */
const EMPTY_BLOBS = ['e69de29bb2d1d6434b8b29ae775ad8c2e48c5391', '473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813'];

export function isEmptyBlob(id: string): boolean {
  return EMPTY_BLOBS.some((empty) => empty.startsWith(id));
}

/** The file must be empty exactly when the diff's old side is the empty blob. */
export function emptinessAsSaid(path: string, bytes: Uint8Array, blobs: BlobIds | undefined): EngineError | undefined {
  if (blobs === undefined) return undefined;
  const saidEmpty = isEmptyBlob(blobs.old);
  if (saidEmpty === (bytes.length === 0)) return undefined;
  const said = saidEmpty ? `was empty (its index line names the empty blob ${blobs.old})` : `held content (blob ${blobs.old})`;
  return engineError('context_not_found', `The diff says ${path} ${said}, but it ${saidEmpty ? 'is not' : 'is empty'}.`, { path });
}

/**
 * A git delete whose section lists no lines (`git diff -D` leaves them out): the file must be
 * empty, or be the old blob of its index line, which is then exactly what the diff deleted. An
 * empty file is deleted whatever the line says (the corpus gives such deletes made-up ids).
 */
export function deletedAsSaid(path: string, bytes: Uint8Array, blobs: BlobIds | undefined): EngineError | undefined {
  if (bytes.length === 0) return undefined;
  if (blobs === undefined || isEmptyBlob(blobs.old)) {
    return engineError('context_not_found', `The patch deletes ${path} as an empty file (its section lists no lines), but the file has content: nothing was deleted.`, { path });
  }
  if (holds(idOf(bytes, blobs), blobs.old)) return undefined;
  return engineError('context_not_found', `The patch deletes ${path} without listing its lines, and the file is not what its index line says it deletes (blob ${blobs.old}): it changed since the diff was made, or the id is made up. Nothing was deleted; send the delete with the file's lines (\`git diff\` without -D).`, { path });
}

/** Which side of the index line the file's bytes are, if either; the file is hashed once. */
export function sideHeld(bytes: Uint8Array, blobs: BlobIds | undefined): 'old' | 'new' | undefined {
  if (blobs === undefined || blobs.new.startsWith(blobs.old) || blobs.old.startsWith(blobs.new)) return undefined;
  const id = idOf(bytes, blobs);
  return holds(id, blobs.old) ? 'old' : holds(id, blobs.new) ? 'new' : undefined;
}

/** Whether `bytes` are the diff's new side. */
export function isNewSide(bytes: Uint8Array, blobs: BlobIds): boolean {
  return holds(idOf(bytes, blobs), blobs.new);
}

/** The blob id of `bytes` in the hash the index line uses; undefined for no bytes (the empty blob is known). */
function idOf(bytes: Uint8Array, blobs: BlobIds): string | undefined {
  return bytes.length === 0 ? undefined : blobIdOf(bytes, blobs.old.length > 40 ? 'sha256' : 'sha1');
}

function holds(id: string | undefined, blob: string): boolean {
  return id === undefined ? isEmptyBlob(blob) : id.startsWith(blob);
}

/**
 * A file that already is the diff's new side (which differs from its old side): for an update the
 * change is there, `already_applied`; for a rename, its source was changed but not moved. Checked
 * before any hunk is sought: the hunks could find their old lines again inside the new ones.
 */
export function newSideAsSaid(fromPath: string, path: string, held: 'old' | 'new' | undefined, blobs: BlobIds | undefined): EngineError | undefined {
  if (held !== 'new' || blobs === undefined) return undefined;
  const why = `${fromPath} already is the diff's new side (blob ${blobs.new} of its index line).`;
  return fromPath === path ? alreadyThere(path, why) : engineError('context_not_found', `${why} It is not renamed to ${path}.`, { path: fromPath });
}

/** The id git gives a blob of these bytes (an abbreviated id from a SHA-256 repository is taken for SHA-1's, and matches nothing). */
export function blobIdOf(bytes: Uint8Array, algorithm: 'sha1' | 'sha256'): string {
  return createHash(algorithm).update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}
