/**
 * Codex / V4A `@@` anchors through parse and plan (DESIGN, Matching: an anchor is binding). Stacked
 * anchors are followed in turn, each the first line matching it after the previous one, and the
 * hunk is searched after the last: the OpenAI apply_patch guidance tells models to stack them to
 * reach a block that is repeated, as Codex's seek_sequence and openai-agents' applyDiff read them.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { parsePatch, planPatch, requiredPaths, type EngineError, type FileSnapshot, type PatchInput, type PlannedFile } from '../../daemon/engine/index.ts';

const TWO_CLASSES = [
  'class A:',
  '    def run(self):',
  '        x = 1',
  '        return x',
  '',
  'class B:',
  '    def run(self):',
  '        x = 1',
  '        return x',
  '',
].join('\n');

function plan(input: PatchInput, text: string): { file: PlannedFile; text: string } | EngineError {
  const parsed = parsePatch(input);
  if (!parsed.ok) return parsed.error;
  const files = new Map<string, FileSnapshot>();
  for (const path of requiredPaths(parsed.value)) files.set(path, { kind: 'file', bytes: new TextEncoder().encode(text) });
  const planned = planPatch(parsed.value, files);
  if (!planned.ok) return planned.error;
  const file = planned.value.files[0]!;
  return { file, text: new TextDecoder().decode(file.after!) };
}

function applied(input: PatchInput, text = TWO_CLASSES): { file: PlannedFile; text: string } {
  const result = plan(input, text);
  assert.ok('file' in result, 'file' in result ? '' : `${result.code}: ${result.message}`);
  return result;
}

function rejected(input: PatchInput, text = TWO_CLASSES): EngineError {
  const result = plan(input, text);
  assert.ok(!('file' in result), 'expected a rejection, the patch applied');
  return result;
}

const envelope = (...lines: string[]): PatchInput => ({ patch: ['*** Begin Patch', '*** Update File: f.py', ...lines, '*** End Patch'].join('\n') + '\n', format: 'codex' });
const v4a = (...lines: string[]): PatchInput => ({ operations: [{ type: 'update_file', path: 'f.py', diff: lines.join('\n') + '\n' }], format: 'v4a' });
const DIALECTS = { envelope, v4a };

/** TWO_CLASSES with `return x` of the class whose `return x` line is `line` (4 or 9) changed. */
function changedAt(line: number): string {
  const lines = TWO_CLASSES.split('\n');
  lines[line - 1] = '        return x + 1';
  return lines.join('\n');
}

const body = ['         x = 1', '-        return x', '+        return x + 1'];

for (const [name, make] of Object.entries(DIALECTS)) {
  test(`${name}: stacked @@ anchors pick the first of two identical blocks, or the second`, () => {
    const first = applied(make('@@ class A:', '@@     def run(self):', ...body));
    assert.equal(first.text, changedAt(4));
    assert.deepEqual(first.file.hunks.map((hunk) => hunk.line), [3]);
    assert.equal(applied(make('@@ class B:', '@@     def run(self):', ...body)).text, changedAt(9));
  });

  test(`${name}: one @@ anchor binds the hunk to the lines up to the next line like it`, () => {
    // The first `def run` holds one copy; the other is past the next `def run`, another copy of the block.
    assert.equal(applied(make('@@     def run(self):', ...body)).text, changedAt(4));
    // As before: an anchor after which the hunk matches once.
    assert.equal(applied(make('@@ class B:', ...body)).text, changedAt(9));
  });

  test(`${name}: several matches within the anchor's reach stay ambiguous_context, saying the anchors did not tell them apart`, () => {
    // `class A:` has no second copy: its reach is the rest of the file, which holds both blocks.
    const error = rejected(make('@@ class A:', '     def run(self):', ...body));
    assert.equal(error.code, 'ambiguous_context');
    assert.match(error.message, /lines 2, 7\), even after its @@ anchor \(the last at line 1\); add context lines/);
    const twice = 'class A:\n    def run(self):\n        x = 1\n        y = 2\n        x = 1\n        return x\n';
    const stacked = rejected(make('@@ class A:', '@@     def run(self):', '-        x = 1', '+        x = 3'), twice);
    assert.equal(stacked.code, 'ambiguous_context');
    assert.match(stacked.message, /lines 3, 5\), even after its @@ anchors/);
    // Without anchors, as before.
    assert.equal(rejected(make('@@', ...body)).code, 'ambiguous_context');
  });

  test(`${name}: an anchor found nowhere after the one before it is context_not_found`, () => {
    assert.equal(rejected(make('@@ class C:', ...body)).code, 'context_not_found');
    // `class A:` is only above `class B:`: each anchor is searched after the previous one.
    const error = rejected(make('@@ class B:', '@@ class A:', ...body));
    assert.equal(error.code, 'context_not_found');
    assert.match(error.message, /"class A:" of hunk 1 is not in f\.py after line 6/);
  });

  test(`${name}: stacked anchors per hunk, in order; a pure insertion goes right after the last anchor`, () => {
    const both = applied(make('@@ class A:', '@@     def run(self):', ...body, '@@ class B:', '@@     def run(self):', ...body));
    assert.equal(both.text, TWO_CLASSES.replaceAll('        return x\n', '        return x + 1\n'));
    assert.deepEqual(both.file.hunks.map((hunk) => hunk.line), [3, 8]);
    const inserted = applied(make('@@ class B:', '@@     def run(self):', '+        y = 2'));
    assert.equal(inserted.text, TWO_CLASSES.replace('class B:\n    def run(self):\n', 'class B:\n    def run(self):\n        y = 2\n'));
  });
}
