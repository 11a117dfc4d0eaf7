/**
 * A receipt's diff shows what was written (DESIGN, Receipts): `git apply` of each file's diff on
 * the old bytes gives exactly the bytes the plan writes — in every dialect, on LF, CRLF, mixed,
 * unterminated and BOM files, with CRs shown as the line content `git diff` shows them.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import { parsePatch, planPatch, requiredPaths, type FileSnapshot, type PatchInput, type PlannedFile } from '../../daemon/engine/index.ts';

const BOM = '\uFEFF';
const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);

/** One file patch to plan: the patch names `path`, which holds `before` (null: missing). */
interface Case {
  readonly name: string;
  readonly path: string;
  readonly before: string | null;
  readonly input: PatchInput;
}

interface Planned {
  readonly testCase: Case;
  readonly file: PlannedFile;
}

function planCase(testCase: Case): Planned {
  const parsed = parsePatch(testCase.input);
  assert.ok(parsed.ok, `${testCase.name}: ${!parsed.ok && parsed.error.message}`);
  const files = new Map<string, FileSnapshot>();
  for (const path of requiredPaths(parsed.value)) {
    files.set(path, path === testCase.path && testCase.before !== null ? { kind: 'file', bytes: encode(testCase.before) } : { kind: 'missing' });
  }
  const plan = planPatch(parsed.value, files);
  assert.ok(plan.ok, `${testCase.name}: ${!plan.ok && `${plan.error.code} ${plan.error.message}`}`);
  assert.equal(plan.value.files.length, 1, testCase.name);
  return { testCase, file: plan.value.files[0]! };
}

function git(dir: string, args: readonly string[]): void {
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: dir };
  execFileSync('git', ['-c', 'core.autocrlf=false', ...args], { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** `git apply` of the receipt diffs on the old files, in one temporary directory; the bytes each file ends with (null: deleted). */
function gitApply(planned: readonly Planned[]): Map<string, string | null> {
  const dir = mkdtempSync(join(tmpdir(), 'patchd-receipt-'));
  try {
    for (const { testCase } of planned) if (testCase.before !== null) writeFileSync(join(dir, testCase.path), testCase.before);
    writeFileSync(join(dir, 'receipts.diff'), planned.map(({ file }) => file.diff).join(''));
    git(dir, ['apply', '--whitespace=nowarn', 'receipts.diff']);
    return new Map(planned.map(({ testCase }) => {
      const path = join(dir, testCase.path);
      return [testCase.path, existsSync(path) ? decode(readFileSync(path)) : null] as const;
    }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every case's receipt diff, applied by git, gives the planned bytes. Applied in one batch; on failure one by one, to name the cases. */
function assertFaithful(cases: readonly Case[]): void {
  const planned = cases.map(planCase);
  for (const { testCase, file } of planned) assert.notEqual(file.diff, '', `${testCase.name}: no receipt diff`);
  let results: Map<string, string | null>;
  try {
    results = gitApply(planned);
  } catch {
    const failing = planned.filter((one) => {
      try {
        gitApply([one]);
        return false;
      } catch {
        return true;
      }
    });
    assert.fail(`git apply refused the receipt diff of: ${failing.map(({ testCase, file }) => `${testCase.name}\n${JSON.stringify(file.diff)}`).join('\n')}`);
  }
  for (const { testCase, file } of planned) {
    assert.equal(results.get(testCase.path), file.after === null ? null : decode(file.after), `${testCase.name}\n${JSON.stringify(file.diff)}`);
  }
}

/** Five lines in each kind of file. */
const LINES = ['one', 'two', 'three', 'four', 'five'];
const FILES: Record<string, string> = {
  lf: 'one\ntwo\nthree\nfour\nfive\n',
  crlf: 'one\r\ntwo\r\nthree\r\nfour\r\nfive\r\n',
  mixed: 'one\r\ntwo\nthree\r\nfour\nfive\r\n',
  mixedLf: 'one\ntwo\r\nthree\nfour\r\nfive\n',
  lfUnterminated: 'one\ntwo\nthree\nfour\nfive',
  crlfUnterminated: 'one\r\ntwo\r\nthree\r\nfour\r\nfive',
  bomLf: `${BOM}one\ntwo\nthree\nfour\nfive\n`,
  bomCrlf: `${BOM}one\r\ntwo\r\nthree\r\nfour\r\nfive\r\n`,
  bomCrlfUnterminated: `${BOM}one\r\ntwo\r\nthree\r\nfour\r\nfive`,
};

/** Lines `[from, to)` of the five replaced by `added`. */
interface Change {
  readonly name: string;
  readonly from: number;
  readonly to: number;
  readonly added: readonly string[];
}

const CHANGES: readonly Change[] = [
  { name: 'middle', from: 2, to: 3, added: ['THREE'] },
  { name: 'first', from: 0, to: 1, added: ['ONE'] },
  { name: 'last', from: 4, to: 5, added: ['FIVE'] },
  { name: 'delete first', from: 0, to: 1, added: [] },
  { name: 'delete last', from: 4, to: 5, added: [] },
  { name: 'delete two', from: 1, to: 3, added: [] },
  { name: 'insert at top', from: 0, to: 0, added: ['zero'] },
  { name: 'append', from: 5, to: 5, added: ['six', 'seven'] },
  { name: 'grow first', from: 0, to: 1, added: ['ONE', 'one and a half'] },
  { name: 'everything', from: 0, to: 5, added: ['x'] },
];

/** The change as hunk lines with one line of context each side, `old` the file's lines as the patch spells them. */
function body(change: Change, old: readonly string[], added: readonly string[]): { lines: string[]; start: number; oldCount: number; newCount: number } {
  const start = Math.max(0, change.from - 1);
  const end = Math.min(old.length, change.to + 1);
  const lines = [
    ...old.slice(start, change.from).map((line) => ` ${line}`),
    ...old.slice(change.from, change.to).map((line) => `-${line}`),
    ...added.map((line) => `+${line}`),
    ...old.slice(change.to, end).map((line) => ` ${line}`),
  ];
  return { lines, start, oldCount: end - start, newCount: end - start - (change.to - change.from) + added.length };
}

type Dialect = (path: string, change: Change, content: string) => PatchInput;

/** The lines of `content` as `git diff` shows them: CRs kept, the BOM on line 1. */
function rawLines(content: string): string[] {
  const lines = content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

const DIALECTS: Record<string, Dialect> = {
  unified: (path, change) => {
    const { lines, start, oldCount, newCount } = body(change, LINES, change.added);
    return { patch: [`--- a/${path}`, `+++ b/${path}`, `@@ -${start + 1},${oldCount} +${start + 1},${newCount} @@`, ...lines].join('\n') + '\n', format: 'unified' };
  },
  /** As `git diff` spells it: CRs kept (EOL-explicit), added lines ending as the line they replace or follow. */
  unifiedWithCrs: (path, change, content) => {
    const old = rawLines(content);
    const crlf = (old[Math.min(change.from, old.length - 1)] ?? '').endsWith('\r');
    const added = change.added.map((line, index) => (change.from === 0 && index === 0 && content.startsWith(BOM) ? BOM : '') + line + (crlf ? '\r' : ''));
    const { lines, start, oldCount, newCount } = body(change, old, added);
    return { patch: [`--- a/${path}`, `+++ b/${path}`, `@@ -${start + 1},${oldCount} +${start + 1},${newCount} @@`, ...lines].join('\n') + '\n', format: 'unified' };
  },
  codex: (path, change) => ({ patch: ['*** Begin Patch', `*** Update File: ${path}`, '@@', ...body(change, LINES, change.added).lines, '*** End Patch'].join('\n') + '\n', format: 'codex' }),
  v4a: (path, change) => ({ operations: [{ type: 'update_file', path, diff: body(change, LINES, change.added).lines.join('\n') + '\n' }], format: 'v4a' }),
  searchReplace: (path, change) => {
    const { lines } = body(change, LINES, change.added);
    const search = lines.filter((line) => !line.startsWith('+')).map((line) => line.slice(1));
    const replace = lines.filter((line) => !line.startsWith('-')).map((line) => line.slice(1));
    return { patch: [path, '<<<<<<< SEARCH', ...search, '=======', ...replace, '>>>>>>> REPLACE'].join('\n') + '\n', format: 'search-replace' };
  },
  edits: (path, change) => {
    const { lines } = body(change, LINES, change.added);
    const text = (kept: string) => lines.filter((line) => !line.startsWith(kept)).map((line) => `${line.slice(1)}\n`).join('');
    return { edits: [{ path, oldText: text('+'), newText: text('-') }], format: 'edits' };
  },
};

for (const [dialect, make] of Object.entries(DIALECTS)) {
  test(`${dialect}: git apply of each receipt diff gives the bytes written, on LF, CRLF, mixed, unterminated and BOM files`, () => {
    const cases: Case[] = [];
    for (const [kind, content] of Object.entries(FILES)) {
      for (const change of CHANGES) {
        const path = `f${cases.length}.txt`;
        cases.push({ name: `${dialect} ${kind} ${change.name}`, path, before: content, input: make(path, change, content) });
      }
    }
    assertFaithful(cases);
  });
}

test('the receipt diff of a CRLF file shows its CRs, as git diff does (the envelope, unified and V4A as SEARCH/REPLACE and edits)', () => {
  const envelope = planCase({ name: 'envelope', path: 'f.txt', before: 'a\r\nb\r\nc\r\n', input: { patch: '*** Begin Patch\n*** Update File: f.txt\n@@\n a\n-b\n+B\n c\n*** End Patch\n' } });
  assert.equal(envelope.file.diff, '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\r\n-b\r\n+B\r\n c\r\n');
  const edits = planCase({ name: 'edits', path: 'f.txt', before: 'a\r\nb\r\nc\r\n', input: { edits: [{ path: 'f.txt', oldText: 'b\n', newText: 'B\n' }] } });
  assert.equal(edits.file.diff, envelope.file.diff);
});

test('a hunk on line 1 of a BOM file carries the BOM in its line 1 text, as the session diff shows it', () => {
  const planned = planCase({ name: 'bom', path: 'f.txt', before: `${BOM}a\nb\n`, input: { patch: '*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+A\n b\n*** End Patch\n' } });
  assert.equal(planned.file.diff, `--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-${BOM}a\n+${BOM}A\n b\n`);
  // Removing line 1 moves the BOM onto the next line: that line changes too.
  const removed = planCase({ name: 'bom removed', path: 'f.txt', before: `${BOM}a\nb\nc\n`, input: { patch: '*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n*** End Patch\n' } });
  assert.equal(removed.file.diff, `--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,2 @@\n-${BOM}a\n-b\n+${BOM}b\n c\n`);
});

test('receipts stay small: hunks with three lines of context, far-apart changes in separate hunks', () => {
  const lines = Array.from({ length: 40 }, (_, index) => `line ${index + 1}`);
  const planned = planCase({
    name: 'two hunks', path: 'f.txt', before: `${lines.join('\r\n')}\r\n`,
    input: { patch: ['*** Begin Patch', '*** Update File: f.txt', '@@', '-line 10', '+ten', '@@', ' line 29', '-line 30', '+thirty', '*** End Patch'].join('\n') + '\n' },
  });
  assert.equal(planned.file.diff, [
    '--- a/f.txt', '+++ b/f.txt',
    '@@ -7,7 +7,7 @@', ' line 7\r', ' line 8\r', ' line 9\r', '-line 10\r', '+ten\r', ' line 11\r', ' line 12\r', ' line 13\r',
    '@@ -27,7 +27,7 @@', ' line 27\r', ' line 28\r', ' line 29\r', '-line 30\r', '+thirty\r', ' line 31\r', ' line 32\r', ' line 33\r', '',
  ].join('\n'));
});

test('adds, deletes and whole-file writes: git apply of the receipt diff gives the bytes written', () => {
  const contents = { lf: 'a\nb\n', crlf: 'a\r\nb\r\n', mixed: 'a\r\nb\n', unterminated: 'a\r\nb', bom: `${BOM}a\r\nb\r\n` };
  const cases: Case[] = [];
  const add = (name: string, make: (path: string, content: string) => PatchInput) => {
    for (const [kind, content] of Object.entries(contents)) {
      const path = `f${cases.length}.txt`;
      cases.push({ name: `${name} ${kind}`, path, before: null, input: make(path, content) });
    }
  };
  add('unified add', (path, content) => ({ patch: `--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${rawLines(content).length} @@\n${rawLines(content).map((line) => `+${line}\n`).join('')}${content.endsWith('\n') ? '' : '\\ No newline at end of file\n'}`, format: 'unified' }));
  add('v4a create', (path, content) => ({ operations: [{ type: 'create_file', path, diff: rawLines(content).map((line) => `+${line}\n`).join('') }], format: 'v4a' }));
  add('edits write', (path, content) => ({ edits: [{ path, content }], format: 'edits' }));
  add('edits create', (path, content) => ({ edits: [{ path, oldText: '', newText: content }], format: 'edits' }));
  for (const [kind, content] of Object.entries(contents)) {
    for (const [name, make] of Object.entries({
      'codex delete': (path: string): PatchInput => ({ patch: `*** Begin Patch\n*** Delete File: ${path}\n*** End Patch\n`, format: 'codex' }),
      'v4a delete': (path: string): PatchInput => ({ operations: [{ type: 'delete_file', path }], format: 'v4a' }),
      'edits replace': (path: string): PatchInput => ({ edits: [{ path, content: 'new\n', expectedSha256: '0'.repeat(64) }], format: 'edits' }),
    })) {
      const path = `f${cases.length}.txt`;
      cases.push({ name: `${name} ${kind}`, path, before: content, input: make(path) });
    }
  }
  assertFaithful(cases);
});

/** A random file (unique lines, each ending LF or CRLF, maybe no final newline, maybe a BOM) and random changes to it. */
const randomCase = fc.record({
  endings: fc.array(fc.constantFrom('\n', '\r\n'), { minLength: 1, maxLength: 30 }),
  finalNewline: fc.boolean(),
  bom: fc.boolean(),
  /** `at` -1: at the end of the file. */
  changes: fc.array(fc.record({ at: fc.integer({ min: -1, max: 40 }), removed: fc.nat({ max: 3 }), added: fc.nat({ max: 3 }), context: fc.nat({ max: 3 }) }), { minLength: 1, maxLength: 3 }),
  dialect: fc.constantFrom('codex', 'v4a'),
});

/** The envelope or V4A patch of `changes` (apart, in order) to lines `l0…`: context as given, no CRs; a hunk of added lines only goes at the end. */
type RandomChange = { at: number; removed: number; added: number; context: number };

function randomPatch(path: string, count: number, spec: readonly RandomChange[], dialect: string): PatchInput {
  const lines = Array.from({ length: count }, (_, index) => `l${index}`);
  const chunks: string[] = [];
  let free = 0;
  for (const [number, { at, removed, added, context }] of spec.entries()) {
    const from = at < 0 ? count : free + (at % Math.max(1, count - free + 1));
    const to = Math.min(count, from + removed);
    if (from < free || from > count || (to === from && added === 0)) continue;
    const before = Math.min(from - free, context);
    const after = Math.min(count - to, context);
    if (before + (to - from) + after === 0 && from < count) continue;
    chunks.push('@@', ...lines.slice(from - before, from).map((line) => ` ${line}`), ...lines.slice(from, to).map((line) => `-${line}`));
    chunks.push(...Array.from({ length: added }, (_, index) => `+new ${number}.${index}`), ...lines.slice(to, to + after).map((line) => ` ${line}`));
    free = to + after;
  }
  if (chunks.length === 0) chunks.push('@@', `-${lines[0]}`, '+first');
  return dialect === 'codex'
    ? { patch: ['*** Begin Patch', `*** Update File: ${path}`, ...chunks, '*** End Patch'].join('\n') + '\n', format: 'codex' }
    : { operations: [{ type: 'update_file', path, diff: chunks.join('\n') + '\n' }], format: 'v4a' };
}

test('random files and hunks: git apply of every receipt diff gives the bytes written (one git run for the lot)', () => {
  const cases = fc.sample(randomCase, { numRuns: 150, seed: 20261129 }).map((random, index): Case => {
    const { endings, finalNewline, bom, changes, dialect } = random;
    const text = endings.map((ending, line) => `l${line}${ending}`).join('');
    const before = (bom ? BOM : '') + (finalNewline ? text : text.replace(/\r?\n$/, ''));
    const path = `r${index}.txt`;
    return { name: `random ${index} ${JSON.stringify(random)}`, path, before, input: randomPatch(path, endings.length, changes, dialect) };
  });
  assertFaithful(cases);
});

test('at the file\'s edges a line the hunk leaves alone can change, and shows as git diff shows it', () => {
  const envelopeOf = (path: string, body: readonly string[]): PatchInput => ({ patch: ['*** Begin Patch', `*** Update File: ${path}`, '@@', ...body, '*** End Patch'].join('\n') + '\n', format: 'codex' });
  const hunkOf = (before: string, ...body: string[]) => planCase({ name: 'edge', path: 'f', before, input: envelopeOf('f', body) }).file.diff.split('\n').slice(2).join('\n');
  // Lines appended after a last line without a newline: that line gains one.
  assert.equal(hunkOf('a\nb', ' b', '+c'), '@@ -1,2 +1,3 @@\n a\n-b\n\\ No newline at end of file\n+b\n+c\n\\ No newline at end of file\n');
  // The last line deleted from a file without a final newline: the line before it loses its newline.
  assert.equal(hunkOf('a\nb\nc', '-c'), '@@ -1,3 +1,2 @@\n a\n-b\n-c\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n');
  // A line inserted above line 1 of a BOM file: the BOM moves onto it.
  assert.equal(hunkOf(`${BOM}a\nb\n`, '+z', ' a'), `@@ -1,2 +1,3 @@\n-${BOM}a\n+${BOM}z\n+a\n b\n`);
});
