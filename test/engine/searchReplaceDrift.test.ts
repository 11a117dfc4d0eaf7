/**
 * SEARCH/REPLACE blocks (Aider's format) on a file that moved on since the model read it: lines
 * added and removed elsewhere, the searched block re-indented as a whole. Checked on random
 * inputs against an oracle: the block's own place replaced, the REPLACE lines shifted by the
 * same indentation (DESIGN: relative indentation), or a refusal — never another place changed;
 * already_applied only when the change would leave the file as it is.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { planOnText } from '../helpers/planText.ts';

const decode = (bytes: Uint8Array | null) => new TextDecoder().decode(bytes ?? new Uint8Array());

/** Code-like lines at a few indentations, so that a block often occurs again, shifted or not. */
const line = fc.constantFrom('def f():', '    return x', '    x = 1', '', 'if ok:', '        go()', 'end', '  # note', 'x = 1');
const nonBlank = line.filter((text) => text !== '');

interface Change {
  readonly old: readonly string[];
  /** The searched block: `[start, start + length)` of `old`. */
  readonly start: number;
  readonly length: number;
  readonly replacement: readonly string[];
  readonly inserts: ReadonlyArray<{ readonly at: number; readonly count: number }>;
  readonly deletes: readonly number[];
  /** Spaces the block's lines gain (or, negative, lose) in the drifted file. */
  readonly indent: number;
}

const change: fc.Arbitrary<Change> = fc.record({
  old: fc.tuple(nonBlank, fc.array(line, { maxLength: 30 })).map(([first, rest]) => [first, ...rest]),
  start: fc.nat(),
  length: fc.integer({ min: 1, max: 5 }),
  replacement: fc.array(line, { maxLength: 4 }),
  inserts: fc.array(fc.record({ at: fc.nat(), count: fc.integer({ min: 1, max: 3 }) }), { maxLength: 3 }),
  deletes: fc.array(fc.nat(), { maxLength: 3 }),
  indent: fc.constantFrom(0, 0, 2, 4, -2, -4),
}).map((raw) => {
  // The block starts and ends with a non-blank line: a leading blank SEARCH line has a rule of its own (editMatch.ts).
  let start = raw.start % raw.old.length;
  while (raw.old[start] === '') start--;
  let end = Math.min(start + raw.length, raw.old.length);
  while (raw.old[end - 1] === '') end--;
  return { ...raw, start, length: end - start };
});

const leading = (text: string) => /^ */.exec(text)![0].length;
const isBlank = (text: string) => text.trim() === '';

function shifted(text: string, indent: number): string {
  if (isBlank(text)) return text;
  return indent >= 0 ? ' '.repeat(indent) + text : text.slice(Math.min(-indent, leading(text)));
}

interface Case {
  readonly patch: string;
  readonly drifted: string;
  readonly expected: string;
  /** The block matches once, at its own place, at the first tier that matches it anywhere. */
  readonly unique: boolean;
  /** Its own place is among the matches of that first tier. */
  readonly ownPlaceFirst: boolean;
}

function caseOf({ old, start, length, replacement, inserts, deletes, indent: wanted }: Change): Case {
  const end = start + length;
  const search = old.slice(start, end);
  // A block can lose only the indentation all of its lines have.
  const indent = wanted >= 0 || search.every((text) => isBlank(text) || leading(text) >= -wanted) ? wanted : 0;
  const before = new Map<number, string[]>();
  let fresh = 0;
  for (const { at, count } of inserts) {
    const index = at % (old.length + 1);
    if (index > start && index < end) continue;
    before.set(index, [...(before.get(index) ?? []), ...Array.from({ length: count }, () => `fresh line ${fresh++}`)]);
  }
  const deleted = new Set(deletes.map((at) => at % old.length).filter((index) => index < start || index >= end));
  const drifted: string[] = [];
  const after: string[] = [];
  let own = -1;
  for (let index = 0; index <= old.length; index++) {
    drifted.push(...(before.get(index) ?? []));
    after.push(...(before.get(index) ?? []));
    if (index === old.length) break;
    if (index === start) {
      own = drifted.length;
      after.push(...replacement.map((text) => shifted(text, indent)));
    }
    if (deleted.has(index)) continue;
    drifted.push(index >= start && index < end ? shifted(old[index]!, indent) : old[index]!);
    if (index < start || index >= end) after.push(old[index]!);
  }
  const starts = firstTierMatches(drifted, search);
  return {
    patch: ['f.py', '<<<<<<< SEARCH', ...search, '=======', ...replacement, '>>>>>>> REPLACE', ''].join('\n'),
    drifted: joined(drifted),
    expected: joined(after),
    unique: starts.length === 1 && starts[0] === own,
    ownPlaceFirst: starts.includes(own),
  };
}

const joined = (rows: readonly string[]) => rows.map((row) => `${row}\n`).join('');

/** The block at `start` with every non-blank line moved by one indentation, and blank lines blank. */
function uniformlyShifted(haystack: readonly string[], block: readonly string[], start: number): boolean {
  let delta: number | undefined;
  for (const [offset, row] of block.entries()) {
    const there = haystack[start + offset]!;
    if (isBlank(row) || isBlank(there)) {
      if (isBlank(row) !== isBlank(there)) return false;
      continue;
    }
    if (there.trimStart() !== row.trimStart()) return false;
    const here = leading(there) - leading(row);
    if (delta !== undefined && delta !== here) return false;
    delta = here;
  }
  return true;
}

/** The tiers of a SEARCH/REPLACE block, strictest first (editMatch.ts); the alphabet has no trailing space or typography. */
const TIERS: ReadonlyArray<(haystack: readonly string[], block: readonly string[], start: number) => boolean> = [
  (haystack, block, start) => block.every((row, offset) => haystack[start + offset] === row),
  uniformlyShifted,
  (haystack, block, start) => block.every((row, offset) => haystack[start + offset]!.trim() === row.trim()),
];

function firstTierMatches(haystack: readonly string[], block: readonly string[]): number[] {
  for (const matches of TIERS) {
    const starts: number[] = [];
    for (let start = 0; start + block.length <= haystack.length; start++) if (matches(haystack, block, start)) starts.push(start);
    if (starts.length > 0) return starts;
  }
  return [];
}

test('SEARCH/REPLACE through drift and re-indentation: the block\'s own place, REPLACE shifted alike, or a refusal', () => {
  fc.assert(fc.property(change, (input) => {
    const found = caseOf(input);
    if (!found.ownPlaceFirst) return;
    const result = planOnText({ patch: found.patch }, found.drifted);
    const outcome = result.ok ? `applied:\n${decode(result.value.files[0]!.after)}` : `${result.error.code}: ${result.error.message}`;
    const detail = `patch:\n${found.patch}\ndrifted file:\n${found.drifted}\nexpected:\n${found.expected}\n${outcome}`;
    if (result.ok) assert.equal(decode(result.value.files[0]!.after), found.expected, detail);
    // A block whose shifted REPLACE leaves every byte as it is changes nothing: already_applied (plan.ts).
    else if (result.error.code === 'already_applied') assert.equal(found.drifted, found.expected, detail);
    else assert.ok(!found.unique, detail);
  }), { numRuns: 3000 });
});
