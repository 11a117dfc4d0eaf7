/**
 * `patchd apply` against real `git apply`, differentially (README, The CLI: "the habits of
 * `git apply` and GNU `patch` work"). Each case is a small tree (files in subdirectories — some
 * named `a` and `b`, some with a space or a non-ASCII name —, lines from a small alphabet so
 * context repeats, CRLF files, files without a final newline, empty files), a random change made
 * with real files (edits, adds, deletes, renames) and the patch real `git diff` makes of it
 * (`-U0`..`-U5`, `--no-prefix`, `-M` or `--no-renames`; now and then `--inter-hunk-context`, `-W`
 * or another diff algorithm). Both tools then run with the same options on copies of one tree:
 * - forward on the old tree and `-R` on the new one: both succeed and write the same bytes, the
 *   intended tree (`--check` / `--dry-run`: nothing written);
 * - forward on the new tree and `-R` on the old one (mostly refused): wherever git applies,
 *   patchd writes the same bytes or refuses, as ambiguous (DESIGN, Matching) or as already
 *   applied (the tree is what the patch makes: git found its context again and applied it twice);
 *   where git refuses and patchd applies, only through a tolerance tier its receipt names;
 * - forward on the old tree with lines added to the files it changes (above, below, between
 *   hunks): patchd writes the intended change a few lines lower or refuses; where git applies,
 *   patchd refuses only as ambiguous, and applies elsewhere only where git did the same.
 * Whatever patchd refuses, it changes nothing. Options: plain, `--check`, `--dry-run` (against
 * `git apply --check`), `-R`, `-p0` for `--no-prefix` patches, `-p1` or none otherwise, the patch
 * from a file or from stdin. A `-U0` patch is given to git with `--unidiff-zero`, the one git
 * option that is not patchd's: git refuses context-free hunks by policy, patchd takes them.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { BIN } from '../helpers/cli.ts';

const RUNS = Number(process.env.PATCHD_TEST_RUNS ?? 20);

/** Path → text (bytes as UTF-8). */
type Tree = ReadonlyMap<string, string>;

const NAMES = ['f.txt', 'g.txt', 'a/x.txt', 'b/y.txt', 'src/a/z.txt', 'a/b/w.txt', 'sub dir/s p.txt', 'é.txt'] as const;
const NEW_NAMES = [...NAMES, 'new/dir/r.txt', 'b/moved.txt', 'h.txt'] as const;
const LINE = fc.constantFrom('a', 'b', 'c', 'a', 'x', 'x ', '  x', '', '}', 'é');

interface FileSpec {
  readonly lines: readonly string[];
  readonly crlf: boolean;
  readonly finalNewline: boolean;
}

const fileSpec: fc.Arbitrary<FileSpec> = fc.record({
  lines: fc.oneof({ weight: 1, arbitrary: fc.constant([]) }, { weight: 9, arbitrary: fc.array(LINE, { minLength: 1, maxLength: 10 }) }),
  crlf: fc.boolean(),
  finalNewline: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
});

function textOf(spec: FileSpec): string {
  const eol = spec.crlf ? '\r\n' : '\n';
  if (spec.lines.length === 0) return '';
  return spec.lines.join(eol) + (spec.finalNewline ? eol : '');
}

interface Edit {
  readonly at: number;
  readonly remove: number;
  readonly insert: readonly string[];
}

type Op =
  | { readonly kind: 'modify'; readonly target: number; readonly edits: readonly Edit[]; readonly toggleFinalNewline: boolean }
  | { readonly kind: 'add'; readonly name: number; readonly file: FileSpec }
  | { readonly kind: 'delete'; readonly target: number }
  | { readonly kind: 'rename'; readonly target: number; readonly name: number; readonly edits: readonly Edit[] };

const edit: fc.Arbitrary<Edit> = fc.record({ at: fc.nat(), remove: fc.nat({ max: 3 }), insert: fc.array(LINE, { maxLength: 3 }) });

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('modify' as const), target: fc.nat(), edits: fc.array(edit, { minLength: 1, maxLength: 3 }), toggleFinalNewline: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('add' as const), name: fc.nat(), file: fileSpec }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), target: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('rename' as const), target: fc.nat(), name: fc.nat(), edits: fc.array(edit, { maxLength: 1 }) }) },
);

type Mode = 'apply' | 'check' | 'dry-run';
/** `drifted`: forward on the old tree after lines were added to the files it changes (`Drift`). */
type Kind = 'forward' | 'reverse' | 'again' | 'reverse-old' | 'drifted';

interface Scenario {
  /** forward on the old tree, -R on the new one (intended); forward on the new, -R on the old (mostly refused). */
  readonly kind: Kind;
  readonly mode: Mode;
  readonly stdin: boolean;
  /** For a prefixed patch: give `-p1` explicitly (git's default) or no `-p` at all. */
  readonly explicitP1: boolean;
}

const scenario = (kinds: readonly Kind[]): fc.Arbitrary<Scenario> => fc.record({
  kind: fc.constantFrom(...kinds),
  mode: fc.oneof({ weight: 3, arbitrary: fc.constant<Mode>('apply') }, { weight: 1, arbitrary: fc.constantFrom<Mode>('check', 'dry-run') }),
  stdin: fc.boolean(),
  explicitP1: fc.boolean(),
});

interface Case {
  readonly files: readonly (readonly [string, FileSpec])[];
  readonly ops: readonly Op[];
  readonly context: number;
  readonly noPrefix: boolean;
  readonly renames: boolean;
  readonly scenarios: readonly Scenario[];
  /** Lines put before and after the content of each file the patch changes in place, for `drifted`. */
  readonly drift: Drift;
  /** One more `git diff` option, which changes what context a hunk shows or how changes are grouped. */
  readonly diffOption: (typeof DIFF_OPTIONS)[number] | undefined;
}

const DIFF_OPTIONS = ['--inter-hunk-context=2', '-W', '--diff-algorithm=patience', '--diff-algorithm=histogram', '--minimal'] as const;

interface Drift {
  readonly above: number;
  readonly below: number;
  /** Lines put between hunks: each picks one of the places no hunk covers (with context only). */
  readonly between: readonly number[];
}

const caseOf: fc.Arbitrary<Case> = fc.record({
  files: fc.uniqueArray(fc.tuple(fc.constantFrom(...NAMES), fileSpec), { minLength: 1, maxLength: 4, selector: ([name]) => name }),
  ops: fc.array(op, { minLength: 1, maxLength: 3 }),
  context: fc.integer({ min: 0, max: 5 }),
  diffOption: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...DIFF_OPTIONS) }),
  noPrefix: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  renames: fc.oneof({ weight: 2, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  // One or two runs of each tool per case: a run of patchd costs about a second of CPU.
  scenarios: fc.tuple(scenario(['forward', 'reverse']), fc.option(scenario(['forward', 'reverse', 'again', 'reverse-old', 'drifted']), { nil: undefined }))
    .map(([first, second]) => (second === undefined ? [first] : [first, second])),
  drift: fc.record({ above: fc.integer({ min: 0, max: 3 }), below: fc.integer({ min: 0, max: 3 }), between: fc.array(fc.nat(), { maxLength: 2 }) })
    .filter(({ above, below, between }) => above + below + between.length > 0),
});

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
function changed(before: Tree, ops: readonly Op[]): Tree {
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
interface HunkRange {
  readonly oldStart: number;
  readonly oldCount: number;
  readonly newCount: number;
}

function hunkRanges(diff: string): HunkRange[] {
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
function drifted(before: Tree, after: Tree, drift: Drift, ranges: (path: string) => readonly HunkRange[]): { start: Tree; intended: Tree } {
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

function git(cwd: string, args: readonly string[], input?: string): { code: number | null; stdout: string; stderr: string } {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: cwd, LC_ALL: 'C' };
  const config = ['-c', 'core.autocrlf=false', '-c', 'core.safecrlf=false', '-c', 'user.name=patchd', '-c', 'user.email=patchd@example.invalid'];
  const result = spawnSync('git', [...config, ...args], { cwd, env, input: input ?? '', encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function gitOk(cwd: string, args: readonly string[]): string {
  const run = git(cwd, args);
  assert.equal(run.code, 0, `git ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

function writeTree(dir: string, tree: Tree): void {
  mkdirSync(dir, { recursive: true });
  for (const [path, text] of tree) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

/** Every directory and file under `dir` but `.git`: `d path` or `f path sha256`, sorted. */
function listing(dir: string): string[] {
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

function listingOf(tree: Tree): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'patchd-clidiff-model-'));
  try {
    writeTree(dir, tree);
    return listing(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `patchd ARGS` as a user runs it (bin/patchd.js, pipes), without blocking: a case's runs go side by side. */
function patchdAsync(args: readonly string[], cwd: string, input: string): Promise<Run> {
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

/** Differences seen that the rules allow (documented tolerance or refusal), for the report. */
const notes: string[] = [];
/** How often each kind of run ended how, and what the patches held. */
const tally = new Map<string, number>();
const count = (key: string) => tally.set(key, (tally.get(key) ?? 0) + 1);

interface Prepared {
  readonly before: Tree;
  readonly after: Tree;
  readonly patch: string;
  /** Only for a case with a `drifted` scenario. */
  readonly drifted?: { readonly start: Tree; readonly intended: Tree } | undefined;
}

function prepare(base: string, testCase: Case): Prepared {
  const before: Tree = new Map(testCase.files.map(([name, spec]) => [name, textOf(spec)]));
  const after = changed(before, testCase.ops);
  const repo = join(base, 'repo');
  gitOk(base, ['init', '-q', repo]);
  writeTree(repo, before);
  gitOk(repo, ['add', '-A']);
  gitOk(repo, ['commit', '-q', '-m', 'before']);
  for (const path of before.keys()) rmSync(join(repo, path));
  writeTree(repo, after);
  gitOk(repo, ['add', '-A']);
  const diffArgs = [`-U${testCase.context}`, ...(testCase.diffOption === undefined ? [] : [testCase.diffOption])];
  const patch = gitOk(repo, ['diff', '--cached', '--no-color', '--no-ext-diff', ...diffArgs, testCase.renames ? '-M' : '--no-renames', ...(testCase.noPrefix ? ['--no-prefix'] : [])]);
  const ranges = (path: string) => (testCase.context === 0 ? [] : hunkRanges(gitOk(repo, ['diff', '--cached', '--no-color', '--no-ext-diff', ...diffArgs, '--no-renames', '--', path])));
  return { before, after, patch, drifted: testCase.scenarios.some((sc) => sc.kind === 'drifted') ? drifted(before, after, testCase.drift, ranges) : undefined };
}

const CODE = /^ {2}([a-z_]+)(?: \([^\n]*\))?: /m;

async function checkScenario(base: string, index: number, testCase: Case, prepared: Prepared, sc: Scenario): Promise<() => void> {
  const { before, after, patch } = prepared;
  const reverse = sc.kind === 'reverse' || sc.kind === 'reverse-old';
  const start = sc.kind === 'drifted' ? prepared.drifted!.start : sc.kind === 'forward' || sc.kind === 'reverse-old' ? before : after;
  const intended = sc.kind === 'forward' ? after : sc.kind === 'reverse' ? before : undefined;
  const dir = join(base, `s${index}`);
  const gitDir = join(dir, 'git');
  const pdDir = join(dir, 'patchd');
  writeTree(gitDir, start);
  writeTree(pdDir, start);
  const patchFile = join(dir, 'change.diff');
  writeFileSync(patchFile, patch);
  const strip = testCase.noPrefix ? ['-p0'] : sc.explicitP1 ? ['-p1'] : [];
  const common = [...(reverse ? ['-R'] : []), ...strip];
  const source = sc.stdin ? [] : [patchFile];
  const gitArgs = ['apply', ...common, ...(sc.mode === 'apply' ? [] : ['--check']), ...(testCase.context === 0 ? ['--unidiff-zero'] : []), ...(sc.stdin ? ['-'] : source)];
  const pdArgs = ['apply', ...common, ...(sc.mode === 'apply' ? [] : [`--${sc.mode}`]), ...(sc.stdin ? (index % 2 === 0 ? ['-'] : []) : source)];
  const gitRun = git(gitDir, gitArgs, sc.stdin ? patch : undefined);
  const pdRun = await patchdAsync(pdArgs, pdDir, sc.stdin ? patch : '');
  const startListing = listingOf(start);
  return () => {
    const outcome = `${sc.kind}: git ${gitRun.code === 0 ? 'ok' : 'refused'}, patchd ${pdRun.code === 0 ? 'ok' : 'refused'}`;
    count(outcome);
    const what = `scenario ${index}: ${sc.kind}, git ${gitArgs.join(' ')} → ${gitRun.code}; patchd ${pdArgs.join(' ')} → ${pdRun.code}`;
    const detail = `${what}\npatchd said: ${pdRun.stdout}${pdRun.stderr}\ngit said: ${gitRun.stderr}\npatch: ${JSON.stringify(patch)}`;
    assert.ok(pdRun.code === 0 || pdRun.code === 1, `patchd exited ${pdRun.code}\n${detail}`);
    const gitOk = gitRun.code === 0;
    const pdOk = pdRun.code === 0;
    const gitTree = listing(gitDir);
    const pdTree = listing(pdDir);
    const writes = sc.mode === 'apply';
    if (!pdOk) assert.deepEqual(pdTree, startListing, `patchd refused but changed the tree\n${detail}`);
    if (!writes) assert.deepEqual(pdTree, startListing, `patchd --${sc.mode} changed the tree\n${detail}`);
    const code = CODE.exec(pdRun.stdout + pdRun.stderr)?.[1];
    // A -U0 patch on a tree it was not made from: context-free hunks go wherever the numbers say,
    // and `git apply --unidiff-zero` then also takes a mid-file `\ No newline` literally (it
    // joins two lines), so git is no oracle there; what patchd does is only noted.
    const oracle = testCase.context > 0;
    if (sc.kind === 'drifted') {
      // Refusing may be right (a hunk held to a file's edge, context that now matches twice);
      // applying anywhere but where the patch was made for is not, unless git chose that place too.
      const wanted = listingOf(prepared.drifted!.intended);
      if (pdOk && writes && pdTree.join() !== wanted.join()) {
        if (oracle) assert.ok(gitOk && pdTree.join() === gitTree.join(), `patchd applied a drifted patch elsewhere than intended${gitOk ? ', and elsewhere than git' : ''}\n${detail}`);
        notes.push(`drifted: patchd applied elsewhere than intended${gitOk && pdTree.join() === gitTree.join() ? ', as git did' : ''} (${what})`);
      }
      if (gitOk && !pdOk && oracle) assert.equal(code, 'ambiguous_context', `patchd refused (${code}) a drifted patch git applies\n${detail}`);
      if (gitOk !== pdOk) notes.push(`drifted: git ${gitOk ? 'applied' : 'refused'}, patchd ${pdOk ? 'applied' : `refused (${code})`} (${what})`);
      return;
    }
    if (intended !== undefined) {
      const expected = writes ? listingOf(intended) : startListing;
      if (!gitOk) notes.push(`git refused an intended apply (${what}): ${gitRun.stderr.trim()}`);
      // At -U0 a `\ No newline` marker can lead git astray: `-R` of `@@ -3,0 +4 @@` adding a last
      // line without newline also drops the newline of line 3. patchd must still write the intended tree.
      else if (testCase.context === 0 && patch.includes('\\ No newline') && gitTree.join() !== expected.join()) notes.push(`git wrote another tree than intended (${what})`);
      else assert.deepEqual(gitTree, expected, `git apply did not give the intended tree\n${detail}`);
      assert.ok(pdOk, `patchd refused where git applies (${code})\n${detail}`);
      assert.deepEqual(pdTree, expected, `patchd's tree is not the intended one${gitOk ? ' (git\'s is)' : ''}\n${detail}`);
      return;
    }
    if (gitOk) {
      if (!pdOk && code === 'ambiguous_context') return void notes.push(`ambiguous for patchd, git applied (${what})`);
      // The tree already is what the patch makes: git found its context again and applied it twice.
      if (!pdOk && code === 'already_applied') return void notes.push(`already applied for patchd, git applied again (${what})`);
      if (!oracle) {
        if (!pdOk || pdTree.join() !== gitTree.join()) notes.push(`-U0 on a tree the patch was not made from, ${pdOk ? 'another tree' : `refused (${code})`} than git (${what})`);
        return;
      }
      assert.ok(pdOk, `patchd refused (${code}) where git applies\n${detail}`);
      assert.deepEqual(pdTree, gitTree, `patchd and git wrote different trees\n${detail}`);
      return;
    }
    if (pdOk) {
      const tolerant = /\[hunk \d+: [a-z_]+/.test(pdRun.stdout);
      notes.push(`patchd applied where git refused (${what})${tolerant ? ' through tolerance' : ''}: ${pdRun.stdout.trim().split('\n').join(' | ')}`);
      // Applied as a no-op (a final newline already as the patch leaves it) writes nothing wrong.
      if (sc.mode === 'apply' && oracle && pdTree.join() !== startListing.join()) assert.ok(tolerant, `patchd applied, at tier exact, a patch git refuses\n${detail}`);
    }
  };
}

test('patchd apply against git apply: same success, same bytes, on random trees, changes and git diffs', async (t) => {
  const seed = Number(process.env.PATCHD_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
  let cases = 0;
  try {
    await fc.assert(fc.asyncProperty(caseOf, async (testCase) => {
      const base = mkdtempSync(join(tmpdir(), 'patchd-clidiff-'));
      try {
        const prepared = prepare(base, testCase);
        if (prepared.patch === '') return; // the ops cancelled out
        cases++;
        const { patch } = prepared;
        for (const [feature, present] of [['rename', /^rename from /m.test(patch)], ['new file', /^new file mode/m.test(patch)], ['deleted file', /^deleted file mode/m.test(patch)],
          ['CRLF', patch.includes('\r\n')], ['no newline', patch.includes('\\ No newline')], ['quoted path', /^diff --git "/m.test(patch)],
          ['drift between hunks', [...prepared.drifted?.start.values() ?? []].some((text) => text.includes('drift between'))], [`-U${testCase.context}`, true], [testCase.diffOption ?? '', testCase.diffOption !== undefined]] as const) if (present) count(feature);
        const checks = await Promise.all(testCase.scenarios.map((sc, index) => checkScenario(base, index, testCase, prepared, sc)));
        for (const check of checks) check();
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    }), { seed, numRuns: RUNS, endOnFailure: process.env.PATCHD_TEST_SHRINK === undefined });
  } catch (error) {
    const cause = (error as Error).cause;
    throw new Error(`PATCHD_TEST_SEED=${seed}\n${(error as Error).message}${cause instanceof Error ? `\n${cause.message}` : ''}`, { cause: error });
  } finally {
    t.diagnostic(`seed ${seed}: ${[...tally].sort().map(([key, n]) => `${key} ×${n}`).join('; ')}`);
    for (const note of notes) t.diagnostic(note);
  }
  assert.ok(cases >= RUNS * 0.7, `only ${cases} of ${RUNS} cases changed anything`);
});
