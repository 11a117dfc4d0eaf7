/**
 * A directory a patch replaces by a file (a type change: `git diff` writes it as delete `d/x`,
 * add `d`). The patch may take away only what it names, so the directory must hold nothing but
 * the files the same commit takes away and the directories leading to them: an untracked file, an
 * empty directory or a link inside it refuses the patch, nothing written (`git apply` stops there
 * too, after deleting the rest). Looked at without following links: a link is never entered.
 * Checked when the patch is planned (so a dry run tells it) and again by the commit, under its
 * locks; the commit then removes the directories, deepest first, once their files are gone
 * (`transaction.ts`), and a directory filled meanwhile makes it roll back.
 */
import { rmdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { engineError, type EngineError } from '../engine/errors.ts';
import { lowerBound } from '../engine/match.ts';
import { fail, ok, type Result } from '../engine/types.ts';
import type { PathGuard } from './guard.ts';
import { CommitStepError, errorFromFs, hasErrorCode } from './ioErrors.ts';

/** A path a commit writes (`after`) or takes away (`after: null`). */
export interface PathChange {
  readonly path: string;
  readonly after: Uint8Array | null;
}

/**
 * The directories `replaced` (each a directory a commit makes a file at), each with the
 * directories below it, deepest first: what the commit removes once the paths `changes` take away
 * are gone (each lies above one of those paths, so the journal keeps its mode and owner:
 * `ownersOfDirectoriesAbove`). An error when one holds anything else, naming the undo of `undoOf`
 * when that is what commits.
 */
export async function directoriesToRemove(
  guard: PathGuard, replaced: readonly string[], changes: readonly PathChange[], undoOf?: string,
): Promise<Result<string[]>> {
  if (replaced.length === 0) return ok([]);
  const sorted = changes.filter((change) => change.after === null).map((change) => change.path).sort();
  const removed: string[] = [];
  for (const directory of replaced) {
    const guarded = guard.check(directory);
    if (!guarded.ok) return guarded;
    const emptied = await emptiedBelow({ absolute: guarded.value.absolute, relative: directory }, sorted, { directory, undoOf });
    if (!emptied.ok) return emptied;
    removed.push(...emptied.value);
  }
  return ok(removed);
}

/**
 * Removes a directory the commit replaces by a file, its files just taken away; synchronously, as
 * directories in the tree are made and removed (`tidy.ts`). One filled meanwhile is `stale_file`
 * (rolled back; planned again, the patch is refused naming what is there now).
 */
export function removeEmptiedDirectory(guard: PathGuard, directory: string): void {
  const guarded = guard.check(directory);
  if (!guarded.ok) throw new CommitStepError(guarded.error);
  try {
    rmdirSync(guarded.value.absolute);
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return;
    if (!hasErrorCode(error, 'ENOTEMPTY', 'EEXIST')) throw new CommitStepError(errorFromFs(error, directory, 'remove the directory'));
    const message = `Something was put in ${directory} (which the patch replaces by a file) while the patch was being committed; nothing was written.`;
    throw new CommitStepError(engineError('stale_file', message, { path: directory }));
  }
}

interface Directory {
  readonly absolute: string;
  readonly relative: string;
}

/** The directory a patch, or the undo of `undoOf`, replaces by a file. */
interface Replacement {
  readonly directory: string;
  readonly undoOf: string | undefined;
}

/** `directory` and the directories below it, deepest first, when it holds only paths of `gone` (sorted) and directories leading to them. */
async function emptiedBelow(directory: Directory, gone: readonly string[], replacement: Replacement): Promise<Result<string[]>> {
  let entries;
  try {
    entries = await readdir(directory.absolute, { withFileTypes: true });
  } catch (error) {
    return fail(errorFromFs(error, directory.relative, 'list'));
  }
  const removed: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const relative = `${directory.relative}/${entry.name}`;
    if (entry.isFile() && includes(gone, relative)) continue;
    if (!entry.isDirectory() || !hasBelow(gone, relative)) return fail(leftBehind(replacement, relative, entry.isDirectory()));
    const below = await emptiedBelow({ absolute: path.join(directory.absolute, entry.name), relative }, gone, replacement);
    if (!below.ok) return below;
    removed.push(...below.value);
  }
  removed.push(directory.relative);
  return ok(removed);
}

function leftBehind({ directory, undoOf }: Replacement, found: string, isDirectory: boolean): EngineError {
  const what = isDirectory ? `the directory ${found}` : found;
  const error = (message: string, hint: string) => ({ ...engineError('already_exists', message, { path: directory }), hint });
  if (undoOf !== undefined) {
    return error(
      `Undoing ${undoOf} replaces the directory ${directory} by a file, but ${directory} holds ${what}, which the undo does not delete (the transaction being undone did not put it there); nothing was written.`,
      `An undo replaces a directory by a file only when every file in it is one the transaction being undone added: ${isDirectory ? 'remove' : 'move or delete'} ${what} first, then undo again.`,
    );
  }
  const remove = isDirectory ? `remove the directory ${found} first` : `delete ${found} in the same patch (or remove it first)`;
  return error(
    `The patch replaces the directory ${directory} by a file, but ${directory} holds ${what}, which the patch does not delete; nothing was written.`,
    `A directory is replaced by a file only when the patch deletes (or moves away) every file in it: ${remove}, or add the file at another path.`,
  );
}

function includes(sorted: readonly string[], value: string): boolean {
  return sorted[lowerBound(sorted, value)] === value;
}

/** Whether a path of `sorted` lies below directory `relative`: every one that does sorts right from `relative/` on. */
function hasBelow(sorted: readonly string[], relative: string): boolean {
  const prefix = `${relative}/`;
  return sorted[lowerBound(sorted, prefix)]?.startsWith(prefix) ?? false;
}
