/** Shared helpers for workspace tests: temp trees, hand-built plans, byte-exact tree listings. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lstatSync } from 'node:fs';
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plan, PlannedFile } from '../../daemon/engine/types.ts';
import { framesOf } from '../../daemon/workspace/logFrames.ts';
import { nodeDiskCalls, type DiskCalls } from '../../daemon/workspace/diskCalls.ts';
import { Workspace, type WorkspaceOptions } from '../../daemon/workspace/workspace.ts';

export const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

export interface Sandbox {
  /** The workspace root. */
  readonly root: string;
  /** A directory beside the root that nothing may touch. */
  readonly outside: string;
  /** The state dir given to the workspace. */
  readonly state: string;
  open(options?: WorkspaceOptions): Promise<Workspace>;
}

/** Runs `body` with a fresh root / outside / state trio under os.tmpdir(), removed afterwards. */
export async function withSandbox(files: Record<string, string>, body: (sandbox: Sandbox) => Promise<void>): Promise<void> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'patchd-ws-test-'));
  const sandbox: Sandbox = {
    root: path.join(base, 'root'),
    outside: path.join(base, 'outside'),
    state: path.join(base, 'state'),
    open: (options = {}) => Workspace.open(sandbox.root, { stateDir: sandbox.state, ...options }),
  };
  try {
    await mkdir(sandbox.root);
    await mkdir(sandbox.outside);
    await writeFile(path.join(sandbox.outside, 'secret.txt'), 'outside bytes\n');
    await writeTree(sandbox.root, files);
    await body(sandbox);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
}

/** Writes `{ 'a/b.txt': 'text' }`; a key ending in `/` makes an empty directory. */
export async function writeTree(root: string, files: Record<string, string>): Promise<void> {
  for (const [relative, content] of Object.entries(files)) {
    const absolute = path.join(root, relative);
    if (relative.endsWith('/')) {
      await mkdir(absolute, { recursive: true });
      continue;
    }
    await mkdir(path.dirname(absolute), { recursive: true });
    await writeFile(absolute, content);
  }
}

/** Every entry under `dir`, byte-exact: `{ 'a.txt': 'file:<content>', 'd': 'dir', 'l': 'link:<target>' }`. */
export async function listTree(dir: string, prefix = ''): Promise<Record<string, string>> {
  const listing: Record<string, string> = {};
  for (const name of (await readdir(dir)).sort()) {
    const absolute = path.join(dir, name);
    const relative = prefix + name;
    const stats = await lstat(absolute);
    if (stats.isSymbolicLink()) listing[relative] = `link:${await readlink(absolute)}`;
    else if (stats.isDirectory()) Object.assign(listing, { [relative]: 'dir' }, await listTree(absolute, `${relative}/`));
    else listing[relative] = `file:${(await readFile(absolute)).toString('latin1')}`;
  }
  return listing;
}

/** Mode (with setgid and sticky bits), uid and gid of each of `paths` under `root`; undefined where nothing is. */
export function ownersOf(root: string, paths: readonly string[]): Record<string, { mode: number; uid: number; gid: number } | undefined> {
  return Object.fromEntries(paths.map((relative) => {
    const stats = existsSync(path.join(root, relative)) ? lstatSync(path.join(root, relative)) : undefined;
    return [relative, stats === undefined ? undefined : { mode: stats.mode & 0o7777, uid: stats.uid, gid: stats.gid }];
  }));
}

/**
 * Gives directories under `root` modes of their own (`modes`, by path) and, when the tests run as
 * root, `otherOwned` another owner: what every way of taking a commit back must bring back.
 * Returns their owners (`ownersOf`).
 */
export function ownDirectoryModes(root: string, modes: Record<string, number>, otherOwned: string): ReturnType<typeof ownersOf> {
  for (const [relative, mode] of Object.entries(modes)) chmodSync(path.join(root, relative), mode);
  if (process.getuid?.() === 0) chownSync(path.join(root, otherOwned), 1234, 5678);
  return ownersOf(root, Object.keys(modes));
}

export function planOf(...files: PlannedFile[]): Plan {
  return { dialect: 'unified', files, diagnostics: [], ignoredMetadata: [] };
}

const planned = (file: Omit<PlannedFile, 'hunks' | 'diff' | 'diagnostics'>): PlannedFile => ({ hunks: [], diff: '', diagnostics: [], ...file });

export const addFile = (path: string, text: string): PlannedFile => planned({ op: 'add', path, after: encode(text) });
export const updateFile = (path: string, text: string): PlannedFile => planned({ op: 'update', path, after: encode(text) });
export const deleteFile = (path: string): PlannedFile => planned({ op: 'delete', path, after: null });
export const renameFile = (fromPath: string, path: string, text: string): PlannedFile => planned({ op: 'rename', path, fromPath, after: encode(text) });

/** The paths a plan touches, as the engine's `requiredPaths` would name them. */
export function pathsOf(plan: Plan): string[] {
  return plan.files.flatMap((file) => (file.fromPath === undefined ? [file.path] : [file.path, file.fromPath]));
}

/** Snapshots every path the plan touches, then commits it. */
export async function snapshotAndCommit(workspace: Workspace, plan: Plan, atomic = true, undoOf?: string) {
  const snapshots = await workspace.snapshot(pathsOf(plan));
  if (!snapshots.ok) throw new Error(`snapshot failed: ${snapshots.error.code} ${snapshots.error.message}`);
  return workspace.commit(plan, { atomic, snapshots: snapshots.value, undoOf });
}

/**
 * Disk calls on which every undo record write fails partway (its first bytes land under the
 * record's own name, then EIO) — while `refusing()` says so: always, unless given.
 */
export function diskRefusingRecords(refusing: () => boolean = () => true): DiskCalls {
  const records = new Set<number>();
  const refuse = (fd: number, chunks: readonly Uint8Array[]): never => {
    records.delete(fd);
    nodeDiskCalls.writevSync(fd, [Buffer.concat(chunks).subarray(0, 10)]);
    throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
  };
  return {
    ...nodeDiskCalls,
    openSync: (file, flags, mode) => {
      const fd = nodeDiskCalls.openSync(file, flags, mode);
      if (file.endsWith('.record') && flags === 'w' && refusing()) records.add(fd);
      return fd;
    },
    writevSync: (fd, chunks) => (records.has(fd) ? refuse(fd, chunks) : nodeDiskCalls.writevSync(fd, chunks)),
    writev: async (fd, chunks) => (records.has(fd) ? refuse(fd, chunks) : nodeDiskCalls.writev(fd, chunks)),
  };
}

/** The tree and plan the crash tests use: five files, one step per file, two new directories. */
export const CRASH_TREE = { 'two.txt': 'two\n', 'three.txt': 'three\n', 'four.txt': 'four\n', 'keep.txt': 'untouched\n' };
export const CRASH_PLAN = planOf(
  addFile('a/one.txt', '1\n'),
  updateFile('two.txt', '2\n'),
  updateFile('three.txt', '3\n'),
  deleteFile('four.txt'),
  addFile('b/c/five.txt', '5\n'),
);

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const crashChild = fileURLToPath(new URL('./crashChild.ts', import.meta.url));

/** Runs crashChild.ts in its own process on `sandbox`; it SIGKILLs itself at `when` (a rename index, or a point named there), committing the plan `variant` names. */
export function commitAndDie(sandbox: Sandbox, when: number | string, variant = 'five', bootId?: string): void {
  const point = typeof when === 'number' ? `rename:${when}` : when;
  const args = ['--import', 'tsx', crashChild, sandbox.root, sandbox.state, point, variant, ...(bootId === undefined ? [] : [bootId])];
  const child = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(child.signal, 'SIGKILL', child.stderr);
}

/** Type changes for the crash tests (`typeChange.test.ts`): a file replaced by a directory, and a directory by a file, each beside an update. */
export const TYPE_CHANGE_TREES = {
  fileToDirectory: { foo: 'foo\n', 'keep.txt': 'keep\n' },
  directoryToFile: { 'd/e/x': 'x\n', 'd/y': 'y\n', 'keep.txt': 'keep\n' },
};
export const TYPE_CHANGE_PLANS = {
  // Renames: foo to the trash; then (foo and foo/sub made, their temps staged) foo/sub/bar, foo/baz, keep.txt.
  fileToDirectory: planOf(addFile('foo/sub/bar', 'bar\n'), deleteFile('foo'), addFile('foo/baz', 'baz\n'), updateFile('keep.txt', 'kept\n')),
  // Renames: d/e/x and d/y to the trash; then (d/e and d removed) d, keep.txt.
  directoryToFile: planOf(addFile('d', 'd\n'), deleteFile('d/e/x'), deleteFile('d/y'), updateFile('keep.txt', 'kept\n')),
};

/**
 * Disk calls that record, in order, every fsync and fdatasync (by path), log frame written, rename
 * and unlink a workspace makes, and the opening and closing of every undo record written;
 * `failDatasync` picks fdatasyncs that fail.
 */
export function recordingDisk(failDatasync: (file: string) => boolean = () => false): { disk: DiskCalls; calls: string[] } {
  const calls: string[] = [];
  const opened = new Map<number, string>();
  const recordsWritten = new Set<number>();
  const disk: DiskCalls = {
    ...nodeDiskCalls,
    openSync: (file, flags, mode) => {
      const fd = nodeDiskCalls.openSync(file, flags, mode);
      opened.set(fd, file);
      if (file.endsWith('.record') && flags === 'w') {
        recordsWritten.add(fd);
        calls.push(`open ${file}`);
      }
      return fd;
    },
    fsync: async (fd) => { await nodeDiskCalls.fsync(fd); calls.push(`fsync ${opened.get(fd)}`); },
    fdatasync: async (fd) => {
      const file = opened.get(fd)!;
      if (failDatasync(file)) {
        calls.push(`failed fdatasync ${file}`);
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
      }
      await nodeDiskCalls.fdatasync(fd);
      calls.push(`fdatasync ${file}`);
    },
    writevSync: (fd, chunks) => {
      const written = nodeDiskCalls.writevSync(fd, chunks);
      if (opened.get(fd)?.endsWith('.log')) for (const { head } of framesOf(Buffer.concat(chunks).subarray(0, written)).frames) calls.push(`log ${head.kind} ${head.id}`);
      return written;
    },
    closeSync: (fd) => {
      const file = opened.get(fd);
      opened.delete(fd);
      nodeDiskCalls.closeSync(fd);
      if (recordsWritten.delete(fd)) calls.push(`closed ${file}`);
    },
    open: async (file, flags, mode) => {
      const handle = await nodeDiskCalls.open(file, flags, mode);
      calls.push(`open ${file}`);
      return new Proxy(handle, {
        get(target, key) {
          if (key === 'sync') return async () => { await target.sync(); calls.push(`fsync ${file}`); };
          if (key === 'close') return async () => { await target.close(); calls.push(`closed ${file}`); };
          const value: unknown = Reflect.get(target, key);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
    rename: async (from, to) => { await nodeDiskCalls.rename(from, to); calls.push(`rename ${from} ${to}`); },
    renameSync: (from, to) => { nodeDiskCalls.renameSync(from, to); calls.push(`rename ${from} ${to}`); },
    unlink: async (file) => { await nodeDiskCalls.unlink(file); calls.push(`unlink ${file}`); },
  };
  return { disk, calls };
}
