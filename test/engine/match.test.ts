import assert from 'node:assert/strict';
import test from 'node:test';
import { findAnchor, findNearestRegion, LineIndex, seekAll, seekBefore, seekHunk } from '../../daemon/engine/match.ts';
import { decodeText, indexText, lineAt } from '../../daemon/engine/text.ts';
import { ALL_TIERS, EXACT_ONLY, normalizeLine } from '../../daemon/engine/tiers.ts';

const linesOf = (lines: string[]) => new LineIndex(indexText(`${lines.join('\n')}\n`));

const file = linesOf(['a', 'b', 'c', 'a', 'b', 'd', '  indented  ', 'say “hi” — now']);

test('LineIndex reads every line as lineAt does, in either view, block edges and the unterminated last line included', () => {
  const text = Array.from({ length: 41 }, (_, index) => `line ${index}${['\n', '\r\n', '\r\r\n'][index % 3]}`).join('') + 'last\r';
  const decoded = decodeText(new TextEncoder().encode(text), 'f');
  assert.ok(decoded.ok);
  const source = decoded.value;
  const order = Array.from({ length: 42 }, (_, index) => (index * 17) % 42);
  for (const view of ['content', 'raw'] as const) {
    const index = new LineIndex(source, view);
    assert.deepEqual(order.map((line) => index.line(line)), order.map((line) => lineAt(source, line, view)), view);
  }
});

test('exact match is found and reported at the exact tier', () => {
  assert.deepEqual(seekHunk(file, { old: ['b', 'd'], from: 0, atEnd: false, tiers: ALL_TIERS }), { kind: 'found', start: 4, tier: 'exact' });
});

test('two matches are ambiguous, with the lines listed', () => {
  assert.deepEqual(seekHunk(file, { old: ['a', 'b'], from: 0, atEnd: false, tiers: ALL_TIERS }), { kind: 'ambiguous', starts: [0, 3], tier: 'exact' });
});

test('a hint that sits on one of the matches resolves the ambiguity', () => {
  assert.deepEqual(seekHunk(file, { old: ['a', 'b'], from: 0, hint: 3, atEnd: false, tiers: ALL_TIERS }), { kind: 'found', start: 3, tier: 'exact' });
});

test('a hint between the matches does not resolve it', () => {
  assert.equal(seekHunk(file, { old: ['a', 'b'], from: 0, hint: 2, atEnd: false, tiers: ALL_TIERS }).kind, 'ambiguous');
});

test('the search starts at `from`', () => {
  assert.deepEqual(seekHunk(file, { old: ['a', 'b'], from: 1, atEnd: false, tiers: ALL_TIERS }), { kind: 'found', start: 3, tier: 'exact' });
});

test('tiers: trailing whitespace, surrounding whitespace, unicode punctuation', () => {
  assert.equal(seekHunk(file, { old: ['  indented'], from: 0, atEnd: false, tiers: ALL_TIERS }).kind, 'found');
  assert.deepEqual(seekHunk(file, { old: ['  indented'], from: 0, atEnd: false, tiers: ALL_TIERS }), { kind: 'found', start: 6, tier: 'trailing_whitespace' });
  assert.deepEqual(seekHunk(file, { old: ['indented'], from: 0, atEnd: false, tiers: ALL_TIERS }), { kind: 'found', start: 6, tier: 'whitespace' });
  assert.deepEqual(seekHunk(file, { old: ['say "hi" - now'], from: 0, atEnd: false, tiers: ALL_TIERS }), { kind: 'found', start: 7, tier: 'unicode' });
});

test('fuzz exact turns the tiers off', () => {
  assert.equal(seekHunk(file, { old: ['indented'], from: 0, atEnd: false, tiers: EXACT_ONLY }).kind, 'missing');
});

test('atEnd only accepts a match that ends the file', () => {
  const lines = linesOf(['x', 'y', 'x']);
  assert.deepEqual(seekHunk(lines, { old: ['x'], from: 0, atEnd: true, tiers: ALL_TIERS }), { kind: 'found', start: 2, tier: 'exact' });
  assert.equal(seekHunk(lines, { old: ['y'], from: 0, atEnd: true, tiers: ALL_TIERS }).kind, 'missing');
});

test('the lowest tier wins over a looser match at the hint', () => {
  const lines = linesOf(['x ', 'other', 'x']);
  assert.deepEqual(seekHunk(lines, { old: ['x'], from: 0, hint: 0, atEnd: false, tiers: ALL_TIERS }), { kind: 'found', start: 2, tier: 'exact' });
});

test('repeated searches at a tier use the position index and agree with a scan', () => {
  const lines = linesOf(['k', 'v', 'k', 'w', 'k', 'v']);
  for (let round = 0; round < 3; round++) {
    assert.deepEqual(seekHunk(lines, { old: ['k', 'w'], from: 0, atEnd: false, tiers: ALL_TIERS }), { kind: 'found', start: 2, tier: 'exact' });
    assert.deepEqual(seekHunk(lines, { old: ['k', 'v'], from: 1, atEnd: false, tiers: ALL_TIERS }), { kind: 'found', start: 4, tier: 'exact' });
  }
});

test('anchors are found at or after `from`, through the tiers', () => {
  assert.deepEqual(findAnchor(file, 'a', 1, ALL_TIERS), { index: 3, tier: 'exact' });
  assert.deepEqual(findAnchor(file, 'indented', 0, ALL_TIERS), { index: 6, tier: 'whitespace' });
  assert.equal(findAnchor(file, 'zzz', 0, ALL_TIERS), undefined);
});

test('the nearest region is where most old lines line up', () => {
  const lines = linesOf(['one', 'two', 'three', 'four', 'five']);
  assert.deepEqual(findNearestRegion(lines, ['two', 'THREE', 'four'], 0), { line: 2, text: 'two\nthree\nfour', similarity: 0.67 });
  assert.equal(findNearestRegion(lines, ['nothing', 'alike'], 0), undefined);
});

test('normalizeLine folds smart quotes, dashes and non-breaking spaces', () => {
  assert.equal(normalizeLine('unicode', '\u00A0‘a’ – “b”…'), `'a' - "b"...`);
});

test('accept narrows the matches: one accepted match of two is found', () => {
  assert.deepEqual(seekHunk(file, { old: ['a', 'b'], from: 0, atEnd: false, tiers: ALL_TIERS, accept: (start) => start > 0 }), { kind: 'found', start: 3, tier: 'exact' });
  assert.deepEqual(seekHunk(file, { old: ['a', 'b'], from: 0, hint: 0, atEnd: false, tiers: ALL_TIERS, accept: (start) => start > 0 }), { kind: 'found', start: 3, tier: 'exact' });
  assert.equal(seekHunk(file, { old: ['a', 'b'], from: 0, atEnd: false, tiers: ALL_TIERS, accept: () => false }).kind, 'missing');
});

test('seekAll: every non-overlapping match, top to bottom, at the lowest tier that has one', () => {
  const repeats = linesOf(['x', 'x', 'x', 'y', 'x', 'x', ' x ']);
  assert.deepEqual(seekAll(repeats, { old: ['x', 'x'], from: 0, atEnd: false, tiers: ALL_TIERS }), { starts: [0, 4], tier: 'exact' });
  assert.deepEqual(seekAll(repeats, { old: ['y'], from: 0, atEnd: false, tiers: ALL_TIERS }), { starts: [3], tier: 'exact' });
  assert.deepEqual(seekAll(repeats, { old: ['x '], from: 0, atEnd: false, tiers: ALL_TIERS }), { starts: [0, 1, 2, 4, 5], tier: 'trailing_whitespace' });
  assert.deepEqual(seekAll(repeats, { old: [' x'], from: 0, atEnd: false, tiers: ALL_TIERS }), { starts: [6], tier: 'trailing_whitespace' });
  assert.equal(seekAll(repeats, { old: ['z'], from: 0, atEnd: false, tiers: ALL_TIERS }), undefined);
});

test('seekBefore: the starts before a line at one tier, whatever `from` says; a match may run past that line', () => {
  const request = { old: ['a', 'b'], from: 5, atEnd: false, tiers: ALL_TIERS };
  assert.deepEqual(seekBefore(file, request, 'exact', 5), [0, 3]);
  assert.deepEqual(seekBefore(file, request, 'exact', 4), [0, 3]);
  assert.deepEqual(seekBefore(file, request, 'exact', 3), [0]);
  assert.deepEqual(seekBefore(file, request, 'exact', 0), []);
  assert.deepEqual(seekBefore(file, { ...request, old: ['indented'] }, 'exact', 8), []);
  assert.deepEqual(seekBefore(file, { ...request, old: ['indented'] }, 'whitespace', 8), [6]);
  assert.deepEqual(seekBefore(file, { ...request, old: ['d'], atEnd: true }, 'exact', 8), [], 'held to the end, a match elsewhere does not count');
});
