/**
 * The order of a commit's steps. A plain commit stages every temp beside its target, then renames
 * in plan order. A commit that changes a path's type cannot: a file it replaces by a directory
 * must be gone before the directory is made (and the temps of the files going into it written),
 * and the files of a directory it replaces by a file must be gone, and the directory removed,
 * before the file is renamed into place. So it goes:
 *
 *   1. stage the temps whose directories exist (or are made where nothing is), as always;
 *   2. take away the paths in the way: the files the replaced directories hold, the files replaced
 *      by directories (moved to trash, each after its last look);
 *   3. remove the emptied directories, deepest first;
 *   4. make the directories that replace files, parents first, and stage the temps inside them;
 *   5. the other renames, in plan order.
 *
 * Every directory it may make is in the journal's `directories` and every one it removes in its
 * `removedDirectories` before anything is renamed, so a rollback (or recovery after a crash
 * anywhere in between) puts back the pre-image (`recovery.ts`).
 */
import path from 'node:path';
import type { Step } from './transaction.ts';

export interface CommitOrder {
  /** Directories made before anything is renamed (where nothing is), parents first. */
  readonly early: readonly string[];
  /** Step 2: what is taken away first. */
  readonly freeing: readonly Step[];
  /** Step 3: deepest first. */
  readonly removed: readonly string[];
  /** Step 4: directories made where a file was taken away, and below it, parents first. */
  readonly late: readonly string[];
  /** Step 4: the steps whose temps go into `late` directories. */
  readonly deferred: readonly Step[];
  /** Step 5. */
  readonly rest: readonly Step[];
}

/**
 * `directories`: every directory the commit makes, parents first (a path a step takes away among
 * them is a file it replaces by a directory); `removed`: the directories it replaces by a file and
 * those below them, deepest first, holding only paths its steps take away (`replacedDirectories.ts`).
 */
export function orderSteps(steps: readonly Step[], directories: readonly string[], removed: readonly string[]): CommitOrder {
  const gone = new Set(steps.filter((step) => step.after === null).map((step) => step.path));
  const late = new Set<string>();
  for (const directory of directories) if (gone.has(directory) || late.has(path.posix.dirname(directory))) late.add(directory);
  if (late.size === 0 && removed.length === 0) return { early: directories, freeing: [], removed, late: [], deferred: [], rest: steps };
  const emptied = new Set(removed);
  const isFreeing = (step: Step) => step.after === null && (late.has(step.path) || emptied.has(path.posix.dirname(step.path)));
  return {
    early: directories.filter((directory) => !late.has(directory)),
    freeing: steps.filter(isFreeing),
    removed,
    late: [...late],
    deferred: steps.filter((step) => step.after !== null && late.has(path.posix.dirname(step.path))),
    rest: steps.filter((step) => !isFreeing(step)),
  };
}

/** The steps whose temps are written before anything is renamed. */
export function stagedFirst(order: CommitOrder): Step[] {
  const deferred = new Set(order.deferred);
  return [...order.freeing, ...order.rest].filter((step) => !deferred.has(step));
}
