/**
 * Hunks of one file are located in order, each after the previous one (DESIGN, Matching). A
 * hunk whose line numbers put it before the previous hunk and whose text matches there as well
 * as further down is refused, never placed on the copy further down; one whose text is only
 * further down still goes there, and in-order hunks are placed as before.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import type { Plan, Result } from '../../daemon/engine/index.ts';
import { planOnText } from '../helpers/planText.ts';

const decode = (bytes: Uint8Array | null) => new TextDecoder().decode(bytes ?? new Uint8Array());
const numbered = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, offset) => `l${from + offset}`);

/** 72 lines: `dup1`–`dup3` at lines 10–12 and again at 70–72, `u1`–`u3` at 50–52, `lN` on every other line N. */
const LINES = [...numbered(1, 9), 'dup1', 'dup2', 'dup3', ...numbered(13, 49), 'u1', 'u2', 'u3', ...numbered(53, 69), 'dup1', 'dup2', 'dup3'];
const FILE = `${LINES.join('\n')}\n`;

const HUNK_U = ['@@ -50,3 +50,3 @@', ' u1', '-u2', '+U2', ' u3'];
const hunkDup = (start: number) => [`@@ -${start},3 +${start},3 @@`, ' dup1', '-dup2', '+DUP2', ' dup3'];
const unified = (...hunks: string[][]) => `${['--- a/f.txt', '+++ b/f.txt', ...hunks.flat()].join('\n')}\n`;

function plan(patch: string, text = FILE): Result<Plan> {
  return planOnText({ patch }, text);
}

/** The new file's lines, and where each hunk was placed (1-based). */
function applied(result: Result<Plan>): { lines: string[]; placed: number[] } {
  assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}`);
  const [file] = result.value.files;
  return { lines: decode(file!.after).split('\n'), placed: file!.hunks.map((hunk) => hunk.line) };
}

test('a hunk numbered before the previous one, matching there and further down, is refused, naming both places', () => {
  const result = plan(unified(HUNK_U, hunkDup(10)));
  assert.ok(!result.ok, 'a misordered hunk with an earlier match must not apply');
  assert.equal(result.error.code, 'ambiguous_context');
  assert.equal(result.error.path, 'f.txt');
  assert.equal(result.error.hunkIndex, 1);
  assert.match(result.error.message, /^Hunk 2 of f\.txt matches line 10, before hunk 1 \(line 50\), and again at line 70; /);
  assert.match(result.error.message, /Hunks must be in file order\.$/);
});

test('the same hunks in file order apply where their numbers say', () => {
  const { lines, placed } = applied(plan(unified(hunkDup(10), HUNK_U)));
  assert.deepEqual(placed, [10, 50]);
  assert.equal(lines.indexOf('DUP2'), 10);
  assert.equal(lines.lastIndexOf('dup2'), 70);
});

test('a hunk numbered before the previous one whose text is only further down still applies there', () => {
  const later = ['@@ -10,3 +10,3 @@', ' l60', '-l61', '+L61', ' l62'];
  const result = plan(unified(HUNK_U, later));
  const { lines, placed } = applied(result);
  assert.deepEqual(placed, [50, 60]);
  assert.equal(lines[60], 'L61');
  assert.ok(result.ok);
  assert.equal(result.value.files[0]!.hunks[1]!.offset, 50);
});

test('in file order, a hunk whose text also occurs before the previous hunk applies after it, at its numbers or drifted', () => {
  for (const start of [70, 68, 73]) {
    const { lines, placed } = applied(plan(unified(HUNK_U, hunkDup(start))));
    assert.deepEqual(placed, [50, 70], `numbered ${start}`);
    assert.equal(lines[10], 'dup2', 'the copy before hunk 1 is left alone');
    assert.equal(lines[70], 'DUP2');
  }
  const drifted = ['l0', ...LINES.slice(0, 60), 'new', ...LINES.slice(60)].join('\n') + '\n';
  const { lines, placed } = applied(plan(unified(HUNK_U, hunkDup(70)), drifted));
  assert.deepEqual(placed, [51, 72]);
  assert.deepEqual([lines[11], lines[72]], ['dup2', 'DUP2']);
});

test('a hunk numbered inside the previous one, matching across it and further down, is refused', () => {
  const text = ['a', 'b', 'c', 'd', 'x', 'c', 'd', 'y'].join('\n') + '\n';
  const result = plan(unified(['@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c'], ['@@ -3,2 +3,2 @@', ' c', '-d', '+D']), text);
  assert.ok(!result.ok, 'must not apply at the copy further down');
  assert.equal(result.error.code, 'ambiguous_context');
  assert.match(result.error.message, /^Hunk 2 of f\.txt matches line 3, before the end of hunk 1 \(lines 1–3\), and again at line 6; /);
});

test('the earlier text counts at the tier the hunk was found at: looser copies before do not refuse it, stricter ones do', () => {
  const spaced = (at: number) => LINES.map((line, index) => (index >= at && index < at + 3 ? `${line}  ` : line)).join('\n') + '\n';
  const { lines, placed } = applied(plan(unified(HUNK_U, hunkDup(10)), spaced(9)));
  assert.deepEqual(placed, [50, 70], 'found exactly at line 70; the copy at line 10 matches only with trailing whitespace ignored');
  assert.equal(lines[70], 'DUP2');
  const result = plan(unified(HUNK_U, hunkDup(10)), spaced(69));
  assert.ok(!result.ok, 'found at line 70 only with whitespace ignored, while line 10 matches exactly');
  assert.equal(result.error.code, 'ambiguous_context');
});

test('every copy above the previous hunk is listed', () => {
  const text = ['dup1', 'dup2', 'dup3', ...LINES].join('\n') + '\n';
  const result = plan(unified(['@@ -53,3 +53,3 @@', ' u1', '-u2', '+U2', ' u3'], hunkDup(13)), text);
  assert.ok(!result.ok);
  assert.match(result.error.message, /^Hunk 2 of f\.txt matches lines 1, 13, before hunk 1 \(line 53\), and again at line 73; /);
});
