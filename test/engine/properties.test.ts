/** Laws of the engine, checked on random inputs (fast-check). */
import assert from 'node:assert/strict';
import test from 'node:test';
import { applyPatch, createTwoFilesPatch } from 'diff';
import fc from 'fast-check';
import { parsePatch } from '../../daemon/engine/index.ts';
import { diffVersions } from '../../daemon/engine/receiptDiff.ts';
import { planOnText } from '../helpers/planText.ts';

const decode = (bytes: Uint8Array | null) => new TextDecoder().decode(bytes ?? new Uint8Array());

/** Lines from a small alphabet, so that repeats (and so ambiguity) are common. */
const line = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', '', '  indented', 'x = 1;', '}', 'tail\t');
const text = fc.tuple(fc.array(line, { maxLength: 40 }), fc.boolean()).map(([lines, finalNewline]) =>
  lines.length === 0 ? '' : lines.join('\n') + (finalNewline ? '\n' : ''));

function unifiedDiff(a: string, b: string): string {
  return createTwoFilesPatch('a/f.txt', 'b/f.txt', a, b, undefined, undefined, { context: 3 });
}

test('a unified diff of a→b applies to a giving b', () => {
  fc.assert(fc.property(text, text, (a, b) => {
    fc.pre(a !== b);
    const result = planOnText({ patch: unifiedDiff(a, b) }, a);
    assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}`);
    assert.equal(decode(result.value.files[0]!.after), b);
  }), { numRuns: 400 });
});

const HUNK_HEADER = /^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@/gm;

function hunkOldBlocks(patch: string): string[][] {
  return patch.split(/^@@.*$/m).slice(1).map((body) =>
    body.split('\n').filter((row) => row.startsWith(' ') || row.startsWith('-')).map((row) => row.slice(1)));
}

function occurrences(haystack: readonly string[], block: readonly string[]): number {
  let count = 0;
  for (let start = 0; start + block.length <= haystack.length; start++) {
    if (block.every((row, offset) => haystack[start + offset] === row)) count++;
  }
  return count;
}

test('with line numbers shifted or removed, a diff still gives b when every hunk is unique in a', () => {
  const drift = fc.oneof(fc.constant<number | 'none'>('none'), fc.integer({ min: -40, max: 40 }));
  fc.assert(fc.property(text, text, drift, (a, b, shift) => {
    fc.pre(a !== b);
    const original = unifiedDiff(a, b);
    const blocks = hunkOldBlocks(original);
    const aLines = a.split('\n');
    fc.pre(blocks.every((block) => block.length > 0 && occurrences(aLines, block) === 1));
    const drifted = original.replace(HUNK_HEADER, (_all, oldStart: string, oldCount = '', newStart: string, newCount = '') =>
      shift === 'none' ? '@@ @@' : `@@ -${Math.max(1, Number(oldStart) + shift)}${oldCount} +${Math.max(1, Number(newStart) + shift)}${newCount} @@`);
    const result = planOnText({ patch: drifted }, a);
    assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}\n${drifted}`);
    assert.equal(decode(result.value.files[0]!.after), b);
  }), { numRuns: 400 });
});

test('the engine never throws, and a rejection never carries a plan', () => {
  const mutation = fc.record({ at: fc.nat(), insert: fc.string({ maxLength: 12 }), remove: fc.nat({ max: 12 }) });
  fc.assert(fc.property(text, text, fc.array(mutation, { maxLength: 4 }), (a, b, mutations) => {
    let patch = unifiedDiff(a, b);
    for (const { at, insert, remove } of mutations) {
      const position = at % (patch.length + 1);
      patch = patch.slice(0, position) + insert + patch.slice(position + remove);
    }
    const result = planOnText({ patch }, a);
    if (!result.ok) {
      assert.equal('value' in result, false);
      assert.equal(typeof result.error.hint, 'string');
    }
  }), { numRuns: 400 });
});

test('arbitrary strings never make the parser throw', () => {
  fc.assert(fc.property(fc.string({ maxLength: 300 }), fc.constantFrom('auto', 'unified', 'codex') as fc.Arbitrary<'auto'>, (patch, format) => {
    const result = parsePatch({ patch, format });
    assert.equal(typeof result.ok, 'boolean');
  }), { numRuns: 1000 });
});

// ─── SEARCH/REPLACE blocks and structured edits ─────────────────────────────────────────────────

/** A file as lines plus its final-newline state; a last empty line needs a final newline to exist. */
const fileLines = fc.tuple(fc.array(line, { minLength: 1, maxLength: 30 }), fc.boolean()).map(([lines, finalNewline]) => ({
  lines, finalNewline: finalNewline || lines[lines.length - 1] === '',
}));
const joinFile = (lines: readonly string[], finalNewline: boolean) => (lines.length === 0 ? '' : lines.join('\n') + (finalNewline ? '\n' : ''));
const wholeLines = (lines: readonly string[]) => lines.map((row) => `${row}\n`).join('');

test('a SEARCH/REPLACE block and the equivalent str_replace edit give the same bytes, the region replaced', () => {
  const region = fc.record({ start: fc.nat(), length: fc.integer({ min: 1, max: 5 }), replacement: fc.array(line, { maxLength: 4 }) });
  fc.assert(fc.property(fileLines, region, ({ lines, finalNewline }, { start: rawStart, length: rawLength, replacement }) => {
    const start = rawStart % lines.length;
    const old = lines.slice(start, start + rawLength);
    fc.pre(old.some((row) => row.trim() !== '') && occurrences(lines, old) === 1);
    const before = joinFile(lines, finalNewline);
    const block = `f.txt\n<<<<<<< SEARCH\n${wholeLines(old)}=======\n${wholeLines(replacement)}>>>>>>> REPLACE\n`;
    const viaBlock = planOnText({ patch: block }, before);
    const viaEdit = planOnText({ edits: [{ path: 'f.txt', oldText: wholeLines(old), newText: wholeLines(replacement) }] }, before);
    assert.ok(viaBlock.ok && viaEdit.ok, `${viaBlock.ok ? '' : viaBlock.error.message} ${viaEdit.ok ? '' : viaEdit.error.message}`);
    const expected = [...lines.slice(0, start), ...replacement, ...lines.slice(start + old.length)];
    assert.equal(decode(viaBlock.value.files[0]!.after), joinFile(expected, finalNewline));
    assert.deepEqual(viaEdit.value.files[0]!.after, viaBlock.value.files[0]!.after);
  }), { numRuns: 500 });
});

test('SEARCH/REPLACE-ish and shell-ish text never makes parsing or planning throw', () => {
  const fragment = fc.oneof(
    fc.constantFrom('<<<<<<< SEARCH', '<<<<< SEARCH>', '=======', '=====  ', '>>>>>>> REPLACE', '>>>>>>>>> REPLACE', '```', '```python', '````',
      'f.txt', '**f.txt**:', '### `f.txt`', '../x', '/etc/passwd', '', '  ', 'alpha', '  indented', "cd sub && apply_patch <<'EOF'",
      "apply_patch <<'EOF'", 'EOF', '*** Begin Patch', '*** End Patch', '*** Update File: f.txt', '-alpha', '+beta', '@@'),
    fc.string({ maxLength: 12 }),
  );
  const format = fc.constantFrom('auto', 'search-replace', 'shell', 'codex') as fc.Arbitrary<'auto'>;
  fc.assert(fc.property(fc.array(fragment, { maxLength: 30 }), fc.boolean(), format, text, (fragments, crlf, chosen, before) => {
    const patch = fragments.join(crlf ? '\r\n' : '\n');
    const result = planOnText({ patch, format: chosen }, before);
    if (!result.ok) assert.equal(typeof result.error.hint, 'string');
  }), { numRuns: 1500 });
});

test('the receipt diff of an edit applies to the old text and gives the new one', () => {
  const edit = fc.record({ at: fc.nat(), remove: fc.nat({ max: 6 }), insert: fc.array(line, { maxLength: 6 }) });
  fc.assert(fc.property(fileLines, fc.array(edit, { minLength: 1, maxLength: 3 }), fc.boolean(), ({ lines, finalNewline }, edits, newFinal) => {
    let after = [...lines];
    for (const { at, remove, insert } of edits) after.splice(at % (after.length + 1), remove, ...insert);
    const last = after[after.length - 1];
    const oldText = joinFile(lines, finalNewline);
    const newText = joinFile(after, newFinal || last === '');
    const diff = diffVersions('a/f', oldText, 'b/f', newText);
    assert.equal(diff === '' ? oldText : applyPatch(oldText, diff), newText, diff);
  }), { numRuns: 1000 });
});
