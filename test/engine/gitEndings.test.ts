/**
 * Line endings against real git (DESIGN, Matching → Line endings). Random files (LF, CRLF,
 * mixed, lone CRs, with or without BOM and final newline) get random edits (now and then one
 * that drops or adds the BOM), and a real
 * `git diff` is taken of each:
 * - the diff, on the file it was made from, gives exactly the bytes `git apply` writes, matched
 *   at tier `exact`: its lines carry their CRs, or its index line vouches for its LFs;
 * - the same diff with every CR stripped, as a model writes it, applies with the file's own
 *   endings where git put each hunk, or gives exactly the new version (when that is the blob
 *   its index line names), or is refused — never a wrong byte.
 * The git work is batched: one repository, one commit, one diff and one `git apply` per batch.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { parsePatch, planPatch, requiredPaths, type FileSnapshot, type Plan, type Result } from '../../daemon/engine/index.ts';

type Ending = '' | '\n' | '\r\n';

interface Line {
  readonly content: string;
  readonly ending: Ending;
}

/** A version of a file, or null where it does not exist. */
type Version = { readonly bom: boolean; readonly lines: readonly Line[] } | null;

interface Case {
  readonly before: Version;
  readonly after: Version;
}

const BATCH = 40;
const BATCHES = 8;

/** Lines repeat, so blocks recur; a file with lone CRs is the exception, new lines never have one. */
const plainContent: fc.Arbitrary<string> = fc.constantFrom('alpha', 'beta', '', '  indented', 'x = 1;', '}', 'é');
const crContent = fc.oneof(plainContent, fc.constantFrom('lone\rcr', '\rstart', 'a\r\rb'));
const newContent = fc.constantFrom('alpha', 'beta', '', 'new line', 'x = 2;', '  more', 'é');
const anyEnding = fc.constantFrom<Ending>('\n', '\r\n');

const oldVersion: fc.Arbitrary<Version> = fc.record({
  style: fc.constantFrom('\n', '\r\n', 'mixed'),
  contents: fc.oneof({ weight: 3, arbitrary: fc.array(plainContent, { maxLength: 12 }) }, { weight: 1, arbitrary: fc.array(crContent, { maxLength: 12 }) }),
  mixedEndings: fc.array(anyEnding, { minLength: 12, maxLength: 12 }),
  finalNewline: fc.boolean(),
  lastCr: fc.boolean(),
  bom: fc.boolean(),
}).map(({ style, contents, mixedEndings, finalNewline, lastCr, bom }) => {
  const lines = contents.map((content, index): Line => ({ content, ending: style === 'mixed' ? mixedEndings[index]! : style as Ending }));
  const last = lines.length - 1;
  // Without a final newline the last line has no ending; a CR at its very end is then content.
  if (last >= 0 && !finalNewline) lines[last] = { content: lines[last]!.content + (lastCr && contents.some((text) => text.includes('\r')) ? '\r' : ''), ending: '' };
  return { bom, lines };
});

interface Change {
  readonly edits: readonly { readonly at: number; readonly remove: number; readonly insert: readonly [string, Ending][] }[];
  readonly finalNewline: boolean;
  /** The ending a line gets when it stops being the unterminated last line, or when the last line gains one. */
  readonly closing: Ending;
  /** The new version drops the BOM the old one has, or gains one. */
  readonly flipsBom: boolean;
}

const changeOf: fc.Arbitrary<Change> = fc.record({
  edits: fc.array(fc.record({ at: fc.nat(), remove: fc.nat({ max: 4 }), insert: fc.array(fc.tuple(newContent, anyEnding), { maxLength: 4 }) }), { minLength: 1, maxLength: 2 }),
  finalNewline: fc.boolean(),
  closing: anyEnding,
  flipsBom: fc.oneof({ weight: 5, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
});

const caseOf: fc.Arbitrary<Case> = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(oldVersion, changeOf).map(([before, change]) => ({ before, after: edited(before!, change) })) },
  { weight: 1, arbitrary: fc.tuple(changeOf, fc.boolean()).map(([change, bom]) => ({ before: null, after: edited({ bom, lines: [] }, change) })) },
  { weight: 1, arbitrary: oldVersion.map((before) => ({ before, after: null })) },
);

function edited(before: NonNullable<Version>, change: Change): Version {
  const lines = [...before.lines];
  for (const { at, remove, insert } of change.edits) {
    lines.splice(at % (lines.length + 1), remove, ...insert.map(([content, ending]) => ({ content, ending })));
  }
  const last = lines.length - 1;
  return {
    bom: change.flipsBom ? !before.bom : before.bom,
    lines: lines.map((line, index) => ({ content: line.content, ending: index < last || change.finalNewline ? line.ending || change.closing : '' })),
  };
}

function bytesOf(version: Version): string | null {
  if (version === null) return null;
  return (version.bom ? '\uFEFF' : '') + version.lines.map((line) => line.content + line.ending).join('');
}

/** The lines of `text` as git sees them: each up to and with its LF (a CRLF line keeps its CR). */
function gitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

const endingOf = (line: string): Ending => (line.endsWith('\r\n') ? '\r\n' : line.endsWith('\n') ? '\n' : '');
const withoutEnding = (line: string) => line.slice(0, line.length - endingOf(line).length);

/** The ending every terminated line of `text` has (LF when none has one); undefined when they differ. */
function ownEnding(text: string): '\n' | '\r\n' | undefined {
  const endings = new Set(gitLines(text).map(endingOf).filter((ending) => ending !== ''));
  if (endings.size > 1) return undefined;
  return endings.has('\r\n') ? '\r\n' : '\n';
}

function git(dir: string, args: readonly string[]): string {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: dir };
  const config = ['-c', 'core.autocrlf=false', '-c', 'core.safecrlf=false', '-c', 'user.name=patchd', '-c', 'user.email=patchd@example.invalid'];
  return execFileSync('git', [...config, ...args], { cwd: dir, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

interface GitRun {
  /** File name → its `diff --git` section. */
  readonly sections: ReadonlyMap<string, string>;
  /** File name → the bytes `git apply` wrote, or null when it deleted the file. */
  readonly applied: ReadonlyMap<string, string | null>;
}

const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** One repository for the batch: commit the old versions, diff the new ones, reset, `git apply` the diff. */
function runGit(cases: readonly Case[], context: number): GitRun {
  const dir = mkdtempSync(join(tmpdir(), 'patchd-git-eol-'));
  try {
    const repo = join(dir, 'repo');
    git(dir, ['init', '-q', repo]);
    const names = cases.map((_, index) => `f${index}.txt`);
    const write = (version: Version, index: number) => {
      const path = join(repo, names[index]!);
      const bytes = bytesOf(version);
      if (bytes !== null) writeFileSync(path, bytes);
      else if (existsSync(path)) unlinkSync(path);
    };
    cases.forEach(({ before }, index) => write(before, index));
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-q', '--allow-empty', '-m', 'before']);
    cases.forEach(({ after }, index) => write(after, index));
    git(repo, ['add', '-A']);
    const diff = git(repo, ['diff', '--cached', '--no-color', '--no-renames', '--no-ext-diff', `-U${context}`]);
    git(repo, ['reset', '-q', '--hard']);
    writeFileSync(join(dir, 'change.diff'), diff);
    if (diff !== '') git(repo, ['apply', '--whitespace=nowarn', ...(context === 0 ? ['--unidiff-zero'] : []), join(dir, 'change.diff')]);
    const applied = new Map(names.map((name) => {
      const path = join(repo, name);
      return [name, existsSync(path) ? utf8.decode(readFileSync(path)) : null] as const;
    }));
    return { sections: splitSections(diff), applied };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function splitSections(diff: string): Map<string, string> {
  const sections = new Map<string, string>();
  for (const section of diff.split(/^(?=diff --git )/m).filter((part) => part.startsWith('diff --git '))) {
    sections.set(/^diff --git a\/(\S+) /.exec(section)![1]!, section);
  }
  return sections;
}

function applyWithEngine(patch: string, name: string, before: Version): Result<Plan> {
  const parsed = parsePatch({ patch, format: 'unified' });
  if (!parsed.ok) return parsed;
  const files = new Map<string, FileSnapshot>();
  const bytes = bytesOf(before);
  for (const path of requiredPaths(parsed.value)) files.set(path, path === name && bytes !== null ? { kind: 'file', bytes: new TextEncoder().encode(bytes) } : { kind: 'missing' });
  return planPatch(parsed.value, files);
}

function written(plan: Plan, name: string): string | null {
  const file = plan.files.find((planned) => planned.path === name);
  assert.ok(file, `the plan does not touch ${name}`);
  return file.after === null ? null : utf8.decode(file.after);
}

/**
 * The diff as git made it, on the file it was made from: the new version, byte for byte, matched
 * at tier `exact` — its lines carry their CRs, or its index line vouches for the LFs of its added
 * lines in a file with CRLF lines.
 */
function checkGitDiff(section: string, name: string, testCase: Case): void {
  const result = applyWithEngine(section, name, testCase.before);
  assert.ok(result.ok, `git diff refused: ${!result.ok && result.error.code} ${!result.ok && result.error.message}`);
  assert.equal(written(result.value, name), bytesOf(testCase.after), 'bytes differ from git apply');
  for (const planned of result.value.files) for (const hunk of planned.hunks) assert.equal(hunk.tier, 'exact', 'a byte-exact git diff matches at tier exact');
}

/** One line of what the CR-less diff must give, and whether it is an old line kept byte for byte. */
interface ExpectedLine {
  readonly text: string;
  readonly old: boolean;
}

/**
 * The CR-less diff applied where git put each hunk (git's line numbers are exact): old lines as
 * the file has them, added lines without CRs and with `ending`, none after a line marked `\ No
 * newline at end of file`.
 */
function appliedAtGitPositions(before: string, section: string, ending: string): ExpectedLine[] {
  const old = gitLines(before);
  const out: ExpectedLine[] = [];
  let copied = 0;
  const lines = section.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const header = /^@@ -(\d+)(?:,(\d+))? /.exec(lines[index]!);
    if (!header) continue;
    const start = header[2] === '0' ? Number(header[1]) : Number(header[1]) - 1;
    while (copied < start) out.push({ text: old[copied++]!, old: true });
    for (index++; index < lines.length && /^[ +\-\\]/.test(lines[index]!); index++) {
      const line = lines[index]!;
      if (line.startsWith(' ')) out.push({ text: old[copied++]!, old: true });
      else if (line.startsWith('-')) copied++;
      else if (line.startsWith('+')) out.push({ text: line.slice(1).replaceAll('\r', '') + ending, old: false });
      else if (lines[index - 1]!.startsWith('+')) out.push({ text: withoutEnding(out.pop()!.text), old: false });
    }
    index--;
  }
  while (copied < old.length) out.push({ text: old[copied++]!, old: true });
  return out;
}

/** The old file's line numbers (1-based) that the hunks of `section` cover. */
function oldLinesOfHunks(section: string): Set<number> {
  const lines = new Set<number>();
  for (const [, start, count] of section.matchAll(/^@@ -(\d+)(?:,(\d+))? /gm)) {
    for (let line = Number(start); line < Number(start) + Number(count ?? 1); line++) lines.add(line);
  }
  return lines;
}

/** The diff without its CRs, as a model writes it. */
function checkWithoutCrs(section: string, name: string, testCase: Case): void {
  const { before, after } = testCase;
  const beforeBytes = bytesOf(before);
  const result = applyWithEngine(section.replaceAll('\r', ''), name, before);
  // Without its lone CRs a file's line is another text: it is not found, never taken for the new side (already_applied).
  const loneCrs = gitLines(beforeBytes ?? '').some((line) => withoutEnding(line).includes('\r'));
  if (!result.ok) {
    // A change of line endings only says nothing once its CRs are gone: the file already reads as its new side.
    const endingsOnly = beforeBytes !== null && after !== null && beforeBytes.replaceAll('\r', '') === bytesOf(after)!.replaceAll('\r', '');
    // A lone CR in a line no hunk reaches takes no part: the hunks then read as the file's new side.
    const loneCrsInHunks = gitLines(beforeBytes ?? '').some((line, index) => oldLinesOfHunks(section).has(index + 1) && withoutEnding(line).includes('\r'));
    const allowed = ['ambiguous_context', ...(loneCrs ? ['context_not_found'] : []), ...(endingsOnly && !loneCrsInHunks ? ['already_applied'] : [])];
    assert.ok(allowed.includes(result.error.code), `refused with ${result.error.code}: ${result.error.message}`);
    return;
  }
  const bytes = written(result.value, name);
  if (after === null || bytes === null) return assert.equal(bytes, bytesOf(after));
  // The index line's new blob: what git's user wrote, endings included (see asGitWrote in plan.ts).
  if (bytes === bytesOf(after)) return;
  if (loneCrs) {
    // It may match a line that differs from git's choice only in its lone CRs: the text, CRs aside, must be the same.
    return assert.equal(bytes.replaceAll('\r', ''), bytesOf(after)!.replaceAll('\r', ''));
  }
  // A new file gets the endings the patch gives (none: LF); a mixed file's new lines may take either ending.
  const ending = beforeBytes === null ? '\n' : ownEnding(beforeBytes);
  const expected = appliedAtGitPositions(beforeBytes ?? '', section, ending ?? '\n');
  const actual = gitLines(bytes);
  assert.equal(actual.length, expected.length, `line count: ${JSON.stringify(bytes)}`);
  expected.forEach((line, index) => {
    const got = actual[index]!;
    const same = line.old || ending !== undefined ? got === line.text : withoutEnding(got) === withoutEnding(line.text) && (endingOf(got) === '') === (endingOf(line.text) === '');
    assert.ok(same, `line ${index + 1} is ${JSON.stringify(got)}, expected ${JSON.stringify(line.text)}${line.old ? ' (an old line, kept as it was)' : ''}`);
  });
}

test('git diffs of files with any line endings: the bytes git apply writes; without their CRs, the file\'s own endings or a refusal', () => {
  // Cases come in batches for git; a failure names its one case, which a batch counterexample would bury.
  const seed = Number(process.env.PATCHD_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
  let checked = 0;
  for (let batch = 0; batch < BATCHES; batch++) {
    const cases = fc.sample(caseOf, { numRuns: BATCH, seed: seed + batch });
    const context = batch % 4;
    const { sections, applied } = runGit(cases, context);
    cases.forEach((testCase, index) => {
      const name = `f${index}.txt`;
      const section = sections.get(name);
      if (section === undefined) return; // the edit changed nothing
      try {
        // `git apply --unidiff-zero` is the reference only where git trusts it: with context.
        if (context > 0) assert.equal(applied.get(name), bytesOf(testCase.after), 'git apply did not reproduce the new version');
        checkGitDiff(section, name, testCase);
        checkWithoutCrs(section, name, testCase);
      } catch (error) {
        const detail = `PATCHD_TEST_SEED=${seed}, batch ${batch}, -U${context}\ncase: ${JSON.stringify(testCase)}\ndiff: ${JSON.stringify(section)}`;
        throw new Error(`${(error as Error).message}\n${detail}`, { cause: error });
      }
      checked++;
    });
  }
  assert.ok(checked > BATCH * BATCHES * 0.8, `only ${checked} cases had a diff`);
});
