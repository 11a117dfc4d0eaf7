/**
 * What a git diff's `index` line says of a file: only whether it was empty, since the empty
 * blob's id is known without hashing. Lines only added (a diff of an empty file, or one made
 * with `-U0`) match anywhere, so this is what stops them being added a second time, or into a
 * file emptied since the diff was made.
 */
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

/** The diff empties the file, and it is empty: exactly the new side, though no hunk has a line left to find. */
export function emptiedAsSaid(blobs: BlobIds | undefined, snapshot: FileSnapshot | undefined): boolean {
  return blobs !== undefined && isEmptyBlob(blobs.new) && !isEmptyBlob(blobs.old) && snapshot?.kind === 'file' && snapshot.bytes.length === 0;
}
