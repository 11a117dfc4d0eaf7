/**
 * What a git diff's `index` line says of a file. Whether it was empty: the empty blob's id is
 * known without hashing, and lines only added (a diff of an empty file, or one made with `-U0`)
 * match anywhere, so this is what stops them being added a second time, or into a file emptied
 * since the diff was made. And whether the file already is the diff's new side: its bytes hash to
 * the new blob, so the diff was applied (a hunk whose old lines reappear inside its own new ones
 * would otherwise find them and apply again). An id that matches nothing (a model's made-up one)
 * says nothing.
 */
import { createHash } from 'node:crypto';
import { engineError, type EngineError } from './errors.ts';
import type { FileSnapshot, BlobIds } from './types.ts';

/** git's id of the empty blob, SHA-1 and SHA-256; an `index` line may abbreviate it. */
const EMPTY_BLOBS = ['e69de29bb2d1d6434b8b29ae775ad8c2e48c5391', '473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813'];

function isEmptyBlob(id: string): boolean {
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

/** The file's bytes are the diff's new side, which differs from its old side: the change is there. */
export function holdsNewBlob(blobs: BlobIds | undefined, snapshot: FileSnapshot | undefined): boolean {
  if (blobs === undefined || snapshot?.kind !== 'file' || blobs.new.startsWith(blobs.old) || blobs.old.startsWith(blobs.new)) return false;
  if (snapshot.bytes.length === 0) return isEmptyBlob(blobs.new);
  return blobIdOf(snapshot.bytes, blobs.new.length > 40 ? 'sha256' : 'sha1').startsWith(blobs.new);
}

/** The id git gives a blob of these bytes (an abbreviated id from a SHA-256 repository is taken for SHA-1's, and matches nothing). */
function blobIdOf(bytes: Uint8Array, algorithm: 'sha1' | 'sha256'): string {
  return createHash(algorithm).update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** Applying the diff to a file that already is its new side is refused (`already_applied` says why). */
export function newSideAsSaid(path: string, bytes: Uint8Array, blobs: BlobIds | undefined): EngineError | undefined {
  if (!holdsNewBlob(blobs, { kind: 'file', bytes })) return undefined;
  return engineError('context_not_found', `${path} already is the diff's new side (blob ${blobs?.new} of its index line).`, { path });
}
