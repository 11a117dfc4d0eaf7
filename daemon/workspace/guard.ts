/**
 * The path guard: every path a patch names passes here before it is read, and again right
 * before each rename at commit.
 *
 * Symlink policy: a symlinked directory in the middle of a path is followed only when its
 * real path stays inside the root; one leading outside is `path_escape`. A symlink as the
 * final component is never read, written through or replaced: `path_escape` when it leads
 * outside the root (or would, for a dangling link), `permission_denied` otherwise.
 *
 * The walk uses synchronous lstat/realpath on purpose: each is a few microseconds from the
 * dentry cache, while an async call costs a thread-pool round trip (~35 µs) and the guard runs
 * several times per file per commit; the thread pool is what limits commit throughput.
 */
import { lstatSync, readlinkSync, realpathSync, type BigIntStats } from 'node:fs';
import path from 'node:path';
import { engineError, type EngineError } from '../engine/errors.ts';
import { normalizePatchPath } from '../engine/paths.ts';
import { fail, ok, type Result } from '../engine/types.ts';
import { errorFromFs, hasErrorCode } from './ioErrors.ts';

export interface GuardedPath {
  /** Normalised, workspace-relative, forward slashes. */
  readonly path: string;
  /** `root` joined with `path` (lexically: symlinked directories inside the root stay in it). */
  readonly absolute: string;
  /** What the check's walk found there: a regular file, nothing, or something else (a directory, a device). */
  readonly found: Found;
  /**
   * The walk's lstat of the final component, when something is there: a read checks its cache
   * against these rather than taking another lstat microseconds later.
   */
  readonly stats?: BigIntStats | undefined;
}

type Found = 'file' | 'missing' | 'other';

export interface PathGuardOptions {
  /** Allow paths with a `.git` component. Off by default. */
  readonly allowGitDir?: boolean | undefined;
}

/** `candidate === root` or a path below it; both must already be real paths. */
export function isInside(root: string, candidate: string): boolean {
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return candidate === root || candidate.startsWith(prefix);
}

export class PathGuard {
  readonly #allowGitDir: boolean;
  /** `root` and a separator: normalised parts joined onto it need no `path.join`. */
  readonly #rootPrefix: string;

  /** `root` must already be a real path. */
  constructor(readonly root: string, options: PathGuardOptions = {}) {
    this.#allowGitDir = options.allowGitDir ?? false;
    this.#rootPrefix = root.endsWith(path.sep) ? root : root + path.sep;
  }

  check(raw: string): Result<GuardedPath> {
    const normalized = normalizePatchPath(raw);
    if (!normalized.ok) return fail(normalized.error);
    const relative = normalized.value;
    const parts = relative.split('/');
    if (!this.#allowGitDir && parts.some((part) => part.toLowerCase() === '.git')) {
      return fail(engineError('permission_denied', `${relative} is inside .git/, which patches may not touch.`, { path: relative }));
    }
    let walked: Walked | EngineError;
    try {
      walked = this.#walk(relative, parts);
    } catch (error) {
      return fail(errorFromFs(error, relative, 'inspect'));
    }
    if ('code' in walked) return fail(walked);
    return ok({ path: relative, absolute: this.#rootPrefix + parts.join(path.sep), ...walked });
  }

  /** Walks the existing prefix of the path; everything past the first missing component will be created by us. */
  #walk(relative: string, parts: readonly string[]): Walked | EngineError {
    let current = this.#rootPrefix;
    for (const [index, part] of parts.entries()) {
      current = index === 0 ? current + part : current + path.sep + part;
      const isFinal = index === parts.length - 1;
      const stats = lstatComponent(current);
      if (stats === undefined) return { found: 'missing' };
      if (stats.isSymbolicLink()) {
        // A final link is always refused.
        const refusal = this.#checkSymlink(current, relative, isFinal);
        if (refusal !== undefined) return refusal;
      } else if (isFinal) {
        return { found: stats.isFile() ? 'file' : 'other', stats };
      }
    }
    return { found: 'missing' };
  }

  #checkSymlink(link: string, relative: string, isFinal: boolean): EngineError | undefined {
    const target = resolveSymlink(link);
    if (!isInside(this.root, target.resolved)) {
      return engineError('path_escape', `${relative} passes through a symbolic link that leads outside the workspace.`, { path: relative });
    }
    if (isFinal || target.dangling) {
      return engineError('permission_denied', `${relative} is or passes through a symbolic link; patchd does not write through links.`, { path: relative });
    }
    return undefined;
  }
}

type Walked = Pick<GuardedPath, 'found' | 'stats'>;

/** Undefined when nothing is there. Nanosecond times, for the cache's stamps. */
function lstatComponent(absolute: string): BigIntStats | undefined {
  try {
    return lstatSync(absolute, { bigint: true, throwIfNoEntry: false });
  } catch (error) {
    // ENOTDIR: a parent is a regular file; the path cannot exist, and the commit will fail on it.
    if (hasErrorCode(error, 'ENOTDIR')) return undefined;
    throw error;
  }
}

/** The link's real path, or for a dangling / looping link where its target would be. */
function resolveSymlink(link: string): { resolved: string; dangling: boolean } {
  try {
    return { resolved: realpathSync.native(link), dangling: false };
  } catch (error) {
    if (!hasErrorCode(error, 'ENOENT', 'ELOOP', 'ENOTDIR')) throw error;
  }
  const parent = realpathSync.native(path.dirname(link));
  return { resolved: path.resolve(parent, readlinkSync(link)), dangling: true };
}
