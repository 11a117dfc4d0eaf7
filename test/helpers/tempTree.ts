/**
 * A scratch directory for end-to-end tests: `root` (the workspace) beside `outside` (files a
 * patch must never reach), with a fingerprint of everything under both to prove that a
 * rejected or escaping patch changed nothing.
 */
import { createHash } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';

export type TreeFiles = Readonly<Record<string, string | Uint8Array>>;

export interface TempTree extends Disposable {
  /** Parent of `root` and `outside`. */
  readonly base: string;
  /** The workspace root (a realpath). */
  readonly root: string;
  /** A sibling directory outside the workspace. */
  readonly outside: string;
  /** Writes a file under `root`, creating parents. */
  write(path: string, content: string | Uint8Array): void;
  /** A file's text under `root`, or undefined when missing. */
  text(path: string): string | undefined;
  /** Every entry under `base` (type, path, sha256 or link target), sorted: equal strings mean identical trees. */
  fingerprint(): string;
}

export function createTempTree(files: TreeFiles = {}, outsideFiles: TreeFiles = {}): TempTree {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'patchd-e2e-')));
  const root = join(base, 'ws');
  const outside = join(base, 'outside');
  writeFiles(root, files);
  writeFiles(outside, outsideFiles);
  return {
    base,
    root,
    outside,
    write: (path, content) => writeFiles(root, { [path]: content }),
    text: (path) => readText(join(root, path)),
    fingerprint: () => fingerprint(base),
    [Symbol.dispose]: () => rmSync(base, { recursive: true, force: true }),
  };
}

export function writeFiles(dir: string, files: TreeFiles): void {
  mkdirSync(dir, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function fingerprint(base: string): string {
  const lines: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const full = join(dir, name);
      const path = relative(base, full).split(sep).join('/');
      const stat = lstatSync(full);
      if (stat.isSymbolicLink()) lines.push(`link ${path} -> ${readlinkSync(full)}`);
      else if (stat.isDirectory()) {
        lines.push(`dir  ${path}`);
        walk(full);
      } else lines.push(`file ${path} ${createHash('sha256').update(readFileSync(full)).digest('hex')}`);
    }
  };
  walk(base);
  return lines.join('\n');
}

export function sha256(content: string | Uint8Array): string {
  return createHash('sha256').update(content).digest('hex');
}
