/** The list of hostile inputs, through the engine's public entry point: a typed error each, never a throw. */
import assert from 'node:assert/strict';
import test from 'node:test';
import { LIMITS, parsePatch, type FormatName, type PatchInput } from '../../daemon/engine/index.ts';

function rejectedWith(patch: string, format: FormatName = 'auto') {
  const result = parsePatch({ patch, format });
  assert.ok(!result.ok, 'expected a typed error');
  assert.equal(typeof result.error.hint, 'string');
  return result.error;
}

test('an empty or blank patch is parse_error in every text dialect', () => {
  for (const format of ['auto', 'unified', 'codex', 'search-replace', 'shell'] as const) {
    assert.equal(rejectedWith('', format).code, 'parse_error', format);
    assert.equal(rejectedWith('\n\n  \n', format).code, 'parse_error', format);
  }
});

test('random bytes are a typed error', () => {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let round = 0; round < 50; round++) {
    const bytes = Uint8Array.from({ length: 2_000 }, () => next() % 256);
    const text = new TextDecoder().decode(bytes);
    const result = parsePatch({ patch: text });
    assert.ok(!result.ok, 'random bytes parsed as a patch');
  }
});

test('a context diff (diff -c) or a normal diff (diff) is a parse_error that names the format and asks for diff -u', () => {
  const context = '*** old/f.txt\t2026-11-27 07:56:51.949680468 +0000\n--- new/f.txt\t2026-11-27 07:56:51.949680468 +0000\n***************\n*** 1,3 ****\n  a\n! b\n  c\n--- 1,3 ----\n  a\n! B\n  c\n';
  const normal = '2c2\n< b\n---\n> B\n4a5,6\n> x\n> y\n';
  for (const [patch, name] of [[context, 'a context diff (`diff -c`)'], [normal, 'a normal diff (`diff` without `-u`)'], [normal.replaceAll('\n', '\r\n'), 'a normal diff']] as const) {
    const error = rejectedWith(patch);
    assert.equal(error.code, 'parse_error');
    assert.ok(error.message.includes(`This is ${name}`), error.message);
    assert.match(error.message, /make the diff with `diff -u`/);
  }
  assert.doesNotMatch(rejectedWith('just some prose\n< not a diff\n').message, /This is/);
});

test('NUL bytes are refused', () => {
  assert.equal(rejectedWith('--- a/x\n+++ b/x\n@@\n-a\0\n+b\n').code, 'parse_error');
});

test('a 20 MB patch is limit_exceeded, naming the limit', () => {
  const error = rejectedWith(`--- a/x\n+++ b/x\n@@\n${'+line of text\n'.repeat(1_500_000)}`);
  assert.equal(error.code, 'limit_exceeded');
  assert.equal(error.limit?.name, 'maxPatchChars');
  assert.equal(error.limit?.max, LIMITS.maxPatchChars);
});

test('a 1 MB single line is limit_exceeded', () => {
  const error = rejectedWith(`--- a/x\n+++ b/x\n@@\n+${'x'.repeat(1024 * 1024)}\n`);
  assert.equal(error.code, 'limit_exceeded');
  assert.equal(error.limit?.name, 'maxLineChars');
});

test('100,000 hunks are limit_exceeded, in unified and envelope form', () => {
  const unified = `--- a/x\n+++ b/x\n${'@@\n-a\n+b\n'.repeat(100_000)}`;
  assert.equal(rejectedWith(unified).limit?.name, 'maxHunks');
  const envelope = `*** Begin Patch\n*** Update File: x\n${'@@\n-a\n+b\n'.repeat(100_000)}*** End Patch\n`;
  assert.equal(rejectedWith(envelope).code, 'limit_exceeded');
});

test('100,000 files are limit_exceeded, in unified and envelope form', () => {
  const unified = Array.from({ length: 100_000 }, (_, index) => `--- a/f${index}\n+++ b/f${index}\n@@\n-a\n+b\n`).join('');
  assert.equal(rejectedWith(unified).code, 'limit_exceeded');
  const envelope = `*** Begin Patch\n${Array.from({ length: 100_000 }, (_, index) => `*** Delete File: f${index}\n`).join('')}*** End Patch\n`;
  assert.equal(rejectedWith(envelope).limit?.name, 'maxFiles');
});

test('100,000 V4A operations are limit_exceeded', () => {
  const operations = Array.from({ length: 100_000 }, (_, index) => ({ type: 'delete_file' as const, path: `f${index}` }));
  const result = parsePatch({ operations });
  assert.ok(!result.ok);
  assert.equal(result.error.limit?.name, 'maxOperations');
});

test(`a path over ${LIMITS.maxPathChars} characters is limit_exceeded in every dialect and wherever a patch names one; the error names no path`, () => {
  const long = 'z'.repeat(5_000);
  const deep = `${'d/'.repeat(2_500)}x`;
  const inputs: Record<string, PatchInput> = {
    'unified add': { patch: `--- /dev/null\n+++ b/${long}\n@@ -0,0 +1 @@\n+x\n` },
    'unified, 2,500 components': { patch: `--- /dev/null\n+++ b/${deep}\n@@ -0,0 +1 @@\n+x\n` },
    'unified update, no hunks': { patch: `--- a/${long}\n+++ b/${long}\n` },
    'git diff': { patch: `diff --git a/${long} b/${long}\n--- a/${long}\n+++ b/${long}\n@@ -1 +1 @@\n-a\n+b\n` },
    'git rename target': { patch: `diff --git a/a.txt b/${long}\nsimilarity index 100%\nrename from a.txt\nrename to ${long}\n` },
    'envelope add': { patch: `*** Begin Patch\n*** Add File: ${long}\n+x\n*** End Patch\n` },
    'envelope move to': { patch: `*** Begin Patch\n*** Update File: a.txt\n*** Move to: ${deep}\n@@\n-a\n+b\n*** End Patch\n` },
    'envelope move file': { patch: `*** Begin Patch\n*** Move File: a.txt -> ${long}\n*** End Patch\n` },
    'search-replace': { patch: `${long}\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n` },
    'shell heredoc after cd': { patch: `cd ${'z'.repeat(3_000)} && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: ${'y'.repeat(3_000)}\n+x\n*** End Patch\nEOF\n` },
    'V4A': { operations: [{ type: 'create_file', path: long, diff: '+x\n' }] },
    'str_replace edit': { edits: [{ path: long, oldText: 'a', newText: 'b' }] },
    'whole-file write': { edits: [{ path: deep, content: 'x\n' }] },
  };
  for (const [name, input] of Object.entries(inputs)) {
    const result = parsePatch(input);
    assert.ok(!result.ok, `${name}: parsed`);
    assert.equal(result.error.code, 'limit_exceeded', `${name}: ${result.error.code} ${result.error.message.slice(0, 200)}`);
    assert.equal(result.error.limit?.name, 'maxPathChars', name);
    assert.equal(result.error.limit?.max, LIMITS.maxPathChars, name);
    assert.equal(result.error.path, undefined, name);
  }
});
