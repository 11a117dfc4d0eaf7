/**
 * `patchd apply` against real `git apply`, differentially (README, The CLI: "the habits of
 * `git apply` and GNU `patch` work"). Each case is a small tree (files in subdirectories — some
 * named `a` and `b`, some with a space or a non-ASCII name —, lines from a small alphabet so
 * context repeats, CRLF files, files without a final newline, empty files), a random change made
 * with real files (edits, adds, deletes, renames) and the patch real `git diff` makes of it
 * (`-U0`..`-U5`, `--no-prefix`, `-M` or `--no-renames`; now and then `--inter-hunk-context`, `-W`,
 * another diff algorithm or another prefix). Both tools then run with the same options on copies of one tree:
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
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import {
  changed, differential, drift, drifted, files, hunkRanges, listing, listingOf, op, patchdAsync, RUNS, stageRun, treeOf, writeTree,
  type Drift, type FileSpec, type Op, type Report, type Tree,
} from '../helpers/randomTrees.ts';

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

/** `--src-prefix`/`--dst-prefix` pair `c/` or `w/` with git's other prefix, as `diff.mnemonicPrefix` does (a later `--no-prefix` overrides them). */
const DIFF_OPTIONS = ['--inter-hunk-context=2', '-W', '--diff-algorithm=patience', '--diff-algorithm=histogram', '--minimal', '--src-prefix=c/', '--dst-prefix=w/'] as const;

const caseOf: fc.Arbitrary<Case> = fc.record({
  files,
  ops: fc.array(op, { minLength: 1, maxLength: 3 }),
  context: fc.integer({ min: 0, max: 5 }),
  diffOption: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom(...DIFF_OPTIONS) }),
  noPrefix: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  renames: fc.oneof({ weight: 2, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  // One or two runs of each tool per case: a run of patchd costs about a second of CPU.
  scenarios: fc.tuple(scenario(['forward', 'reverse']), fc.option(scenario(['forward', 'reverse', 'again', 'reverse-old', 'drifted']), { nil: undefined }))
    .map(([first, second]) => (second === undefined ? [first] : [first, second])),
  drift,
});

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

interface Prepared {
  readonly before: Tree;
  readonly after: Tree;
  readonly patch: string;
  /** Only for a case with a `drifted` scenario. */
  readonly drifted?: { readonly start: Tree; readonly intended: Tree } | undefined;
}

function prepare(base: string, testCase: Case): Prepared {
  const before = treeOf(testCase.files);
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

async function checkScenario(base: string, index: number, testCase: Case, prepared: Prepared, sc: Scenario, report: Report): Promise<() => void> {
  const { before, after, patch } = prepared;
  const reverse = sc.kind === 'reverse' || sc.kind === 'reverse-old';
  const start = sc.kind === 'drifted' ? prepared.drifted!.start : sc.kind === 'forward' || sc.kind === 'reverse-old' ? before : after;
  const intended = sc.kind === 'forward' ? after : sc.kind === 'reverse' ? before : undefined;
  const { peerDir: gitDir, patchdDir: pdDir, patchFile } = stageRun(join(base, `s${index}`), start, patch, 'git');
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
    report.count(outcome);
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
        report.note(`drifted: patchd applied elsewhere than intended${gitOk && pdTree.join() === gitTree.join() ? ', as git did' : ''} (${what})`);
      }
      if (gitOk && !pdOk && oracle) assert.equal(code, 'ambiguous_context', `patchd refused (${code}) a drifted patch git applies\n${detail}`);
      if (gitOk !== pdOk) report.note(`drifted: git ${gitOk ? 'applied' : 'refused'}, patchd ${pdOk ? 'applied' : `refused (${code})`} (${what})`);
      return;
    }
    if (intended !== undefined) {
      const expected = writes ? listingOf(intended) : startListing;
      if (!gitOk) report.note(`git refused an intended apply (${what}): ${gitRun.stderr.trim()}`);
      // At -U0 a `\ No newline` marker can lead git astray: `-R` of `@@ -3,0 +4 @@` adding a last
      // line without newline also drops the newline of line 3. patchd must still write the intended tree.
      else if (testCase.context === 0 && patch.includes('\\ No newline') && gitTree.join() !== expected.join()) report.note(`git wrote another tree than intended (${what})`);
      else assert.deepEqual(gitTree, expected, `git apply did not give the intended tree\n${detail}`);
      assert.ok(pdOk, `patchd refused where git applies (${code})\n${detail}`);
      assert.deepEqual(pdTree, expected, `patchd's tree is not the intended one${gitOk ? ' (git\'s is)' : ''}\n${detail}`);
      return;
    }
    if (gitOk) {
      if (!pdOk && code === 'ambiguous_context') return void report.note(`ambiguous for patchd, git applied (${what})`);
      // The tree already is what the patch makes: git found its context again and applied it twice.
      if (!pdOk && code === 'already_applied') return void report.note(`already applied for patchd, git applied again (${what})`);
      if (!oracle) {
        if (!pdOk || pdTree.join() !== gitTree.join()) report.note(`-U0 on a tree the patch was not made from, ${pdOk ? 'another tree' : `refused (${code})`} than git (${what})`);
        return;
      }
      assert.ok(pdOk, `patchd refused (${code}) where git applies\n${detail}`);
      assert.deepEqual(pdTree, gitTree, `patchd and git wrote different trees\n${detail}`);
      return;
    }
    if (pdOk) {
      const tolerant = /\[hunk \d+: [a-z_]+/.test(pdRun.stdout);
      report.note(`patchd applied where git refused (${what})${tolerant ? ' through tolerance' : ''}: ${pdRun.stdout.trim().split('\n').join(' | ')}`);
      // Applied as a no-op (a final newline already as the patch leaves it) writes nothing wrong.
      if (sc.mode === 'apply' && oracle && pdTree.join() !== startListing.join()) assert.ok(tolerant, `patchd applied, at tier exact, a patch git refuses\n${detail}`);
    }
  };
}

test('patchd apply against git apply: same success, same bytes, on random trees, changes and git diffs', async (t) => {
  let cases = 0;
  await differential(t, caseOf, async (testCase, report) => {
    const base = mkdtempSync(join(tmpdir(), 'patchd-clidiff-'));
    try {
      const prepared = prepare(base, testCase);
      if (prepared.patch === '') return; // the ops cancelled out
      cases++;
      const { patch } = prepared;
      for (const [feature, present] of [['rename', /^rename from /m.test(patch)], ['new file', /^new file mode/m.test(patch)], ['deleted file', /^deleted file mode/m.test(patch)],
        ['CRLF', patch.includes('\r\n')], ['no newline', patch.includes('\\ No newline')], ['quoted path', /^diff --git "/m.test(patch)],
        ['drift between hunks', [...prepared.drifted?.start.values() ?? []].some((text) => text.includes('drift between'))], [`-U${testCase.context}`, true], [testCase.diffOption ?? '', testCase.diffOption !== undefined]] as const) if (present) report.count(feature);
      const checks = await Promise.all(testCase.scenarios.map((sc, index) => checkScenario(base, index, testCase, prepared, sc, report)));
      for (const check of checks) check();
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
  assert.ok(cases >= RUNS * 0.7, `only ${cases} of ${RUNS} cases changed anything`);
});
