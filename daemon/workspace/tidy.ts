/**
 * Tidy trees: after a commit deletes or moves away a directory's last file, the directories it
 * leaves empty go too, up to (never including) the root — as `git apply` does. Runs after the
 * commit stands, best effort: a directory is removed only if it is empty at that instant
 * (`rmdir`, never a recursive removal), a directory someone fills meanwhile is kept, and a
 * failure here never turns a commit into an error. Undo brings the directories back (a commit
 * creates the parents its files need) with the mode and owner they had: which directories end up
 * empty is known only after the deletes, so a commit's journal keeps those of every directory
 * above a path it takes away (`ownersOfDirectoriesAbove`), read before it runs.
 *
 * Commits on other files run meanwhile, so a commit may find that a directory it checked (or
 * made) for its new file was tidied away before it wrote there, or a rollback that a directory
 * its commit emptied was: `recreateParents` makes it again.
 *
 * Directories are made and removed synchronously, as temps are created (see `writeDurably`): on
 * the thread pool, a mkdir or rmdir waiting for the filesystem's journal would hold its parent's
 * lock while a commit's rename into that parent waits between its last look and the rename.
 */
import { lstatSync, rmdirSync, type BigIntStats } from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { WorkspaceContext } from './context.ts';
import { makeDirectory } from './durable.ts';
import { ownerOf, type FileOwner } from './files.ts';
import { CommitStepError, hasErrorCode } from './ioErrors.ts';
import type { DirectoryOwner } from './journal.ts';
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
 * The mode and owner of every directory above `gonePaths` (paths a commit is about to take away),
 * up to (not including) the root and not past a link: the directories the commit may remove —
 * tidied away once empty, or replaced by a file — as they are before it, for its journal. One
 * lstat per directory, synchronous like the guard's (`guard.ts`); none for a commit that takes
 * nothing away. A directory that cannot be looked at is left out: it would come back with the
 * default mode.
 */
export function ownersOfDirectoriesAbove(root: string, gonePaths: readonly string[]): DirectoryOwner[] {
  const owners: DirectoryOwner[] = [];
  const seen = new Set<string>();
  for (const gone of gonePaths) {
    for (let dir = path.posix.dirname(gone); dir !== '.' && !seen.has(dir); dir = path.posix.dirname(dir)) {
      seen.add(dir);
      const stats = lstatDirectory(path.join(root, dir));
      // A link (never tidied away: rmdir refuses it) or nothing: what is above it is not either.
      if (stats === undefined) break;
      owners.push({ path: dir, owner: ownerOf(stats) });
    }
  }
  return owners;
}

function lstatDirectory(absolute: string): BigIntStats | undefined {
  try {
    const stats = lstatSync(absolute, { bigint: true, throwIfNoEntry: false });
    return stats?.isDirectory() ? stats : undefined;
  } catch {
    return undefined;
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
