/** Which engine work stays on the main thread: small patches on small files; the costly shapes of input go to the pool. */
import assert from 'node:assert/strict';
import test from 'node:test';
import { parsePatch, type FileSnapshot, type PatchInput } from '../../daemon/engine/index.ts';
import { INLINE_LIMITS, parsesInline, plansInline, planUnits } from '../../daemon/pool/cost.ts';

const files = (entries: Record<string, string | null>): ReadonlyMap<string, FileSnapshot> =>
  new Map(Object.entries(entries).map(([path, text]) => [path, text === null ? { kind: 'missing' } : { kind: 'file', bytes: new TextEncoder().encode(text) }]));

function parsed(input: PatchInput) {
  const result = parsePatch(input);
  assert.ok(result.ok, result.ok ? '' : result.error.message);
  return result.value;
}

const oneLine = (path: string) => `--- a/${path}\n+++ b/${path}\n@@ -2 +2 @@\n-b\n+B\n`;

test('parsing: patch text, operations and edits count by their characters', () => {
  assert.equal(parsesInline({ patch: 'x'.repeat(INLINE_LIMITS.maxParseChars) }), true);
  assert.equal(parsesInline({ patch: 'x'.repeat(INLINE_LIMITS.maxParseChars + 1) }), false);
  assert.equal(parsesInline({ edits: [{ path: 'a', oldText: 'x'.repeat(INLINE_LIMITS.maxParseChars), newText: '' }] }), false);
  assert.equal(parsesInline({ operations: [{ type: 'update_file', path: 'a', diff: 'x'.repeat(INLINE_LIMITS.maxParseChars) }] }), false);
});

test('a one-line change to a small file is planned inline', () => {
  assert.equal(plansInline(parsed({ patch: oneLine('a.ts') }), files({ 'a.ts': 'a\nb\nc\nd\n' })), true);
});

test('the same change to a file of identical lines too long for the bound goes to the pool, however few its bytes', () => {
  const lines = Math.ceil(INLINE_LIMITS.maxPlanUnits / 10);
  const text = `a\nb\n${'a\n'.repeat(lines)}`;
  assert.ok(text.length < INLINE_LIMITS.maxPlanUnits / 4);
  assert.equal(plansInline(parsed({ patch: oneLine('a.ts') }), files({ 'a.ts': text })), false);
});

test('a file with more bytes than units allowed is not even counted', () => {
  const text = `a\nb\n${'x'.repeat(INLINE_LIMITS.maxPlanUnits)}\n`;
  assert.equal(planUnits(parsed({ patch: oneLine('a.ts') }), files({ 'a.ts': text })), Infinity);
});

test('long patch lines cost more than short ones on the same file', () => {
  const file = files({ 'a.ts': 'a\nb\nc\n' });
  const short = planUnits(parsed({ patch: oneLine('a.ts') }), file);
  const long = planUnits(parsed({ patch: `--- a/a.ts\n+++ b/a.ts\n@@ -2 +2 @@\n-${'b'.repeat(4_000)}\n+B\n` }), file);
  assert.ok(long > short * 10, `${long} vs ${short}`);
});

test('whole-content writes and replace-all edits count the file against itself', () => {
  const text = Array.from({ length: 150 }, (_, index) => `line ${index}\n`).join('');
  const file = files({ 'a.ts': text });
  assert.equal(plansInline(parsed({ edits: [{ path: 'a.ts', oldText: 'line 7\n', newText: 'seven\n' }] }), file), true);
  assert.equal(plansInline(parsed({ edits: [{ path: 'a.ts', oldText: 'line 7\n', newText: 'seven\n', replaceAll: true }] }), file), false);
  assert.equal(plansInline(parsed({ edits: [{ path: 'a.ts', content: text.toUpperCase(), expectedSha256: '0'.repeat(64) }] }), file), false);
  assert.equal(plansInline(parsed({ edits: [{ path: 'b.ts', content: 'new\n' }] }), files({ 'b.ts': null })), true);
});

test('every file patch counts against its own file, a rename against its source', () => {
  const big = `a\nb\n${'a\n'.repeat(Math.ceil(INLINE_LIMITS.maxPlanUnits / 10))}`;
  const rename = `diff --git a/big.ts b/moved.ts\nsimilarity index 90%\nrename from big.ts\nrename to moved.ts\n--- a/big.ts\n+++ b/moved.ts\n@@ -2 +2 @@\n-b\n+B\n`;
  assert.equal(plansInline(parsed({ patch: rename }), files({ 'big.ts': big, 'moved.ts': null })), false);
  assert.equal(plansInline(parsed({ patch: `${oneLine('a.ts')}${oneLine('c.ts')}` }), files({ 'a.ts': 'a\nb\n', 'c.ts': 'a\nb\n' })), true);
});
