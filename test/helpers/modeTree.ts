/** Trees with executable bits: write a corpus tree keeping its files' modes, and read one back as `path → mode:sha256`. */
import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { writeFiles } from './tempTree.ts';

/** Replaces everything under `root` with `files`, giving each the executable bit its file under `sourceDir` has. */
export function resetTreeWithModes(root: string, files: ReadonlyMap<string, Uint8Array>, sourceDir: string): void {
  for (const name of readdirSync(root)) rmSync(join(root, name), { recursive: true, force: true });
  writeFiles(root, Object.fromEntries(files));
  for (const path of files.keys()) {
    const mode = statSync(join(sourceDir, path), { throwIfNoEntry: false })?.mode ?? 0o644;
    chmodSync(join(root, path), (mode & 0o100) === 0 ? 0o644 : 0o755);
  }
}

/** Every file under `dir` as `path → "x|-" + sha256`, and every directory as `path → "dir"`: equal maps mean equal trees, executable bits included. */
export function treeWithModes(dir: string): Record<string, string> {
  const tree: Record<string, string> = {};
  const walk = (current: string): void => {
    for (const name of readdirSync(current).sort()) {
      const full = join(current, name);
      const path = relative(dir, full).split(sep).join('/');
      const stat = lstatSync(full);
      if (stat.isDirectory()) {
        tree[path] = 'dir';
        walk(full);
      } else {
        tree[path] = `${(stat.mode & 0o100) === 0 ? '-' : 'x'} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`;
      }
    }
  };
  walk(dir);
  return tree;
}
