/**
 * Filesystems that refuse for real: a small tmpfs mounted on a directory and filled, either
 * every inode (no file or directory can be made: ENOSPC) or every block (no byte can be
 * written: ENOSPC), or mounted read-only (EROFS). Mounting needs root on Linux, as on CI;
 * elsewhere the tests that need it say why they skip.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createTempTree } from './tempTree.ts';

export interface FullFilesystem extends Disposable {
  /** Removes the fillers: room for a few files again. */
  makeRoom(): void;
  /** Fills it up again. */
  fill(): void;
}

/** `mount -t tmpfs -o OPTIONS tmpfs DIRECTORY` (the directory made first); the error output, or undefined once mounted. */
function mountTmpfs(directory: string, options: string): string | undefined {
  mkdirSync(directory, { recursive: true });
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', directory], { encoding: 'utf8' });
  return mounted.status === 0 ? undefined : mounted.stderr.trim() || mounted.error?.message || `mount exited ${mounted.status}`;
}

function mountOrThrow(directory: string, options: string): void {
  const failure = mountTmpfs(directory, options);
  if (failure !== undefined) throw new Error(`mount failed: ${failure}`);
}

const unmount = (directory: string) => void spawnSync('umount', ['-l', directory]);

/** Mounts a tmpfs on `directory` (created if missing) and fills its `inodes` or its `blocks`; unmounted on dispose. */
export function mountFullFilesystem(directory: string, what: 'inodes' | 'blocks'): FullFilesystem {
  mountOrThrow(directory, what === 'inodes' ? 'size=1m,nr_inodes=8' : 'size=256k');
  const fillers: string[] = [];
  const fill = () => {
    try {
      if (what === 'inodes') for (;;) writeFileSync(addFiller(), '');
      const fd = openSync(addFiller(), 'w');
      try {
        for (const block = Buffer.alloc(4096); ; ) writeSync(fd, block);
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    }
  };
  const addFiller = () => {
    const filler = join(directory, `.filler-${fillers.length}`);
    fillers.push(filler);
    return filler;
  };
  fill();
  return {
    makeRoom: () => fillers.splice(0).forEach((filler) => rmSync(filler, { force: true })),
    fill,
    [Symbol.dispose]: () => unmount(directory),
  };
}

/** A tmpfs on `directory` holding `files` (name → text), then remounted read-only; unmounted on dispose. */
export function mountReadOnlyFilesystem(directory: string, files: Readonly<Record<string, string>>): Disposable {
  mountOrThrow(directory, 'size=256k');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(directory, name), text);
  mountOrThrow(directory, 'remount,ro');
  return { [Symbol.dispose]: () => unmount(directory) };
}

/** Why a tmpfs cannot be mounted here, or false when it can. */
export function tmpfsSkip(): string | false {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'mounting a tmpfs needs root on Linux';
  using tree = createTempTree();
  const probe = join(tree.outside, 'probe');
  const failure = mountTmpfs(probe, 'size=64k');
  if (failure !== undefined) return `this user may not mount a tmpfs here (${failure})`;
  unmount(probe);
  return false;
}
