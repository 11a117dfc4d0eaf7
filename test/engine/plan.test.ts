import assert from 'node:assert/strict';
import test from 'node:test';
import { planPatch } from '../../daemon/engine/plan.ts';
import { sameBytes } from '../../daemon/engine/snapshots.ts';
import type { FilePatch, FileSnapshot, Hunk, HunkLine, ParsedPatch } from '../../daemon/engine/types.ts';

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array | null) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes ?? new Uint8Array());
const file = (text: string): FileSnapshot => ({ kind: 'file', bytes: encode(text) });

function hunk(body: string, extra: Partial<Hunk> = {}): Hunk {
  const kinds = { ' ': 'context', '-': 'remove', '+': 'add' } as const;
  const lines: HunkLine[] = body.split('\n').map((line) => ({ kind: kinds[line[0] as ' '], text: line.slice(1) }));
  return { anchors: [], lines, atEndOfFile: false, ...extra };
}

function plan(files: FilePatch[], snapshots: Record<string, FileSnapshot>, fuzz?: 'exact') {
  const parsed: ParsedPatch = { dialect: 'unified', files, diagnostics: [], ignoredMetadata: [] };
  return planPatch(parsed, new Map(Object.entries(snapshots)), { fuzz });
}

function applied(result: ReturnType<typeof plan>, index = 0): string {
  assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}`);
  return decode(result.value.files[index]!.after);
}

function rejected(result: ReturnType<typeof plan>): string {
  assert.ok(!result.ok, 'expected a rejection');
  return result.error.code;
}

test('update replaces removed lines and keeps context as the file spells it', () => {
  const result = plan([{ op: 'update', path: 'f', hunks: [hunk(' a  \n-b\n+B')] }], { f: file('a\nb\nc\n') });
  assert.equal(rejected(plan([{ op: 'update', path: 'f', hunks: [hunk(' a  \n-b\n+B')] }], { f: file('a\nb\nc\n') }, 'exact')), 'context_not_found');
  assert.equal(applied(result), 'a\nB\nc\n');
  assert.ok(result.ok);
  assert.deepEqual(result.value.files[0]!.hunks, [{ index: 0, line: 1, tier: 'trailing_whitespace', offset: 0 }]);
});

test('context written back from the file even when matched loosely', () => {
  const result = plan([{ op: 'update', path: 'f', hunks: [hunk(' x = “1”\n-y\n+z')] }], { f: file('x = "1"\ny\n') });
  assert.equal(applied(result), 'x = "1"\nz\n');
});

test('CRLF file: added lines take CRLF; BOM and missing final newline survive', () => {
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk(' a\n+n')] }], { f: file('a\r\nb\r\n') })), 'a\r\nn\r\nb\r\n');
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk('-a\n+A')] }], { f: file('\uFEFFa\nb') })), '\uFEFFA\nb');
});

test('a BOM spelled in the patch matches the first line; the new side says whether it stays', () => {
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk('-\uFEFFa\n+\uFEFFA')] }], { f: file('\uFEFFa\n') })), '\uFEFFA\n');
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk('-\uFEFFa\n+A')] }], { f: file('\uFEFFa\n') })), 'A\n');
});

test('no-newline markers add or remove the final newline; a marked hunk must end the file', () => {
  const at = (old: boolean, nu: boolean): Partial<Hunk> => ({ finalNewline: { old, new: nu }, atEndOfFile: true });
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk('-b\n+c', at(false, true))] }], { f: file('a\nb') })), 'a\nc\n');
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk('-b\n+c', at(true, false))] }], { f: file('a\nb\n') })), 'a\nc');
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk('-b\n+c', at(false, false))] }], { f: file('a\nb') })), 'a\nc');
  assert.equal(rejected(plan([{ op: 'update', path: 'f', hunks: [hunk('-a\n+c', at(true, false))] }], { f: file('a\nb\n') })), 'context_not_found');
  // Applied once more, the hunk's old lines are still in the file, but not at its end: already there, not added mid-file.
  const again = plan([{ op: 'update', path: 'f', hunks: [hunk(' b\n x \n+a', { ...at(true, false), oldStart: 7 })] }], { f: file('x\n\nx \n\nx\nb\nb\nx \na') });
  assert.equal(rejected(again), 'already_applied');
});

test('a marked hunk whose old side ends the file otherwise than the file does is refused, as git apply refuses it', () => {
  const at = (old: boolean, nu: boolean): Partial<Hunk> => ({ finalNewline: { old, new: nu }, atEndOfFile: true });
  // The old side has its final newline (the marker is on the new side only); the file lacks it.
  const error = plan([{ op: 'update', path: 'f', hunks: [hunk('-c\n+\n+c', at(true, false))] }], { f: file('x\nc') });
  assert.equal(rejected(error), 'context_not_found');
  assert.ok(!error.ok && /ends with a newline.*has none/.test(error.error.message), JSON.stringify(error));
  // The old side lacks it; the file has it.
  assert.equal(rejected(plan([{ op: 'update', path: 'f', hunks: [hunk('-c\n+d', at(false, true))] }], { f: file('x\nc\n') })), 'context_not_found');
  assert.equal(rejected(plan([{ op: 'update', path: 'f', hunks: [hunk(' c\n+d', at(false, false))] }], { f: file('c\n') })), 'context_not_found');
  // Lines only added at the end: the old side's claim is about the line before them.
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk('+d', at(true, false))] }], { f: file('c\n') })), 'c\nd');
  assert.equal(rejected(plan([{ op: 'update', path: 'f', hunks: [hunk('+d', at(true, false))] }], { f: file('c') })), 'context_not_found');
});

test('hints resolve duplicates and shift with earlier hunks', () => {
  const snapshot = { f: file('x\ny\nx\ny\nx\ny\n') };
  assert.equal(rejected(plan([{ op: 'update', path: 'f', hunks: [hunk(' x\n-y\n+Y')] }], snapshot)), 'ambiguous_context');
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk(' x\n-y\n+Y', { oldStart: 3 })] }], snapshot)), 'x\ny\nx\nY\nx\ny\n');
  const inOrder = plan([{ op: 'update', path: 'f', hunks: [hunk(' x\n-y\n+Y', { oldStart: 3 }), hunk(' x\n-y\n+Z', { oldStart: 5 })] }], snapshot);
  assert.equal(applied(inOrder), 'x\ny\nx\nY\nx\nZ\n');
  // Numbered inside the first hunk, the second matches there and before it as well as after it: which copy is meant is a guess (test/engine/hunkOrder.test.ts).
  const sameLine = plan([{ op: 'update', path: 'f', hunks: [hunk(' x\n-y\n+Y', { oldStart: 3 }), hunk(' x\n-y\n+Z', { oldStart: 3 })] }], snapshot);
  assert.equal(rejected(sameLine), 'ambiguous_context');
});

test('hunks are searched after the previous one; an earlier-only match fails', () => {
  const snapshot = { f: file('a\nb\nc\nd\n') };
  assert.equal(rejected(plan([{ op: 'update', path: 'f', hunks: [hunk('-c\n+C'), hunk('-a\n+A')] }], snapshot)), 'context_not_found');
  assert.equal(rejected(plan([{ op: 'update', path: 'f', hunks: [hunk(' a\n-b\n+B'), hunk(' b\n-c\n+C')] }], snapshot)), 'overlapping_edits');
});

test('context_not_found names the nearest region', () => {
  const result = plan([{ op: 'update', path: 'f', hunks: [hunk(' one\n-twoo\n+2\n three')] }], { f: file('zero\none\ntwo\nthree\n') });
  assert.ok(!result.ok);
  assert.equal(result.error.code, 'context_not_found');
  assert.equal(result.error.path, 'f');
  assert.equal(result.error.hunkIndex, 0);
  assert.deepEqual(result.error.nearest, { line: 2, text: 'one\ntwo\nthree', similarity: 0.67 });
  assert.match(result.error.hint, /Re-read/);
});

test('anchors are binding; a missing anchor fails', () => {
  const snapshot = { f: file('def a():\n  pass\ndef b():\n  pass\n') };
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk('-  pass\n+  return 1', { anchors: ['def b():'] })] }], snapshot)), 'def a():\n  pass\ndef b():\n  return 1\n');
  assert.equal(rejected(plan([{ op: 'update', path: 'f', hunks: [hunk('-  pass\n+  x', { anchors: ['def c():'] })] }], snapshot)), 'context_not_found');
});

test('pure insertions go at the hint, after an anchor, or at the end', () => {
  const snapshot = { f: file('a\nb\n') };
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk('+x', { oldStart: 2 })] }], snapshot)), 'a\nx\nb\n');
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk('+x', { anchors: ['a'] })] }], snapshot)), 'a\nx\nb\n');
  assert.equal(applied(plan([{ op: 'update', path: 'f', hunks: [hunk('+x')] }], snapshot)), 'a\nb\nx\n');
});

test('add refuses an existing path; update and delete need an existing file', () => {
  assert.equal(rejected(plan([{ op: 'add', path: 'f', content: 'x\n' }], { f: file('y\n') })), 'already_exists');
  assert.equal(rejected(plan([{ op: 'add', path: 'd', content: 'x\n' }], { d: { kind: 'directory' } })), 'already_exists');
  assert.equal(rejected(plan([{ op: 'update', path: 'f', hunks: [hunk('-a')] }], { f: { kind: 'missing' } })), 'not_found');
  assert.equal(rejected(plan([{ op: 'delete', path: 'd', hunks: [] }], { d: { kind: 'directory' } })), 'not_found');
});

test('add writes the content; its receipt diff shows every line added', () => {
  const result = plan([{ op: 'add', path: 'n.txt', content: 'one\ntwo\n' }], { 'n.txt': { kind: 'missing' } });
  assert.equal(applied(result), 'one\ntwo\n');
  assert.ok(result.ok);
  assert.equal(result.value.files[0]!.diff, '--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n');
});

test('delete with hunks must cover the whole file; without hunks deletes as is', () => {
  const snapshot = { f: file('a\nb\n') };
  assert.equal(rejected(plan([{ op: 'delete', path: 'f', hunks: [hunk('-a')] }], snapshot)), 'context_not_found');
  const whole = plan([{ op: 'delete', path: 'f', hunks: [hunk('-a\n-b')] }], snapshot);
  assert.ok(whole.ok);
  assert.equal(whole.value.files[0]!.after, null);
  assert.equal(rejected(plan([{ op: 'delete', path: 'f', hunks: [], mustBeEmpty: true }], snapshot)), 'context_not_found');
  assert.ok(plan([{ op: 'delete', path: 'f', hunks: [] }], { f: { kind: 'file', bytes: new Uint8Array([0, 1, 2]) } }).ok);
});

test('rename: destination must be free; content moves, edited or not', () => {
  const snapshot = { old: file('a\nb\n'), new: { kind: 'missing' } as FileSnapshot };
  assert.equal(applied(plan([{ op: 'rename', fromPath: 'old', path: 'new', hunks: [] }], snapshot)), 'a\nb\n');
  const edited = plan([{ op: 'rename', fromPath: 'old', path: 'new', hunks: [hunk(' a\n-b\n+c')] }], snapshot);
  assert.equal(applied(edited), 'a\nc\n');
  assert.ok(edited.ok);
  assert.equal(edited.value.files[0]!.op, 'rename');
  assert.equal(edited.value.files[0]!.fromPath, 'old');
  assert.equal(rejected(plan([{ op: 'rename', fromPath: 'old', path: 'new', hunks: [] }], { ...snapshot, new: file('x') })), 'already_exists');
});

test('binary targets are refused, never rewritten', () => {
  const result = plan([{ op: 'update', path: 'b', hunks: [hunk('-a\n+b')] }], { b: { kind: 'file', bytes: new Uint8Array([0xc3, 0x28]) } });
  assert.equal(rejected(result), 'binary_file');
});

test('the receipt diff shows each change with three lines of context, numbered in the file', () => {
  const lines = Array.from({ length: 1000 }, (_, index) => `line ${index}`);
  const result = plan([{ op: 'update', path: 'big', hunks: [hunk(' line 500\n-line 501\n+changed', { oldStart: 501 })] }], { big: file(`${lines.join('\n')}\n`) });
  assert.ok(result.ok);
  assert.equal(result.value.files[0]!.diff, '--- a/big\n+++ b/big\n@@ -499,7 +499,7 @@\n line 498\n line 499\n line 500\n-line 501\n+changed\n line 502\n line 503\n line 504\n');
});

test('whole-file writes create, and replace only when the caller pinned the content', () => {
  assert.equal(applied(plan([{ op: 'write', path: 'w', content: 'new\n', mayReplace: false }], { w: { kind: 'missing' } })), 'new\n');
  assert.equal(rejected(plan([{ op: 'write', path: 'w', content: 'new\n', mayReplace: false }], { w: file('old\n') })), 'precondition_required');
  const replaced = plan([{ op: 'write', path: 'w', content: 'new\n', mayReplace: true }], { w: file('old\n') });
  assert.equal(applied(replaced), 'new\n');
  assert.ok(replaced.ok);
  assert.equal(replaced.value.files[0]!.diff, '--- a/w\n+++ b/w\n@@ -1,1 +1,1 @@\n-old\n+new\n');
});

test('a receipt diff of contents too far apart falls back to remove-all, add-all', () => {
  const oldText = Array.from({ length: 3000 }, (_, index) => `old ${index}`).join('\n') + '\n';
  const newText = Array.from({ length: 3000 }, (_, index) => `new ${index}`).join('\n') + '\n';
  const result = plan([{ op: 'write', path: 'w', content: newText, mayReplace: true }], { w: file(oldText) });
  assert.ok(result.ok);
  const lines = result.value.files[0]!.diff.split('\n');
  assert.equal(lines[2], '@@ -1,3000 +1,3000 @@');
  assert.equal(lines.filter((line) => line.startsWith('-old')).length, 3000);
  assert.equal(lines.filter((line) => line.startsWith('+new')).length, 3000);
});

test('sameBytes compares every byte, at any offset and length', () => {
  const buffer = new Uint8Array(64).map((_, index) => index % 7);
  for (const [offset, length] of [[0, 0], [0, 13], [1, 13], [3, 32], [4, 40], [2, 5]] as const) {
    const a = buffer.subarray(offset, offset + length);
    const copy = new Uint8Array(a);
    assert.ok(sameBytes(a, copy), `${offset}+${length}`);
    for (let at = 0; at < length; at++) {
      const changed = new Uint8Array(a);
      changed[at]! ^= 1;
      assert.ok(!sameBytes(a, changed) && !sameBytes(changed, a), `${offset}+${length} differs at ${at}`);
    }
    assert.ok(length === 0 || !sameBytes(a, copy.subarray(1)));
  }
});
