/**
 * Planning an undo from a transaction's records: every file goes back to its pre-image (updates
 * reverted, added files removed, deleted files brought back with their modes, renames
 * reversed), provided every path still holds what the transaction left — bytes and existence;
 * a mode change alone does not count. The undo is committed like any plan, so it has a record
 * of its own and undoing it redoes.
 *
 * Modes: a patch never changes one (an update keeps the file's mode, a rename carries it to the
 * new path), so an undo reverts content, not modes. A file that is there now keeps the mode it
 * has now — a `chmod` made after the transaction stays, as it would under any later patch —
 * and a rename goes back with the moved file's current mode. Only a deleted file, which has no
 * mode now, comes back with the mode (and owner) it had when it was deleted; and so does a
 * directory the transaction replaced by a file or tidied away (emptied, see `tidy.ts`).
 */
import { diffVersions } from '../engine/receiptDiff.ts';
import { engineError } from '../engine/errors.ts';
import { fail, ok, type FileSnapshot, type PlannedFile, type Result } from '../engine/types.ts';
import { decodeUtf8Text, sha256Hex, type FileOwner } from './files.ts';
import { directoryOwnersOf, type JournalEntry } from './journal.ts';
import type { FileChange, LoadedRecord } from './records.ts';

export interface UndoPlan {
  readonly files: readonly PlannedFile[];
  /** The mode and owner each path brought back from deletion takes (others keep their current ones). */
  readonly owners: ReadonlyMap<string, FileOwner>;
  /** The mode and owner each directory the transaction removed (replaced by a file, or tidied away) takes when made again (none for records written before patchd kept them). */
  readonly directoryOwners: ReadonlyMap<string, FileOwner>;
}

/** What a transaction left at a path, and what was there before it. */
interface Slot {
  readonly entry: JournalEntry;
  readonly before: Uint8Array | null;
  /** The transaction took a file away from the path to make a directory there (a type change). */
  readonly madeDirectory: boolean;
}

/** The undo's plan, checked against `current` (a snapshot of every path the records touched: `pathsOf`). */
export function planUndo(records: readonly LoadedRecord[], current: ReadonlyMap<string, FileSnapshot>): Result<UndoPlan> {
  const slots = new Map<string, Slot>();
  for (const { record, journal } of records) {
    record.entries.forEach((entry, index) => slots.set(entry.path, { entry, before: journal.preImages[index] ?? null, madeDirectory: record.directories.includes(entry.path) }));
  }
  const stale = findStale(slots, current);
  if (stale !== undefined) return fail(stale);
  const files: PlannedFile[] = [];
  const owners = new Map<string, FileOwner>();
  for (const change of records.flatMap((record) => record.meta.files)) {
    const planned = invert(change, slots, current);
    if (!planned.ok) return planned;
    files.push(planned.value);
    const restored = slots.get(planned.value.path)?.entry.before;
    if (change.op === 'delete' && restored) owners.set(planned.value.path, restored.owner);
  }
  // Where several units name a directory, the first one's: what it was before the transaction.
  const directoryOwners = new Map([...records].reverse().flatMap(({ record }) => [...directoryOwnersOf(record)]));
  return ok({ files, owners, directoryOwners });
}

/** Every path the records touched, for locking and snapshotting. */
export function pathsOf(records: readonly LoadedRecord[]): string[] {
  return [...new Set(records.flatMap((record) => record.record.entries.map((entry) => entry.path)))];
}

/**
 * The first path that no longer holds what the transaction left. A directory it made where it took
 * a file away holds what it left as long as it is a directory: the commit of the undo checks that it
 * holds nothing but the files the undo takes away (`replacedDirectories.ts`).
 */
function findStale(slots: ReadonlyMap<string, Slot>, current: ReadonlyMap<string, FileSnapshot>): ReturnType<typeof engineError> | undefined {
  for (const [path, { entry, madeDirectory }] of slots) {
    const now = current.get(path);
    const gone = now?.kind === 'missing' || (madeDirectory && now?.kind === 'directory');
    const holds = entry.afterSha256 === null ? gone : now?.kind === 'file' && sha256Hex(now.bytes) === entry.afterSha256;
    if (!holds) return engineError('stale_file', `${path} changed after the transaction; undoing it would lose that change.`, { path });
  }
  return undefined;
}

function invert(change: FileChange, slots: ReadonlyMap<string, Slot>, current: ReadonlyMap<string, FileSnapshot>): Result<PlannedFile> {
  const bytesNow = (path: string) => {
    const now = current.get(path);
    return now?.kind === 'file' ? now.bytes : new Uint8Array(0);
  };
  const preImage = (path: string) => slots.get(path)?.before ?? null;
  const planned = (op: PlannedFile['op'], path: string, after: Uint8Array | null, diff: string, fromPath?: string): PlannedFile => (
    { op, path, ...(fromPath === undefined ? {} : { fromPath }), after, hunks: [], diff, diagnostics: [] }
  );
  const { path, fromPath } = change;
  switch (change.op) {
    case 'add':
      return ok(planned('delete', path, null, receiptDiff(`a/${path}`, bytesNow(path), '/dev/null', new Uint8Array(0))));
    case 'delete':
    case 'update': {
      const before = preImage(path);
      if (before === null) return fail(missingPreImage(path));
      const diff = receiptDiff(change.op === 'delete' ? '/dev/null' : `a/${path}`, bytesNow(path), `b/${path}`, before);
      return ok(planned(change.op === 'delete' ? 'add' : 'update', path, before, diff));
    }
    case 'rename': {
      const before = fromPath === undefined ? null : preImage(fromPath);
      if (fromPath === undefined || before === null) return fail(missingPreImage(fromPath ?? path));
      return ok(planned('rename', fromPath, before, receiptDiff(`a/${path}`, bytesNow(path), `b/${fromPath}`, before), path));
    }
  }
}

/** The receipt's diff of the undo of one file; none when a side is not text (binary, or not UTF-8), as for a patch's own receipt. */
function receiptDiff(oldName: string, oldBytes: Uint8Array, newName: string, newBytes: Uint8Array): string {
  const oldText = decodeUtf8Text(oldBytes);
  const newText = decodeUtf8Text(newBytes);
  return oldText === undefined || newText === undefined ? '' : diffVersions(oldName, oldText, newName, newText);
}

function missingPreImage(path: string) {
  return engineError('io_error', `The undo record of ${path} has no pre-image; it cannot be undone.`, { path });
}
