/**
 * A UTF-8 BOM through parse and plan (DESIGN, Matching: keep what the file had, unless the patch
 * says otherwise). A patch that says nothing of the BOM keeps it; a hunk whose old side spells it
 * at the file's start (a git diff: git diffs bytes) says what becomes of it, as `git apply` does.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import type { PatchInput } from '../../daemon/engine/index.ts';
import { planOnFiles } from '../helpers/planText.ts';

const BOM = '\uFEFF';
const decode = (bytes: Uint8Array | null) => (bytes === null ? null : new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes));

const plan = planOnFiles;

/** The new bytes of f.txt (decoded, BOM kept) and its receipt diff. */
function applied(input: PatchInput, text: string): { text: string | null; diff: string } {
  const result = plan(input, { 'f.txt': text });
  assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}`);
  const file = result.value.files.find((planned) => planned.path === 'f.txt');
  assert.ok(file, 'nothing planned for f.txt');
  return { text: decode(file.after), diff: file.diff };
}

function rejected(input: PatchInput, text: string): string {
  const result = plan(input, { 'f.txt': text });
  assert.ok(!result.ok, `expected a rejection, got ${JSON.stringify(result.ok && decode(result.value.files[0]?.after ?? null))}`);
  return result.error.code;
}

const unified = (...body: string[]): PatchInput => ({ patch: ['--- a/f.txt', '+++ b/f.txt', ...body].join('\n') + '\n', format: 'unified' });
const envelope = (...body: string[]): PatchInput => ({ patch: ['*** Begin Patch', '*** Update File: f.txt', ...body, '*** End Patch'].join('\n') + '\n', format: 'codex' });
const v4a = (...body: string[]): PatchInput => ({ operations: [{ type: 'update_file', path: 'f.txt', diff: body.join('\n') + '\n' }], format: 'v4a' });

/** `git diff` of a commit that removes the BOM of f.txt (`bom\nb\n`). */
const removal = [
  'diff --git a/f.txt b/f.txt',
  'index bae1d4e..7ab2e3e 100644',
  '--- a/f.txt',
  '+++ b/f.txt',
  '@@ -1,2 +1,2 @@',
  `-${BOM}bom`,
  '+bom',
  ' b',
];

test('a git diff that removes the BOM removes it, and says so in the receipt diff', () => {
  const result = applied({ patch: removal.join('\n') + '\n', format: 'unified' }, `${BOM}bom\nb\n`);
  assert.equal(result.text, 'bom\nb\n');
  assert.match(result.diff, new RegExp(`^-${BOM}bom\n\\+bom\n b\n`, 'm'));
  // Without its index line (no blob to vouch for the bytes) the hunk alone says the same.
  assert.equal(applied({ patch: removal.filter((line) => !line.startsWith('index ')).join('\n') + '\n', format: 'unified' }, `${BOM}bom\nb\n`).text, 'bom\nb\n');
});

test('the same diff reversed (-R) adds the BOM back; where the BOM is already there it is already_applied, never a change', () => {
  for (const lines of [removal, removal.filter((line) => !line.startsWith('index '))]) {
    const input: PatchInput = { patch: lines.join('\n') + '\n', format: 'unified', reverse: true };
    assert.equal(applied(input, 'bom\nb\n').text, `${BOM}bom\nb\n`);
    assert.equal(rejected(input, `${BOM}bom\nb\n`), 'already_applied');
    // Forward, once applied: already_applied too.
    assert.equal(rejected({ ...input, reverse: false }, 'bom\nb\n'), 'already_applied');
  }
});

test('a hunk that spells the BOM on both sides keeps one BOM; one that spells it on neither keeps it', () => {
  assert.equal(applied(unified('@@ -1,2 +1,2 @@', `-${BOM}a`, `+${BOM}A`, ' b'), `${BOM}a\nb\n`).text, `${BOM}A\nb\n`);
  assert.equal(applied(unified('@@ -1,2 +1,2 @@', '-a', '+A', ' b'), `${BOM}a\nb\n`).text, `${BOM}A\nb\n`);
  // The new side alone spelling it: the BOM the file has, once.
  assert.equal(applied(unified('@@ -1,2 +1,2 @@', '-a', `+${BOM}A`, ' b'), `${BOM}a\nb\n`).text, `${BOM}A\nb\n`);
  // A context line spelling it: copied as the file has it, BOM and all (git diff e14 in the conformance corpus).
  assert.equal(applied(unified('@@ -1,2 +1,2 @@', ` ${BOM}a`, '-b', '+B'), `${BOM}a\nb\n`).text, `${BOM}a\nB\n`);
});

test('hunks away from line 1 leave the BOM alone, even one with a line that starts with U+FEFF', () => {
  assert.equal(applied(unified('@@ -3 +3 @@', '-c', '+C'), `${BOM}a\nb\nc\n`).text, `${BOM}a\nb\nC\n`);
  assert.equal(applied(unified('@@ -2,2 +2,2 @@', ' b', '-c', '+C'), `${BOM}a\nb\nc\n`).text, `${BOM}a\nb\nC\n`);
  assert.equal(applied(unified('@@ -2 +2 @@', `-${BOM}b`, '+B'), `${BOM}a\nb\nc\n`).text, `${BOM}a\nB\nc\n`);
  // Two hunks: the one at line 1, which drops the BOM, decides; the other changes its line only.
  assert.equal(applied(unified('@@ -1 +1 @@', `-${BOM}a`, '+a', '@@ -3 +3 @@', '-c', '+C'), `${BOM}a\nb\nc\n`).text, 'a\nb\nC\n');
});

test('a line added above the BOM line: the BOM becomes that line\'s text, as git apply writes it', () => {
  assert.equal(applied(unified('@@ -1,2 +1,3 @@', '+h', ` ${BOM}a`, ' b'), `${BOM}a\nb\n`).text, `h\n${BOM}a\nb\n`);
  // Not spelled: the file keeps its BOM in front.
  assert.equal(applied(unified('@@ -1,2 +1,3 @@', '+h', ' a', ' b'), `${BOM}a\nb\n`).text, `${BOM}h\na\nb\n`);
});

test('a CRLF file with a BOM: a git diff removes the BOM and keeps every CRLF', () => {
  assert.equal(applied(unified('@@ -1,2 +1,2 @@', `-${BOM}a\r`, '+a\r', ' b\r'), `${BOM}a\r\nb\r\n`).text, 'a\r\nb\r\n');
  assert.equal(applied(unified('@@ -1,2 +1,3 @@', `-${BOM}a\r`, '+a\r', '+n\r', ' b\r'), `${BOM}a\r\nb\r\n`).text, 'a\r\nn\r\nb\r\n');
  // A model's patch, CRs and BOM left out: both kept.
  assert.equal(applied(unified('@@ -1,2 +1,2 @@', '-a', '+A', ' b'), `${BOM}a\r\nb\r\n`).text, `${BOM}A\r\nb\r\n`);
});

test('a file that is only a BOM: git\'s BOM line removed leaves no BOM', () => {
  assert.equal(applied(unified('@@ -1 +1 @@', `-${BOM}`, '\\ No newline at end of file', '+x'), BOM).text, 'x\n');
  assert.equal(applied(unified('@@ -1 +1 @@', `-${BOM}`, '\\ No newline at end of file', `+${BOM}x`), BOM).text, `${BOM}x\n`);
});

test('the envelope and V4A: a BOM removed on the first line is removed, a BOM left out is kept', () => {
  for (const dialect of [envelope, v4a]) {
    assert.equal(applied(dialect('@@', `-${BOM}a`, '+a', ' b'), `${BOM}a\nb\n`).text, 'a\nb\n');
    assert.equal(applied(dialect('@@', `-${BOM}a`, `+${BOM}A`, ' b'), `${BOM}a\nb\n`).text, `${BOM}A\nb\n`);
    assert.equal(applied(dialect('@@', '-a', '+A', ' b'), `${BOM}a\nb\n`).text, `${BOM}A\nb\n`);
    assert.equal(applied(dialect('@@', ' b', '-c', '+C'), `${BOM}a\nb\nc\n`).text, `${BOM}a\nb\nC\n`);
  }
});

test('a patch whose removed and added lines leave the file byte for byte as it was is already_applied, never a change', () => {
  assert.equal(rejected(unified('@@ -1,2 +1,2 @@', '-a', '+a', ' b'), 'a\nb\n'), 'already_applied');
  // Matched at a tolerance tier, its new side is what the file has.
  assert.equal(rejected(unified('@@ -1,2 +1,2 @@', '-a   ', '+a', ' b'), 'a\nb\n'), 'already_applied');
  assert.equal(rejected(envelope('@@', '-x = “1”', '+x = "1"'), 'x = "1"\n'), 'already_applied');
  // Through the BOM the file keeps: a patch that adds one it has.
  assert.equal(rejected(unified('@@ -1 +1 @@', '-a', `+${BOM}a`), `${BOM}a\n`), 'already_applied');
  // Context only asks for nothing: applied, with no diff to show.
  assert.deepEqual(applied(unified('@@ -1,2 +1,2 @@', ' a', ' b'), 'a\nb\n'), { text: 'a\nb\n', diff: '' });
});
