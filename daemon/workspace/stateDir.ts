/**
 * Where a workspace's root really is, and where its state (journals, trash) lives: outside the
 * tree, owned by us, by default `os.tmpdir()/patchd-state/<first 16 hex of sha256(root)>`.
 */
import { createHash } from 'node:crypto';
import { lstat, mkdir, realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isPresent } from './durable.ts';
import { isInside } from './guard.ts';
import { hasErrorCode } from './ioErrors.ts';

/** The root is missing or not a directory: the caller named a wrong root. */
export class WorkspaceRootError extends Error {
  override readonly name = 'WorkspaceRootError';
  readonly code = 'bad_root';
}

/** How to fix an unusable state dir (the daemon's setup, not the client's request, is at fault). */
export const STATE_DIR_HINT =
  'patchd keeps journals and undo records in a state directory outside the workspace. Start it with a state root that this user owns and can write, outside the workspace: --state-dir DIR or PATCHD_STATE_DIR.';

/** The workspace's state dir cannot be created or used. */
export class StateDirError extends Error {
  override readonly name = 'StateDirError';
  readonly code = 'state_dir_unusable';
  readonly hint = STATE_DIR_HINT;
  constructor(readonly stateDir: string, readonly reason: string, options?: ErrorOptions) {
    super(`patchd cannot use the state directory ${stateDir}: ${reason}.`, options);
  }
}

/** The realpath of an existing directory, else `WorkspaceRootError`: the one place a root is resolved. */
export async function resolveRoot(root: string, stateRoot?: string): Promise<string> {
  let real: string;
  let isDirectory: boolean;
  try {
    real = await realpath(path.resolve(root));
    isDirectory = (await stat(real)).isDirectory();
  } catch {
    throw new WorkspaceRootError(`The workspace root ${root} does not exist.`);
  }
  if (!isDirectory) throw new WorkspaceRootError(`The workspace root ${root} is not a directory.`);
  // Patches there would rewrite other workspaces' journals and undo records.
  const realStateRoot = stateRoot === undefined ? undefined : await realpath(stateRoot).catch(() => undefined);
  if (realStateRoot !== undefined && isInside(realStateRoot, real)) {
    throw new WorkspaceRootError(`The workspace root ${root} is inside patchd's state root ${realStateRoot}, which holds the journals and undo records of every workspace; open a directory of your own.`);
  }
  return real;
}

/** The state dir of the workspace at real path `root`, under `base` (default: the system temp dir). */
export function stateDirFor(root: string, base = path.join(os.tmpdir(), 'patchd-state')): string {
  return path.join(base, createHash('sha256').update(root).digest('hex').slice(0, 16));
}

/** Creates (mode 0700) and checks the state dir: outside the root, a directory, ours. Returns its realpath, else `StateDirError`. */
export async function prepareStateDir(root: string, requested: string | undefined): Promise<string> {
  const wanted = requested === undefined ? stateDirFor(root) : path.resolve(requested);
  const inside = `it is inside the workspace ${root}`;
  // Checked before mkdir, through any symlink on the way, so nothing is ever created in the tree.
  if (isInside(root, wanted) || isInside(root, await throughLinks(wanted))) throw new StateDirError(wanted, inside);
  const real = await createOwnDirectory(wanted);
  if (isInside(root, real)) throw new StateDirError(wanted, inside);
  // A shared tmp dir: refuse a state dir someone else planted for us.
  const stats = await lstat(real).catch((error: unknown) => Promise.reject(unusable(wanted, error)));
  const uid = process.getuid?.();
  if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid)) throw new StateDirError(real, 'it is not a directory owned by this user');
  return real;
}

/** `wanted` with its longest existing ancestor realpath'ed. */
async function throughLinks(wanted: string): Promise<string> {
  for (let existing = wanted; ; existing = path.dirname(existing)) {
    try {
      return path.join(await realpath(existing), path.relative(existing, wanted));
    } catch {
      if (existing === path.dirname(existing)) return wanted;
    }
  }
}

async function createOwnDirectory(wanted: string): Promise<string> {
  try {
    await mkdir(wanted, { recursive: true, mode: 0o700 });
    return await realpath(wanted);
  } catch (error) {
    throw unusable(wanted, hasErrorCode(error, 'ENOENT') ? await whyNotCreated(wanted, error) : error);
  }
}

/**
 * A recursive mkdir reports ENOENT for whatever stopped it (a full disk: ENOSPC): the error of
 * creating the first missing directory on its own says what did.
 */
async function whyNotCreated(wanted: string, reported: unknown): Promise<unknown> {
  let missing = wanted;
  while (path.dirname(missing) !== missing && !isPresent(path.dirname(missing))) missing = path.dirname(missing);
  try {
    await mkdir(missing, { mode: 0o700 });
  } catch (error) {
    if (!hasErrorCode(error, 'EEXIST')) return error;
  }
  return reported;
}

/** A filesystem failure on the state dir, in the words of the system call (`EACCES: permission denied, mkdir '…'`). */
export function unusable(stateDir: string, error: unknown): StateDirError {
  return new StateDirError(stateDir, error instanceof Error ? error.message : String(error), { cause: error });
}
