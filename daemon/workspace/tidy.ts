/**
 * Tidy trees: after a commit deletes or moves away a directory's last file, the directories it
 * leaves empty go too, up to (never including) the root — as `git apply` does. Runs after the
 * commit stands, best effort: a directory someone fills meanwhile is kept, and a failure here
 * never turns a commit into an error. Undo brings the directories back (a commit creates the
 * parents its files need).
 */
import { rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { WorkspaceContext } from './context.ts';

export async function removeEmptiedDirectories(context: WorkspaceContext, effects: readonly { readonly path: string; readonly after: Uint8Array | null }[]): Promise<void> {
  const removed = new Set<string>();
  for (const effect of effects) {
    if (effect.after !== null) continue;
    for (let dir = path.posix.dirname(effect.path); dir !== '.' && !removed.has(dir); dir = path.posix.dirname(dir)) {
      if (!(await removeIfEmpty(context, dir))) break;
      removed.add(dir);
    }
  }
  const parents = new Set([...removed].map((dir) => path.dirname(path.join(context.root, dir))));
  await Promise.all([...parents].map((parent) => context.syncer.sync(parent).catch(() => undefined)));
}

async function removeIfEmpty(context: WorkspaceContext, dir: string): Promise<boolean> {
  const guarded = context.guard.check(dir);
  if (!guarded.ok) return false;
  try {
    await rmdir(guarded.value.absolute);
    return true;
  } catch {
    return false;
  }
}
