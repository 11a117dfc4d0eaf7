/**
 * Which of a list of paths are regular files in the workspace: how a unified diff's strip level
 * is found, and whether a directory that prose names holds the files a patch changes.
 */
import type { PathGuard } from './guard.ts';

/** The answer to an engine's `pathProbe`, as `PatchInput` takes it. */
export interface ProbeAnswer {
  /** The paths that name regular files the guard allows; nothing is read. */
  readonly existingPaths: string[];
  /**
   * The paths the guard refuses (an escape, a link, `.git/`, an unreadable directory): no files
   * for the strip level (the patch names them again when it is planned, and is refused then),
   * but not known to be missing either, since what is behind them is not looked at.
   */
  readonly refusedPaths: string[];
}

export function probePaths(guard: PathGuard, paths: readonly string[]): ProbeAnswer {
  const answer: ProbeAnswer = { existingPaths: [], refusedPaths: [] };
  for (const path of paths) {
    const guarded = guard.check(path);
    if (!guarded.ok) answer.refusedPaths.push(path);
    else if (guarded.value.found === 'file') answer.existingPaths.push(path);
  }
  return answer;
}
