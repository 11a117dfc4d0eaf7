/**
 * Random small trees, changes to them and the runs of `patchd apply` the differential tests
 * (against `git apply`, against GNU `patch`) share: files in subdirectories — some named `a` and
 * `b`, some with a space or a non-ASCII name —, lines from a small alphabet so context repeats,
 * CRLF files, files without a final newline, empty files; edits, adds, deletes, renames; and
 * the same tree with lines added around and between what a patch changes (`drifted`).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TestContext } from 'node:test';
import fc from 'fast-check';
import { BIN } from './cli.ts';

/** Path → text (bytes as UTF-8). */
export type Tree = ReadonlyMap<string, string>;

const NAMES = ['f.txt', 'g.txt', 'a/x.txt', 'b/y.txt', 'src/a/z.txt', 'a/b/w.txt', 'sub dir/s p.txt', 'é.txt'] as const;
const NEW_NAMES = [...NAMES, 'new/dir/r.txt', 'b/moved.txt', 'h.txt'] as const;
const LINE = fc.constantFrom('a', 'b', 'c', 'a', 'x', 'x ', '  x', '', '}', 'é');

export interface FileSpec {
  readonly lines: readonly string[];
  readonly crlf: boolean;
  readonly finalNewline: boolean;
}

export const fileSpec: fc.Arbitrary<FileSpec> = fc.record({
  lines: fc.oneof({ weight: 1, arbitrary: fc.constant([]) }, { weight: 9, arbitrary: fc.array(LINE, { minLength: 1, maxLength: 10 }) }),
  crlf: fc.boolean(),
  finalNewline: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
});

export function textOf(spec: FileSpec): string {
  const eol = spec.crlf ? '\r\n' : '\n';
  if (spec.lines.length === 0) return '';
  return spec.lines.join(eol) + (spec.finalNewline ? eol : '');
}

interface Edit {
  readonly at: number;
  readonly remove: number;
  readonly insert: readonly string[];
}

export type Op =
  | { readonly kind: 'modify'; readonly target: number; readonly edits: readonly Edit[]; readonly toggleFinalNewline: boolean }
  | { readonly kind: 'add'; readonly name: number; readonly file: FileSpec }
  | { readonly kind: 'delete'; readonly target: number }
  | { readonly kind: 'rename'; readonly target: number; readonly name: number; readonly edits: readonly Edit[] };

const edit: fc.Arbitrary<Edit> = fc.record({ at: fc.nat(), remove: fc.nat({ max: 3 }), insert: fc.array(LINE, { maxLength: 3 }) });

export const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('modify' as const), target: fc.nat(), edits: fc.array(edit, { minLength: 1, maxLength: 3 }), toggleFinalNewline: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('add' as const), name: fc.nat(), file: fileSpec }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), target: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('rename' as const), target: fc.nat(), name: fc.nat(), edits: fc.array(edit, { maxLength: 1 }) }) },
);

/** The files of a case's first tree: one to four, each name once. */
export const files: fc.Arbitrary<readonly (readonly [string, FileSpec])[]> =
  fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), fileSpec), { minLength: 1, maxLength: 4, selector: ([name]) => name });

export function treeOf(specs: readonly (readonly [string, FileSpec])[]): Tree {
  return new Map(specs.map(([name, spec]) => [name, textOf(spec)]));
}

export interface Drift {
  readonly above: number;
  readonly below: number;
  /** Lines put between hunks: each picks one of the places no hunk covers (with context only). */
  readonly between: readonly number[];
}

export const drift: fc.Arbitrary<Drift> = fc.record({ above: fc.integer({ min: 0, max: 3 }), below: fc.integer({ min: 0, max: 3 }), between: fc.array(fc.nat(), { maxLength: 2 }) })
  .filter(({ above, below, between }) => above + below + between.length > 0);

function splitLines(text: string, eol: string): { lines: string[]; finalNewline: boolean } {
  if (text === '') return { lines: [], finalNewline: true };
  const finalNewline = text.endsWith(eol);
  const lines = (finalNewline ? text.slice(0, -eol.length) : text).split(eol);
  return { lines, finalNewline };
}

function edited(text: string, edits: readonly Edit[], toggleFinalNewline: boolean): string {
  const crlf = text.includes('\r\n');
  const eol = crlf ? '\r\n' : '\n';
  const { lines, finalNewline } = splitLines(text, eol);
  for (const { at, remove, insert } of edits) lines.splice(at % (lines.length + 1), remove, ...insert);
  return textOf({ lines, crlf, finalNewline: toggleFinalNewline ? !finalNewline : finalNewline });
}

/** The changed tree: each op on the tree the ones before it left (an op with no file to act on is skipped). */
export function changed(before: Tree, ops: readonly Op[]): Tree {
  const tree = new Map(before);
  const free = () => NEW_NAMES.filter((name) => !tree.has(name) && ![...tree.keys()].some((path) => path.startsWith(`${name}/`) || name.startsWith(`${path}/`)));
  for (const change of ops) {
    const paths = [...tree.keys()].sort();
    switch (change.kind) {
      case 'modify': {
        if (paths.length === 0) break;
        const path = paths[change.target % paths.length]!;
        tree.set(path, edited(tree.get(path)!, change.edits, change.toggleFinalNewline));
        break;
      }
      case 'add': {
        const names = free();
        if (names.length > 0) tree.set(names[change.name % names.length]!, textOf(change.file));
        break;
      }
      case 'delete':
        if (paths.length > 0) tree.delete(paths[change.target % paths.length]!);
        break;
      case 'rename': {
        if (paths.length === 0) break;
        const path = paths[change.target % paths.length]!;
        const text = tree.get(path)!;
        tree.delete(path);
        const names = free();
        if (names.length === 0) {
          tree.set(path, text);
          break;
        }
        tree.set(names[change.name % names.length]!, change.edits.length === 0 ? text : edited(text, change.edits, false));
        break;
      }
    }
  }
  return tree;
}

/** A hunk's lines in the old and the new file, 0-based, from its `@@` header. */
export interface HunkRange {
  readonly oldStart: number;
  readonly oldCount: number;
  readonly newCount: number;
}

export function hunkRanges(diff: string): HunkRange[] {
  return [...diff.matchAll(/^@@ -(\d+)(?:,(\d+))? \+\d+(?:,(\d+))? @@/gm)].map((match) => ({
    oldStart: Number(match[1]) - 1,
    oldCount: match[2] === undefined ? 1 : Number(match[2]),
    newCount: match[3] === undefined ? 1 : Number(match[3]),
  }));
}

/**
 * The old tree after someone else's change, and what the patch should make of it: lines no file
 * holds (so no context can match them) put into each file the patch changes in place, above its
 * content, between its hunks (where `ranges` says no hunk reaches; only for a patch with context,
 * whose hunks cover every line they change) and below it when both sides end with a newline. The
 * patch's change is then exactly as intended, a few lines lower.
 */
export function drifted(before: Tree, after: Tree, drift: Drift, ranges: (path: string) => readonly HunkRange[]): { start: Tree; intended: Tree } {
  const start = new Map(before);
  const intended = new Map(after);
  for (const [path, old] of before) {
    const now = after.get(path);
    if (now === undefined || now === old || old === '') continue;
    const eol = old.includes('\r\n') ? '\r\n' : '\n';
    const lines = (count: number, where: string) => Array.from({ length: count }, (_, n) => `drift ${where} ${n}${eol}`).join('');
    const top = lines(drift.above, 'above');
    const bottom = old.endsWith(eol) && (now === '' || now.endsWith(eol)) ? lines(drift.below, 'below') : '';
    const [oldBody, newBody] = driftedBetween(old, now, eol, drift.between, ranges(path));
    start.set(path, top + oldBody + bottom);
    intended.set(path, top + newBody + bottom);
  }
  return { start, intended };
}

/** Both sides of a file with a drift line before an old line no hunk covers and before the new line it is, for each place picked. */
function driftedBetween(old: string, now: string, eol: string, picks: readonly number[], ranges: readonly HunkRange[]): [string, string] {
  const oldSide = splitLines(old, eol);
  const newSide = splitLines(now, eol);
  // Old lines no hunk covers, context included.
  const free = oldSide.lines.map((_, line) => line).filter((line) => ranges.every((range) => line < range.oldStart || line >= range.oldStart + range.oldCount));
  if (ranges.length === 0 || free.length === 0) return [old, now];
  const places = [...new Set(picks.map((pick) => free[pick % free.length]!))].sort((a, b) => b - a);
  for (const [n, line] of places.entries()) {
    const moved = ranges.filter((range) => range.oldStart + range.oldCount <= line).reduce((sum, range) => sum + range.newCount - range.oldCount, 0);
    assert.equal(newSide.lines[line + moved], oldSide.lines[line], 'a line no hunk covers is the same on both sides');
    oldSide.lines.splice(line, 0, `drift between ${n}`);
    newSide.lines.splice(line + moved, 0, `drift between ${n}`);
  }
  const join = ({ lines, finalNewline }: { lines: string[]; finalNewline: boolean }) => (lines.length === 0 ? '' : lines.join(eol) + (finalNewline ? eol : ''));
  return [join(oldSide), join(newSide)];
}

export function writeTree(dir: string, tree: Tree): void {
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of tree) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** Under `dir`: the tree `start` twice, for the peer tool (`peerName`) and for patchd, and the patch in a file beside them. */
export function stageRun(dir: string, start: Tree, patch: string, peerName: string): { peerDir: string; patchdDir: string; patchFile: string } {
  const peerDir = join(dir, peerName);
  const patchdDir = join(dir, 'patchd');
  writeTree(peerDir, start);
  writeTree(patchdDir, start);
  const patchFile = join(dir, 'change.diff');
  writeFileSync(patchFile, patch);
  return { peerDir, patchdDir, patchFile };
}

/** Every directory and file under `dir` but `.git`: `d path` or `f path sha256`, sorted. */
export function listing(dir: string): string[] {
  const entries: string[] = [];
  const walk = (relative: string) => {
    for (const entry of readdirSync(join(dir, relative), { withFileTypes: true })) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (path === '.git') continue;
      if (entry.isDirectory()) {
        entries.push(`d ${path}`);
        walk(path);
      } else {
        entries.push(`f ${path} ${createHash('sha256').update(readFileSync(join(dir, path))).digest('hex').slice(0, 12)}`);
      }
    }
  };
  walk('');
  return entries.sort();
}

export function listingOf(tree: Tree): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'patchd-clidiff-model-'));
  try {
    writeTree(dir, tree);
    return listing(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `patchd ARGS` as a user runs it (bin/patchd.js, pipes), without blocking: a case's runs go side by side. */
export function patchdAsync(args: readonly string[], cwd: string, input: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NO_COLOR;
    delete env.FORCE_COLOR;
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => { stdout += chunk; });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => { stderr += chunk; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

/** What a differential test reports besides failures: how runs ended, and differences the rules allow. */
export interface Report {
  count(key: string): void;
  note(text: string): void;
}

/**
 * Runs `check` on `runs` random cases (`PATCHD_TEST_RUNS`, default 20) from a random seed, or
 * `PATCHD_TEST_SEED`; a failure names its seed, `PATCHD_TEST_SHRINK` shrinks it. Prints the
 * tally and the notes either way.
 */
export async function differential<T>(t: TestContext, arbitrary: fc.Arbitrary<T>, check: (value: T, report: Report) => Promise<void>): Promise<void> {
  const seed = Number(process.env.PATCHD_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const tally = new Map<string, number>();
  const notes: string[] = [];
  const report: Report = { count: (key) => void tally.set(key, (tally.get(key) ?? 0) + 1), note: (text) => void notes.push(text) };
  try {
    await fc.assert(fc.asyncProperty(arbitrary, (value) => check(value, report)), { seed, numRuns: RUNS, endOnFailure: process.env.PATCHD_TEST_SHRINK === undefined });
  } catch (error) {
    const cause = (error as Error).cause;
    throw new Error(`PATCHD_TEST_SEED=${seed}\n${(error as Error).message}${cause instanceof Error ? `\n${cause.message}` : ''}`, { cause: error });
  } finally {
    t.diagnostic(`seed ${seed}: ${[...tally].sort().map(([key, n]) => `${key} ×${n}`).join('; ')}`);
    for (const note of notes) t.diagnostic(note);
  }
}

export const RUNS = Number(process.env.PATCHD_TEST_RUNS ?? 20);
