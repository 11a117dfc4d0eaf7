import assert from 'node:assert/strict';
import test from 'node:test';
import { LIMITS } from '../../daemon/engine/limits.ts';
import { parsePatch, requiredPaths } from '../../daemon/engine/parse.ts';
import { planPatch } from '../../daemon/engine/plan.ts';
import { parseStructuredEdits } from '../../daemon/engine/structuredEdits.ts';
import type { FileSnapshot, ParsedPatch, StructuredEdit } from '../../daemon/engine/types.ts';

function parsed(edits: readonly StructuredEdit[]): ParsedPatch {
  const result = parseStructuredEdits(edits);
  if (!result.ok) assert.fail(`unexpected ${result.error.code}: ${result.error.message}`);
  return result.value;
}

function rejected(edits: unknown): string {
  const result = parseStructuredEdits(edits as StructuredEdit[]);
  assert.ok(!result.ok, 'expected a rejection');
  return result.error.code;
}

test('oldText/newText → replace (no relative indentation); insertLine → insert; content → write', () => {
  const result = parsed([
    { path: 'a.ts', oldText: 'x', newText: 'y' },
    { path: 'b.ts', oldText: 'p\n', newText: 'q\n', replaceAll: true },
    { path: 'c.ts', insertLine: 3, text: 'new line\n' },
    { path: 'd.ts', content: 'all\n' },
    { path: 'e.ts', content: 'all\n', expectedSha256: 'ab'.repeat(32) },
  ]);
  assert.equal(result.dialect, 'edits');
  assert.deepEqual(result.files, [
    { op: 'edit', path: 'a.ts', edits: [{ kind: 'replace', search: 'x', replace: 'y', replaceAll: undefined, relativeIndent: false }] },
    { op: 'edit', path: 'b.ts', edits: [{ kind: 'replace', search: 'p\n', replace: 'q\n', replaceAll: true, relativeIndent: false }] },
    { op: 'edit', path: 'c.ts', edits: [{ kind: 'insert', line: 3, text: 'new line\n' }] },
    { op: 'write', path: 'd.ts', content: 'all\n', mayReplace: false },
    { op: 'write', path: 'e.ts', content: 'all\n', mayReplace: true },
  ]);
});

test('several edits to one path make one edit patch in order; a write beside edits is duplicate_file_patch', () => {
  const result = parsed([{ path: 'a.ts', oldText: 'x', newText: 'y' }, { path: 'b.ts', insertLine: 0, text: 'b' }, { path: './a.ts', insertLine: 0, text: 'top' }]);
  assert.deepEqual(result.files.map((file) => [file.path, file.op === 'edit' ? file.edits.map((edit) => edit.kind) : []]), [['a.ts', ['replace', 'insert']], ['b.ts', ['insert']]]);
  assert.equal(rejected([{ path: 'a.ts', oldText: 'x', newText: 'y' }, { path: 'a.ts', content: 'z' }]), 'duplicate_file_patch');
  assert.equal(rejected([{ path: 'a.ts', content: 'z' }, { path: 'a.ts', insertLine: 0, text: 'b' }]), 'duplicate_file_patch');
  assert.equal(rejected([{ path: 'a.ts', content: 'z' }, { path: 'a.ts', content: 'w' }]), 'duplicate_file_patch');
});

test('edit text keeps its CRs (a JSON value, never transport); so does a write', () => {
  const result = parsed([{ path: 'a.ts', oldText: 'a\r\nb\r\n', newText: 'c\r\nd' }, { path: 'b.ts', content: 'x\r\n' }]);
  assert.deepEqual(result.files, [
    { op: 'edit', path: 'a.ts', edits: [{ kind: 'replace', search: 'a\r\nb\r\n', replace: 'c\r\nd', replaceAll: undefined, relativeIndent: false }] },
    { op: 'write', path: 'b.ts', content: 'x\r\n', mayReplace: false },
  ]);
});

test('malformed edits are parse errors; paths are checked', () => {
  assert.equal(rejected([]), 'parse_error');
  assert.equal(rejected('not a list'), 'parse_error');
  assert.equal(rejected([null]), 'parse_error');
  assert.equal(rejected([{ oldText: 'a', newText: 'b' }]), 'parse_error');
  assert.equal(rejected([{ path: 'a', oldText: 'a' }]), 'parse_error');
  assert.equal(rejected([{ path: 'a', oldText: 'a', newText: 'b', content: 'c' }]), 'parse_error');
  assert.equal(rejected([{ path: 'a', oldText: 'a', newText: 'b', replaceAll: 'yes' }]), 'parse_error');
  assert.equal(rejected([{ path: 'a', insertLine: -1, text: 'x' }]), 'parse_error');
  assert.equal(rejected([{ path: 'a', insertLine: 1.5, text: 'x' }]), 'parse_error');
  assert.equal(rejected([{ path: 'a', content: 'x', expectedSha256: 5 }]), 'parse_error');
  assert.equal(rejected([{ path: 'a' }]), 'parse_error');
  assert.equal(rejected([{ path: 'a', oldText: 'a\0', newText: 'b' }]), 'parse_error');
  assert.equal(rejected([{ path: '../x', content: 'x' }]), 'path_escape');
  assert.equal(rejected([{ path: '/etc/passwd', oldText: 'a', newText: 'b' }]), 'path_escape');
});

test('too many edits → limit_exceeded', () => {
  const many = Array.from({ length: LIMITS.maxOperations + 1 }, (_, index) => ({ path: `f${index}`, content: '' }));
  assert.equal(rejected(many), 'limit_exceeded');
});

test('parsePatch: edits take format auto or edits; one source of patch text, operations or edits', () => {
  const edits: StructuredEdit[] = [{ path: 'a', oldText: 'x', newText: 'y' }];
  assert.ok(parsePatch({ edits }).ok);
  assert.ok(parsePatch({ edits, format: 'edits' }).ok);
  for (const input of [{ edits, format: 'unified' as const }, { edits, patch: 'x' }, { edits, operations: [] }, { patch: 'x', format: 'edits' as const }, {}]) {
    const result = parsePatch(input);
    assert.ok(!result.ok);
    assert.equal(result.error.code, 'parse_error', JSON.stringify(input));
  }
});

test('end to end: a str_replace edit and a write planned from parsePatch', () => {
  const result = parsePatch({ edits: [{ path: 'a.py', oldText: '    return 1\n', newText: '    return 2\n' }, { path: 'new.py', content: 'print(1)\n' }] });
  assert.ok(result.ok);
  const encode = (text: string) => new TextEncoder().encode(text);
  const files = new Map<string, FileSnapshot>([['a.py', { kind: 'file', bytes: encode('def f():\n    return 1\n') }], ['new.py', { kind: 'missing' }]]);
  assert.deepEqual(requiredPaths(result.value), ['a.py', 'new.py']);
  const plan = planPatch(result.value, files);
  assert.ok(plan.ok);
  assert.equal(plan.value.dialect, 'edits');
  assert.deepEqual(plan.value.files.map((file) => [file.op, new TextDecoder().decode(file.after!)]), [['update', 'def f():\n    return 2\n'], ['add', 'print(1)\n']]);
});
