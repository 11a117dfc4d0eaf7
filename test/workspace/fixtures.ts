/** Shared helpers for workspace tests: temp trees, hand-built plans, byte-exact tree listings. */
import { lstat, mkdir, mkdtemp, readFile, readdir, readlink, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Plan, PlannedFile } from '../../daemon/engine/types.ts';
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
export async function snapshotAndCommit(workspace: Workspace, plan: Plan, atomic = true) {
  const snapshots = await workspace.snapshot(pathsOf(plan));
  if (!snapshots.ok) throw new Error(`snapshot failed: ${snapshots.error.code} ${snapshots.error.message}`);
  return workspace.commit(plan, { atomic, snapshots: snapshots.value });
}

/** Disk calls on which every undo record write fails partway: its first bytes land under the record's own name, then EIO. */
export function diskRefusingRecords(): DiskCalls {
  const records = new Set<number>();
  return {
    ...nodeDiskCalls,
    open: async (file, flags, mode) => {
      const handle = await nodeDiskCalls.open(file, flags, mode);
      if (file.endsWith('.record')) records.add(handle.fd);
      return handle;
    },
    writev: async (fd, chunks) => {
      if (!records.delete(fd)) return nodeDiskCalls.writev(fd, chunks);
      await nodeDiskCalls.writev(fd, [Buffer.concat(chunks).subarray(0, 10)]);
      throw Object.assign(new Error('EIO: i/o error'), { code: 'EIO' });
    },
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
