/**
 * Where a workspace's root really is, and where its state (journals, trash) lives: outside the
 * tree, owned by us, by default `os.tmpdir()/patchd-state/<first 16 hex of sha256(root)>`.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isInside } from './guard.ts';

/** The root is missing or not a directory, or the state dir is unusable. */
export class WorkspaceRootError extends Error {
  readonly code = 'bad_root';
}

/** The realpath of an existing directory. */
export async function resolveRoot(root: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(path.resolve(root));
  } catch {
    throw new WorkspaceRootError(`The workspace root ${root} does not exist.`);
  }
  if (!(await stat(real)).isDirectory()) throw new WorkspaceRootError(`The workspace root ${root} is not a directory.`);
  return real;
}

/** The state dir of the workspace at real path `root`, under `base` (default: the system temp dir). */
export function stateDirFor(root: string, base = path.join(os.tmpdir(), 'patchd-state')): string {
  return path.join(base, createHash('sha256').update(root).digest('hex').slice(0, 16));
}

/** Creates (mode 0700) and checks the state dir: outside the root, a directory, ours. Returns its realpath. */
export async function prepareStateDir(root: string, requested: string | undefined): Promise<string> {
  const wanted = requested === undefined ? stateDirFor(root) : path.resolve(requested);
  const outsideError = new WorkspaceRootError('The state directory must be outside the workspace root.');
  if (isInside(root, wanted)) throw outsideError;
  await mkdir(wanted, { recursive: true, mode: 0o700 });
  const real = await realpath(wanted);
  if (isInside(root, real)) throw outsideError;
  // A shared tmp dir: refuse a state dir someone else planted for us.
  const stats = await lstat(real);
  const uid = process.getuid?.();
  if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid)) throw new WorkspaceRootError(`The state directory ${real} is not a directory owned by this user.`);
  return real;
}
