/**
 * A workspace: one root directory that patchd owns the disk of. Guards paths, reads
 * snapshots for the engine, commits plans atomically, recovers after a crash.
 *
 * State dir layout (outside the tree; default `os.tmpdir()/patchd-state/<first 16 hex of
 * sha256(root)>`, mode 0700):
 *   journal/<pid>-<nonce>-<transactionId>[.<n>].journal   in-flight commits (see journal.ts)
 *   journal/*.conflict                                   journals recovery could not fully apply, kept
 *   trash/<transactionId>/<workspace path>               deleted and moved-away files
 */
import { lstat, mkdir, realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { engineError, type EngineError } from '../engine/errors.ts';
import { fail, ok, type FileSnapshot, type Plan, type Result } from '../engine/types.ts';
import { commitPlan, type CommitOptions, type CommitOutcome } from './commit.ts';
import type { CommitHooks, WorkspaceContext } from './context.ts';
import { DirectorySyncer } from './durable.ts';
import { decodeUtf8Text, readGuardedEntries, sha256Hex, toSnapshot, versionFromSha256 } from './files.ts';
import { PathGuard, isInside } from './guard.ts';
import { JournalStore } from './journal.ts';
import { recoverAbandonedJournals, type RollbackReport } from './recovery.ts';

export { sha256Hex, versionFromSha256 } from './files.ts';
export type { CommitOptions, CommitOutcome } from './commit.ts';
export type { CommitHooks } from './context.ts';
export type { RollbackReport } from './recovery.ts';

export interface WorkspaceOptions {
  /** Allow paths with a `.git` component. Off by default. */
  readonly allowGitDir?: boolean;
  /** Where trash and journals live; must be outside the root. */
  readonly stateDir?: string;
  /** Fault injection for tests. */
  readonly hooks?: CommitHooks;
}

/** The root is missing or not a directory, or the state dir is unusable. */
export class WorkspaceRootError extends Error {
  readonly code = 'bad_root';
}

export interface FileRead {
  readonly path: string;
  /** UTF-8 text; a BOM is kept, so it re-encodes to exactly the bytes `sha256` hashes. */
  readonly content: string;
  /** Lowercase hex sha256 of the file's bytes. */
  readonly sha256: string;
  /** `sha256:` + the first 16 hex digits of `sha256`. */
  readonly version: string;
}

export class Workspace {
  readonly root: string;
  readonly stateDir: string;
  /** Commits a killed daemon left half-done, rolled back to their pre-image by `open`. */
  readonly recovered: readonly RollbackReport[];
  readonly #context: WorkspaceContext;
  readonly #inFlight = new Set<Promise<CommitOutcome>>();
  #closed = false;

  private constructor(context: WorkspaceContext, recovered: readonly RollbackReport[]) {
    this.root = context.root;
    this.stateDir = context.stateDir;
    this.recovered = recovered;
    this.#context = context;
  }

  /** Realpaths the root once, prepares the state dir and rolls back journals a killed daemon left. */
  static async open(root: string, options: WorkspaceOptions = {}): Promise<Workspace> {
    const realRoot = await resolveRoot(root);
    const stateDir = await prepareStateDir(realRoot, options.stateDir);
    const syncer = new DirectorySyncer();
    const journals = new JournalStore(stateDir, syncer);
    await journals.prepare();
    const guard = new PathGuard(realRoot, { allowGitDir: options.allowGitDir });
    const context: WorkspaceContext = { root: realRoot, stateDir, guard, syncer, journals, hooks: options.hooks ?? {} };
    return new Workspace(context, await recoverAbandonedJournals(context));
  }

  /** Guards every path, then reads each: file bytes, missing, or directory. Keys are normalised paths. */
  async snapshot(paths: readonly string[]): Promise<Result<Map<string, FileSnapshot>>> {
    if (this.#closed) return fail(closedError());
    const entries = await readGuardedEntries(this.#context.guard, paths);
    if (!entries.ok) return entries;
    return ok(new Map([...entries.value].map(([path, { entry }]) => [path, toSnapshot(entry)])));
  }

  /** `file/read`: not_found, binary_file, limit_exceeded, path_escape, permission_denied as errors. */
  async read(path: string): Promise<Result<FileRead>> {
    if (this.#closed) return fail(closedError());
    const entries = await readGuardedEntries(this.#context.guard, [path]);
    if (!entries.ok) return entries;
    const [found] = entries.value;
    if (found === undefined) return fail(engineError('not_found', `${path} does not exist.`, { path }));
    const [relative, { entry }] = found;
    if (entry.kind !== 'file') {
      const why = entry.kind === 'directory' ? 'is a directory' : 'does not exist';
      return fail(engineError('not_found', `${relative} ${why}.`, { path: relative }));
    }
    const content = decodeUtf8Text(entry.bytes);
    if (content === undefined) return fail(engineError('binary_file', `${relative} is binary or not UTF-8 text.`, { path: relative }));
    const sha256 = sha256Hex(entry.bytes);
    return ok({ path: relative, content, sha256, version: versionFromSha256(sha256) });
  }

  /** Commits a plan made from `snapshots` (see `CommitOptions`). */
  async commit(plan: Plan, options: CommitOptions): Promise<CommitOutcome> {
    if (this.#closed) return { status: 'rejected', error: closedError() };
    const running = commitPlan(this.#context, plan, options).catch((error: unknown): CommitOutcome => {
      // commitPlan returns failures as data; this only catches a bug, so the caller still gets an outcome.
      const message = `The commit failed unexpectedly: ${error instanceof Error ? error.message : String(error)}.`;
      return { status: 'rejected', error: engineError('io_error', message) };
    });
    this.#inFlight.add(running);
    try {
      return await running;
    } finally {
      this.#inFlight.delete(running);
    }
  }

  /** Refuses new work and waits for commits in flight, so none is left half-done. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight]);
    await this.#context.syncer.close();
  }
}

function closedError(): EngineError {
  return engineError('io_error', 'The workspace is closed.');
}

async function resolveRoot(root: string): Promise<string> {
  let real: string;
  try {
    real = await realpath(path.resolve(root));
  } catch {
    throw new WorkspaceRootError(`The workspace root ${root} does not exist.`);
  }
  if (!(await stat(real)).isDirectory()) throw new WorkspaceRootError(`The workspace root ${root} is not a directory.`);
  return real;
}

async function prepareStateDir(root: string, requested: string | undefined): Promise<string> {
  const wanted = requested === undefined ? defaultStateDir(root) : path.resolve(requested);
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

function defaultStateDir(root: string): string {
  return path.join(os.tmpdir(), 'patchd-state', sha256Hex(Buffer.from(root)).slice(0, 16));
}
