/** `reversePatch`: the inverse of a parsed patch, checked by applying both ways. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createTwoFilesPatch } from 'diff';
import fc from 'fast-check';
import { parsePatch, planPatch, requiredPaths, type FileSnapshot, type PatchInput, type Plan, type Result } from '../../daemon/engine/index.ts';

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array | null) => (bytes === null ? null : new TextDecoder().decode(bytes));

type Tree = Readonly<Record<string, string>>;

/** Applies `input` to `tree` (path → text; absent: missing) and returns the new tree. */
function applyTo(tree: Tree, input: PatchInput): Result<Tree> {
  const parsed = parsePatch(input);
  if (!parsed.ok) return parsed;
  const files = new Map<string, FileSnapshot>(requiredPaths(parsed.value).map((path) => [path, path in tree ? { kind: 'file', bytes: encode(tree[path]!) } : { kind: 'missing' }]));
  const plan: Result<Plan> = planPatch(parsed.value, files);
  if (!plan.ok) return plan;
  const next: Record<string, string> = { ...tree };
  for (const file of plan.value.files) {
    if (file.fromPath !== undefined) delete next[file.fromPath];
    const after = decode(file.after);
    if (after === null) delete next[file.path];
    else next[file.path] = after;
  }
  return { ok: true, value: next };
}

function roundTrip(before: Tree, input: PatchInput): void {
  const forward = applyTo(before, input);
  assert.ok(forward.ok, forward.ok ? '' : forward.error.message);
  const back = applyTo(forward.value, { ...input, reverse: true });
  assert.ok(back.ok, back.ok ? '' : `${back.error.code}: ${back.error.message}`);
  assert.deepEqual(back.value, before);
}

const line = fc.constantFrom('alpha', 'beta', 'gamma', 'delta', '', '  indented', '}');
const text = fc.tuple(fc.array(line, { maxLength: 30 }), fc.boolean()).map(([lines, finalNewline]) =>
  lines.length === 0 ? '' : lines.join('\n') + (finalNewline ? '\n' : ''));

describe('reversePatch', () => {
  test('a unified diff of a→b, reversed, takes b back to a (final newlines included)', () => {
    fc.assert(fc.property(text, text, (a, b) => {
      fc.pre(a !== b);
      roundTrip({ 'f.txt': a }, { patch: createTwoFilesPatch('a/f.txt', 'b/f.txt', a, b) });
    }), { numRuns: 300 });
  });

  test('an envelope chunk whose added line lacks the final newline reverses to the newline the old side had', () => {
    for (const end of ['', '*** End of File\n']) {
      roundTrip({ 'f.txt': 'w\nx\n' }, { patch: `*** Begin Patch\n*** Update File: f.txt\n@@\n w\n-x\n+y\n\\ No newline at end of file\n${end}*** End Patch\n` });
    }
    roundTrip({ 'f.txt': 'w\nx' }, { patch: '*** Begin Patch\n*** Update File: f.txt\n@@\n w\n-x\n\\ No newline at end of file\n+y\n\\ No newline at end of file\n*** End Patch\n' });
  });

  test('a reversed patch whose marker speaks of the final newline is refused where the file ends otherwise (the forward patch\'s old tree)', () => {
    // `\nc` → `c\n`: reversed, the old side is `c` with its newline. Applied -R to `\nc` itself, git refuses; it once wrote `\n\nc`.
    const patch = '--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1 @@\n-\n-c\n\\ No newline at end of file\n+c\n';
    roundTrip({ 'f.txt': '\nc' }, { patch });
    const again = applyTo({ 'f.txt': '\nc' }, { patch, reverse: true });
    assert.ok(!again.ok && again.error.code === 'already_applied', JSON.stringify(again));
    const drifted = applyTo({ 'f.txt': 'x\nc' }, { patch, reverse: true });
    assert.ok(!drifted.ok && drifted.error.code === 'context_not_found', JSON.stringify(drifted));
  });

  test('adds become deletes, deletes adds, renames go back', () => {
    const patch = [
      '--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n\\ No newline at end of file\n',
      '--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-gone\n-soon\n',
      'diff --git a/from.txt b/to.txt\nsimilarity index 80%\nrename from from.txt\nrename to to.txt\n--- a/from.txt\n+++ b/to.txt\n@@ -1,2 +1,2 @@\n keep\n-x\n+y\n',
    ].join('');
    roundTrip({ 'old.txt': 'gone\nsoon\n', 'from.txt': 'keep\nx\n' }, { patch });
  });

  test('codex envelopes, V4A updates, SEARCH/REPLACE blocks and replace edits reverse too', () => {
    roundTrip({ 'a.txt': 'one\ntwo\nthree\n' }, { patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n three\n*** End Patch\n' });
    roundTrip({ 'a.txt': 'one\ntwo\n' }, { operations: [{ type: 'update_file', path: 'a.txt', diff: ' one\n-two\n+2\n' }] });
    roundTrip({ 'a.txt': 'def f():\n    return 1\n' }, { patch: 'a.txt\n```\n<<<<<<< SEARCH\n    return 1\n=======\n    return 2\n>>>>>>> REPLACE\n```\n' });
    roundTrip({ 'a.txt': 'x = 1\ny = 2\n' }, { edits: [{ path: 'a.txt', oldText: 'x = 1', newText: 'x = 10' }, { path: 'a.txt', oldText: 'x = 10\ny', newText: 'z' }] });
  });

  test('a change that does not show what it replaced is not_reversible, naming the file', () => {
    const cases: PatchInput[] = [
      { edits: [{ path: 'w.txt', content: 'whole\n' }] },
      { edits: [{ path: 'i.txt', insertLine: 0, text: 'top\n' }] },
      { edits: [{ path: 'r.txt', oldText: 'x', newText: '' }] },
      { patch: '*** Begin Patch\n*** Delete File: d.txt\n*** End Patch\n' },
    ];
    for (const input of cases) {
      const parsed = parsePatch({ ...input, reverse: true });
      assert.ok(!parsed.ok);
      assert.equal(parsed.error.code, 'not_reversible');
      assert.match(parsed.error.message, /^[a-z]\.txt cannot be changed back: /);
    }
  });
});

test('reversed, the notes on modes fit the reversed patch: none for an executable new file it deletes, the old mode for a mode change', () => {
  const patch = [
    'diff --git a/run.sh b/run.sh', 'old mode 100644', 'new mode 100755', 'index 1111111..2222222 100755', '--- a/run.sh', '+++ b/run.sh', '@@ -1 +1 @@', '-echo a', '+echo b',
    'diff --git a/new.sh b/new.sh', 'new file mode 100755', 'index 0000000..3333333', '--- /dev/null', '+++ b/new.sh', '@@ -0,0 +1 @@', '+echo hi', '',
  ].join('\n');
  const notes = (reverse: boolean) => {
    const parsed = parsePatch({ patch, reverse });
    assert.ok(parsed.ok);
    return parsed.value.diagnostics.filter((diagnostic) => diagnostic.code === 'mode_not_applied').map((diagnostic) => diagnostic.message);
  };
  assert.deepEqual(notes(false), [
    'patchd does not apply modes: run.sh keeps its mode, not its `new mode 100755`.',
    'patchd does not apply modes: new.sh is created with mode 644 (less the umask), not its `new file mode 100755`.',
  ]);
  assert.deepEqual(notes(true), ['patchd does not apply modes: run.sh keeps its mode (the patch, reversed, asks for its old one).']);
});
