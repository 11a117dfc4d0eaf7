/** Which of a list of paths are regular files in the workspace: how a unified diff's strip level is found. */
import type { PathGuard } from './guard.ts';

/**
 * The paths that name regular files the guard allows; nothing is read. A path the guard refuses
 * (an escape, a link, `.git/`) counts as missing here: the patch names it again when it is
 * planned, and is refused then.
 */
export function existingFiles(guard: PathGuard, paths: readonly string[]): string[] {
  return paths.filter((path) => {
    const guarded = guard.check(path);
    return guarded.ok && guarded.value.found === 'file';
  });
}
