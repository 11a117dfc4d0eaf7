/**
 * Shell heredocs against real bash: patchd reads the body bash would hand the command.
 * - `<<-`: random files (lines that start with tabs among them) get random edits; the heredoc
 *   holds the real `git diff` of each, every line (the delimiter's too) indented with tabs. bash
 *   running `git apply` on it writes exactly the bytes patchd plans: bash strips only the tabs at
 *   the start of a line, so `\t+\tx` adds a line `\tx`. The git work is batched: one
 *   repository, one diff and one bash script per batch.
 * - an unquoted delimiter: patchd takes the body as written, and notes `heredoc_not_expanded`
 *   exactly when bash would have changed it before the command read it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { hunksOf, parsePatch, planPatch, requiredPaths, type FileSnapshot } from '../../daemon/engine/index.ts';
import { createScratch, git, gitRepo, run } from '../helpers/producers.ts';
import { writeFiles } from '../helpers/tempTree.ts';

const BATCH = 30;
const BATCHES = 4;

interface TabCase {
  readonly before: readonly string[];
  readonly after: readonly string[];
  /** Whether the new version ends with a newline (the old one does): a `\ No newline` line otherwise. */
  readonly finalNewline: boolean;
  /** Tabs before each heredoc line, cycled; then before the delimiter. */
  readonly indents: readonly number[];
  readonly delimiterIndent: number;
  readonly opener: (typeof OPENERS)[number];
}

/** Lines that start with a tab (or are one), hold one, start with spaces, or hold what an unquoted heredoc would expand. */
const content = fc.constantFrom('alpha', 'beta', '', '\tindented', '\t\ttwo tabs', '\t', '  spaces', 'x\ty', '$HOME `pwd` \\$');
const OPENERS = ["git apply <<-'EOF'", 'git apply -p1 <<- "PATCH"', "git apply -v <<-'END'"] as const;

const tabCase: fc.Arbitrary<TabCase> = fc.record({
  before: fc.array(content, { minLength: 1, maxLength: 10 }),
  edits: fc.array(fc.record({ at: fc.nat(), remove: fc.nat({ max: 3 }), insert: fc.array(content, { maxLength: 3 }) }), { minLength: 1, maxLength: 2 }),
  finalNewline: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  indents: fc.array(fc.nat({ max: 3 }), { minLength: 1, maxLength: 8 }),
  delimiterIndent: fc.nat({ max: 2 }),
  opener: fc.constantFrom(...OPENERS),
}).map(({ before, edits, ...rest }) => {
  const after = [...before];
  for (const { at, remove, insert } of edits) after.splice(at % (after.length + 1), remove, ...insert);
  return { before, after, ...rest };
});

/** Cases worth pinning: the one reported (a body indented with one tab), and diff lines whose text starts with a tab. */
const EXAMPLES: readonly TabCase[] = [
  { before: ['one', 'two'], after: ['one', 'TWO'], finalNewline: true, indents: [1], delimiterIndent: 1, opener: "git apply <<-'EOF'" },
  { before: ['\tone', '\ttwo', '\t'], after: ['\tone', '\tTWO', '\t'], finalNewline: false, indents: [2, 0, 1], delimiterIndent: 0, opener: 'git apply -p1 <<- "PATCH"' },
];

const fileText = (lines: readonly string[], finalNewline = true) => (lines.length === 0 ? '' : lines.join('\n') + (finalNewline ? '\n' : ''));
const delimiterOf = (opener: string) => /<<-\s*['"]?(\w+)/.exec(opener)![1]!;

/** The command as a model indents it: the opener, the diff and the delimiter, each line after its tabs. */
function heredocText(testCase: TabCase, diff: string): string {
  const body = diff.replace(/\n$/, '').split('\n').map((line, index) => '\t'.repeat(testCase.indents[index % testCase.indents.length]!) + line);
  return `${[testCase.opener, ...body, '\t'.repeat(testCase.delimiterIndent) + delimiterOf(testCase.opener)].join('\n')}\n`;
}

interface BashRun {
  /** Case index → the command patchd reads, or undefined when the edit changed nothing. */
  readonly texts: readonly (string | undefined)[];
  /** Case index → the file after bash ran its command. */
  readonly written: readonly string[];
}

/** One repository for the batch: commit the old versions, diff the new ones, reset, run every case's command in one bash script. */
function runBash(cases: readonly TabCase[], context: number): BashRun {
  using scratch = createScratch();
  const repo = join(scratch.dir, 'repo');
  const name = (index: number) => `f${index}.txt`;
  gitRepo(repo, Object.fromEntries(cases.map((testCase, index) => [name(index), fileText(testCase.before)])));
  writeFiles(repo, Object.fromEntries(cases.map((testCase, index) => [name(index), fileText(testCase.after, testCase.finalNewline)])));
  const texts = cases.map((testCase, index) => {
    const diff = git(repo, 'diff', '--no-color', '--no-ext-diff', `-U${context}`, '--', name(index));
    return diff === '' ? undefined : heredocText(testCase, diff);
  });
  git(repo, 'reset', '-q', '--hard');
  const script = join(scratch.dir, 'apply.sh');
  writeFileSync(script, texts.filter((text) => text !== undefined).join(''));
  run('bash', [script], repo, { ok: [0, 1] });
  return { texts, written: cases.map((_, index) => readFileSync(join(repo, name(index)), 'utf8')) };
}

function plannedBytes(text: string, path: string, before: string): string {
  const parsed = parsePatch({ patch: text, format: 'auto' });
  assert.ok(parsed.ok, `patchd refused: ${!parsed.ok && parsed.error.code} ${!parsed.ok && parsed.error.message}`);
  assert.equal(parsed.value.dialect, 'shell');
  const files = new Map<string, FileSnapshot>(requiredPaths(parsed.value).map((required) => [required, required === path ? { kind: 'file', bytes: new TextEncoder().encode(before) } : { kind: 'missing' }]));
  const plan = planPatch(parsed.value, files);
  assert.ok(plan.ok, `patchd's plan failed: ${!plan.ok && plan.error.code} ${!plan.ok && plan.error.message}`);
  const file = plan.value.files.find((planned) => planned.path === path);
  assert.ok(file?.after, `the plan does not write ${path}`);
  return new TextDecoder().decode(file.after);
}

function checkBatch(cases: readonly TabCase[], context: number, label: string): number {
  const { texts, written } = runBash(cases, context);
  let checked = 0;
  cases.forEach((testCase, index) => {
    const text = texts[index];
    if (text === undefined) return;
    try {
      assert.equal(written[index], fileText(testCase.after, testCase.finalNewline), 'bash and git apply did not write the new version');
      assert.equal(plannedBytes(text, `f${index}.txt`, fileText(testCase.before)), written[index], 'patchd plans other bytes than git apply wrote');
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${label}, -U${context}\ncommand: ${JSON.stringify(text)}`, { cause: error });
    }
    checked++;
  });
  return checked;
}

test('<<- strips the leading tabs of every line as bash does: patchd plans the bytes bash + git apply write', () => {
  assert.equal(checkBatch(EXAMPLES, 3, 'examples'), EXAMPLES.length);
  // Cases come in batches for git; a failure names its one case, which a batch counterexample would bury.
  const seed = Number(process.env.PATCHD_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
  let checked = 0;
  for (let batch = 0; batch < BATCHES; batch++) {
    checked += checkBatch(fc.sample(tabCase, { numRuns: BATCH, seed: seed + batch }), 1 + (batch % 3), `PATCHD_TEST_SEED=${seed}, batch ${batch}`);
  }
  assert.ok(checked > BATCH * BATCHES * 0.6, `only ${checked} cases had a diff`);
});

/** bash's path, so that the script can run with a PATH where no command is found. */
const BASH = spawnSync('bash', ['-c', 'printf %s "$BASH"'], { encoding: 'utf8' }).stdout;

/**
 * The body bash hands the command: the opener swapped for a `read` of the same heredoc (the
 * redirection kept as written), printed back. Run in an empty directory where no command is
 * found, so that a command substitution the random text spells runs nothing.
 */
function bashBody(text: string): string {
  const [opener, ...rest] = text.split('\n');
  const script = [`IFS= read -r -d '' body ${opener!.slice(opener!.indexOf('<<'))}`, ...rest, 'printf %s "$body"'].join('\n');
  using scratch = createScratch();
  return spawnSync(BASH, ['-c', script], { cwd: scratch.dir, env: { PATH: '/nonexistent' }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).stdout;
}

test('<<- examples read as bash reads them: only tabs, only at the start of the line; spaces and the tabs after them stay', () => {
  const text = "git apply <<-'EOF'\n\t--- a/f.txt\n\t+++ b/f.txt\n\t@@ -1,3 +1,3 @@\n \t one\n\t\t-\ttwo\n\t+\tTWO\n\t \n\tEOF\n";
  assert.equal(bashBody(text), '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n \t one\n-\ttwo\n+\tTWO\n \n');
  const parsed = parsePatch({ patch: text, format: 'auto' });
  assert.ok(parsed.ok);
  const [hunk] = hunksOf(parsed.value.files[0]!);
  assert.deepEqual(hunk!.lines.map((line) => `${line.kind}:${line.text}`), ['context:\t one', 'remove:\ttwo', 'add:\tTWO', 'context:']);
});

/** Characters bash may read specially in a heredoc, among plain ones; no `/`, `<` or `>`, so that no substitution names a real file. */
const bashyLine = fc.array(fc.constantFrom('$', '\\', '`', 'a', 'Z', '1', '_', '{', '}', '(', ')', '[', ']', '-', '?', '!', '#', '*', '@', ' ', "'", '"', 'é', '%', '.', '\t'), { maxLength: 8 }).map((chars) => chars.join(''));

test('an unquoted delimiter: the body is taken as written, noted (naming its line) exactly when bash would have expanded it', () => {
  fc.assert(fc.property(bashyLine, fc.boolean(), (line, envelope) => {
    const body = envelope ? ['*** Begin Patch', '*** Add File: n.txt', `+${line}`, '*** End Patch'] : ['--- /dev/null', '+++ b/n.txt', '@@ -0,0 +1 @@', `+${line}`];
    const lineNumber = (envelope ? 2 : 3) + 2;
    const text = `${[envelope ? 'apply_patch <<EOF' : 'git apply <<EOF', ...body, 'EOF'].join('\n')}\n`;
    const parsed = parsePatch({ patch: text, format: 'auto' });
    assert.ok(parsed.ok, !parsed.ok ? parsed.error.message : '');
    const file = parsed.value.files[0]!;
    assert.ok(file.op === 'add');
    assert.equal(file.content, `${line}\n`, 'the line as written');
    const note = parsed.value.diagnostics.find((diagnostic) => diagnostic.code === 'heredoc_not_expanded');
    const expanded = bashBody(text) !== `${body.join('\n')}\n`;
    assert.equal(note !== undefined, expanded, expanded ? 'bash expands the line, and no note says so' : 'bash keeps the line, yet a note says it expands it');
    if (note !== undefined) assert.match(note.message, new RegExp(`first on line ${lineNumber} `));
  }), { numRuns: 150 });
});
