/**
 * Tidy trees: after a commit deletes or moves away a directory's last file, the directories it
 * leaves empty go too, up to (never including) the root — as `git apply` does. Runs after the
 * commit stands, best effort: a directory is removed only if it is empty at that instant
 * (`rmdir`, never a recursive removal), a directory someone fills meanwhile is kept, and a
 * failure here never turns a commit into an error. Undo brings the directories back (a commit
 * creates the parents its files need).
 *
 * Commits on other files run meanwhile, so a commit may find that a directory it checked (or
 * made) for its new file was tidied away before it wrote there: `recreateParents` makes it again.
 *
 * Directories are made and removed synchronously, as temps are created (see `writeDurably`): on
 * the thread pool, a mkdir or rmdir waiting for the filesystem's journal would hold its parent's
 * lock while a commit's rename into that parent waits between its last look and the rename.
 */
import { rmdirSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { WorkspaceContext } from './context.ts';
import { makeDirectory } from './durable.ts';
import type { FileOwner } from './files.ts';
import { CommitStepError, hasErrorCode } from './ioErrors.ts';
import { mapLimited } from './limited.ts';

export async function removeEmptiedDirectories(context: WorkspaceContext, effects: readonly { readonly path: string; readonly after: Uint8Array | null }[]): Promise<void> {
  await removeDirectoriesEmptiedBy(context, effects.filter((effect) => effect.after === null).map((effect) => effect.path));
}

/** Removes the directories above `gonePaths` (paths a commit deleted or moved away) that are empty now, deepest first. */
export async function removeDirectoriesEmptiedBy(context: WorkspaceContext, gonePaths: readonly string[]): Promise<void> {
  const removed = new Set<string>();
  for (const gone of gonePaths) {
    for (let dir = path.posix.dirname(gone); dir !== '.' && !removed.has(dir); dir = path.posix.dirname(dir)) {
      if (!(await removeIfEmpty(context, dir))) break;
      removed.add(dir);
    }
  }
  const parents = new Set([...removed].map((dir) => path.dirname(path.join(context.root, dir))));
  await mapLimited([...parents], (parent) => context.syncer.sync(parent).catch(() => undefined));
}

async function removeIfEmpty(context: WorkspaceContext, dir: string): Promise<boolean> {
  const guarded = context.guard.check(dir);
  if (!guarded.ok) return false;
  try {
    rmdirSync(guarded.value.absolute);
    return true;
  } catch {
    // ENOTEMPTY/EEXIST: someone uses it now; anything else: leave it as it is.
    return false;
  }
}

/**
 * Makes the missing directories above `relative` (workspace-relative), parents first, each
 * guarded before it is made, with its mode and owner in `owners` (else the default); returns the
 * ones made here. Throws what the guard or `mkdir` refuses (a link out of the tree, no permission).
 */
export async function recreateParents(context: WorkspaceContext, relative: string, owners?: ReadonlyMap<string, FileOwner>): Promise<string[]> {
  const missing: string[] = [];
  for (let dir = path.posix.dirname(relative); dir !== '.'; dir = path.posix.dirname(dir)) {
    if (await isDirectory(path.join(context.root, dir))) break;
    missing.unshift(dir);
  }
  const made: string[] = [];
  for (const dir of missing) {
    const guarded = context.guard.check(dir);
    if (!guarded.ok) throw new CommitStepError(guarded.error);
    try {
      makeDirectory(guarded.value.absolute, owners?.get(dir));
      made.push(dir);
    } catch (error) {
      if (!hasErrorCode(error, 'EEXIST')) throw error;
    }
  }
  return made;
}

async function isDirectory(absolute: string): Promise<boolean> {
  try {
    return (await lstat(absolute)).isDirectory();
  } catch {
    return false;
  }
}
