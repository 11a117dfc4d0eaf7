/** Turning Node filesystem errors into typed engine errors, and the one exception type a commit step throws. */
import { engineError, type EngineError } from '../engine/errors.ts';

/** True when `error` is a Node system error with one of `codes` (e.g. `ENOENT`). */
export function hasErrorCode(error: unknown, ...codes: readonly string[]): boolean {
  if (!(error instanceof Error) || !('code' in error)) return false;
  return typeof error.code === 'string' && codes.includes(error.code);
}

/** What `pending` gives, or undefined when it fails because what it reads is not there (ENOENT). */
export async function ifPresent<T>(pending: Promise<T>): Promise<T | undefined> {
  try {
    return await pending;
  } catch (error) {
    if (hasErrorCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

function errorCodeOf(error: unknown): string {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.message : String(error);
}

/** Plain words for the codes a user can act on (a full disk, a read-only mount, a quota, permissions); others go by their code alone. */
const PLAIN_WORDS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only filesystem',
  EMFILE: 'too many open files in this process',
  ENFILE: 'too many open files on this system',
  EIO: 'input/output error',
  ENAMETOOLONG: 'file name too long',
};

/** What the failure's code means, in words, when it is one of those; else undefined. */
export function plainWordsFor(error: unknown): string | undefined {
  const code = errorCodeOf(error);
  return Object.hasOwn(PLAIN_WORDS, code) ? PLAIN_WORDS[code] : undefined;
}

/** The failure's code, with plain words where they help: `ENOSPC (no space left on the device)`. */
export function describeFsError(error: unknown): string {
  const words = plainWordsFor(error);
  return words === undefined ? errorCodeOf(error) : `${errorCodeOf(error)} (${words})`;
}

/**
 * Maps a filesystem failure on workspace path `path` to an engine error. Messages name the
 * workspace-relative path and the errno code only: absolute paths (state dir, root) stay private.
 */
export function errorFromFs(error: unknown, path: string, action: string): EngineError {
  if (error instanceof CommitStepError) return error.error;
  const message = `Could not ${action} ${path}: ${describeFsError(error)}.`;
  if (hasErrorCode(error, 'ENOENT')) return engineError('not_found', message, { path });
  if (hasErrorCode(error, 'EACCES', 'EPERM', 'EROFS', 'ELOOP')) return engineError('permission_denied', message, { path });
  const mapped = engineError('io_error', message, { path });
  if (isShortage(error)) shortages.add(mapped);
  return mapped;
}

/** Failures that say nothing about the file: the process or the system ran short (descriptors, memory), or a call was interrupted. */
const SHORTAGE_CODES = ['EMFILE', 'ENFILE', 'ENOMEM', 'EAGAIN', 'EINTR'];
const shortages = new WeakSet<EngineError>();

/**
 * Whether `error` (from the filesystem, or an engine error `errorFromFs` made of one) is a
 * shortage: a look at a file that failed so tells nothing of the file, and must not be taken
 * for a change (a conflict, a stale file).
 */
export function isShortage(error: unknown): boolean {
  if (error instanceof CommitStepError) return shortages.has(error.error);
  return hasErrorCode(error, ...SHORTAGE_CODES) || (typeof error === 'object' && error !== null && shortages.has(error as EngineError));
}

/** Thrown inside a commit to abort it with a ready-made engine error; caught at the commit boundary. */
export class CommitStepError extends Error {
  constructor(readonly error: EngineError) {
    super(error.message);
  }
}

/** Runs one filesystem step of a commit, turning any failure into a `CommitStepError` naming `path`. */
export async function attempt<T>(path: string, action: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    throw new CommitStepError(errorFromFs(error, path, action));
  }
}

/** Awaits every promise (so no work is still running afterwards), then throws the first failure. */
export async function settleAll<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  const results = await Promise.allSettled(promises);
  const failure = results.find((result) => result.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
  return results.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
}
