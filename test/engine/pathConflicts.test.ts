/**
 * Paths of one patch that contradict each other (one inside the other, as if it were a directory)
 * are refused before any file is planned, so before anything is written, in every dialect: `already_exists`, naming both
 * paths. Replacing a directory by a file, or a file by a directory, in one patch (as `git diff`
 * writes a type change) is planned, when the side that is a file is made new; the workspace checks
 * the replaced directory holds nothing else (`test/workspace/typeChange.test.ts`). Look-alikes
 * (siblings, shared prefixes) still apply.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { parsePatch, planPatch, requiredPaths, type EngineError, type FileSnapshot, type PatchInput, type Plan } from '../../daemon/engine/index.ts';

/** Files by path; a path ending in `/` is a directory. */
type Tree = Readonly<Record<string, string>>;

function snapshotOf(tree: Tree, path: string): FileSnapshot {
  const text = tree[path];
  if (text !== undefined) return { kind: 'file', bytes: new TextEncoder().encode(text) };
  return Object.keys(tree).some((key) => key.startsWith(`${path}/`)) ? { kind: 'directory' } : { kind: 'missing' };
}

function plan(input: PatchInput, tree: Tree = {}): { plan: Plan } | { error: EngineError } {
  const parsed = parsePatch(input);
  assert.ok(parsed.ok, parsed.ok ? '' : `${parsed.error.code}: ${parsed.error.message}`);
  const files = new Map(requiredPaths(parsed.value).map((path) => [path, snapshotOf(tree, path)] as const));
  const planned = planPatch(parsed.value, files);
  return planned.ok ? { plan: planned.value } : { error: planned.error };
}

function refused(input: PatchInput, tree: Tree = {}): EngineError {
  const result = plan(input, tree);
  assert.ok('error' in result, 'expected a refusal, the patch applied');
  return result.error;
}

function appliedPaths(input: PatchInput, tree: Tree = {}): string[] {
  const result = plan(input, tree);
  assert.ok('plan' in result, 'plan' in result ? '' : `${result.error.code}: ${result.error.message}`);
  return result.plan.files.map((file) => `${file.op} ${file.fromPath === undefined ? '' : `${file.fromPath} -> `}${file.path}`);
}

const envelope = (...lines: string[]): PatchInput => ({ patch: ['*** Begin Patch', ...lines, '*** End Patch'].join('\n') + '\n', format: 'codex' });

test('a path added as a file and as the directory of another path: already_exists naming both, in either order, at any depth', () => {
  const error = refused(envelope('*** Add File: zz/f.txt/y', '+y', '*** Add File: zz/f.txt', '+x'));
  assert.equal(error.code, 'already_exists');
  assert.equal(error.path, 'zz/f.txt');
  assert.equal(error.message, 'The patch adds zz/f.txt/y and adds zz/f.txt: zz/f.txt cannot be both a file and a directory holding zz/f.txt/y. Keep one of them, or give one another path.');
  const reversed = refused(envelope('*** Add File: zz/f.txt', '+x', '*** Add File: zz/f.txt/y', '+y'));
  assert.equal(reversed.path, 'zz/f.txt/y');
  assert.match(refused(envelope('*** Add File: a', '+x', '*** Add File: a/b/c/d', '+y')).message, /a cannot be both a file and a directory holding a\/b\/c\/d/);
});

test('an existing file changed, and a file added inside it: refused before the commit, never an io_error or stale_file', () => {
  const error = refused(envelope('*** Update File: a', '@@', '-a', '+b', '*** Add File: a/b', '+x'), { a: 'a\n' });
  assert.equal(error.code, 'already_exists');
  assert.match(error.message, /^The patch changes a and adds a\/b: a cannot be both/);
});

test('a directory replaced by a file (delete d/x, add d; move d/x to d), as git diff writes it: planned, d seen as free', () => {
  const tree = { 'd/x': 'x\n' };
  assert.deepEqual(appliedPaths(envelope('*** Delete File: d/x', '*** Add File: d', '+new'), tree), ['delete d/x', 'add d']);
  assert.deepEqual(appliedPaths(envelope('*** Add File: d', '+new', '*** Delete File: d/x'), tree), ['add d', 'delete d/x']);
  assert.deepEqual(appliedPaths(envelope('*** Move File: d/x -> d'), tree), ['rename d/x -> d']);
  assert.deepEqual(appliedPaths(envelope('*** Update File: d/x', '*** Move to: d', '@@', '-x', '+y'), tree), ['rename d/x -> d']);
  assert.deepEqual(appliedPaths(envelope('*** Delete File: d/e/x', '*** Add File: d', '+new'), { 'd/e/x': 'x\n' }), ['delete d/e/x', 'add d']);
  const edits: PatchInput = { edits: [{ path: 'd', content: 'new\n' }, { path: 'd/x', oldText: 'x\n', newText: '' }], format: 'edits' };
  assert.equal(refused(edits, tree).code, 'already_exists', 'an edit is not a delete: d/x stays, and d with it');
});

test('a directory the patch takes nothing away from stays a directory: adding a file there is already_exists', () => {
  const error = refused(envelope('*** Add File: d', '+new', '*** Add File: e', '+e'), { 'd/x': 'x\n' });
  assert.equal(error.code, 'already_exists');
  assert.equal(error.message, 'd already exists (a directory).');
});

test('a file replaced by a directory (delete d, add d/x; move d to d/x): planned', () => {
  const tree = { d: 'd\n' };
  assert.deepEqual(appliedPaths(envelope('*** Delete File: d', '*** Add File: d/x', '+new'), tree), ['delete d', 'add d/x']);
  assert.deepEqual(appliedPaths(envelope('*** Add File: d/e/x', '+new', '*** Delete File: d'), tree), ['add d/e/x', 'delete d']);
  assert.deepEqual(appliedPaths(envelope('*** Move File: d -> d/x'), tree), ['rename d -> d/x']);
});

test('a path changed (not made) beside a path taken away inside or around it: not_found naming both, before anything is planned', () => {
  const changedFile = refused(envelope('*** Update File: d', '@@', '-d', '+D', '*** Delete File: d/x'), { d: 'd\n' });
  assert.equal(changedFile.code, 'not_found');
  assert.equal(changedFile.path, 'd/x');
  assert.equal(changedFile.message, 'The patch changes d and deletes d/x: d would have to be a file now, to be changed, and a directory holding d/x, to be taken away. '
    + 'A file that replaces a directory, or a directory that replaces a file, is made new (added), never changed.');
  const changedInside = refused(envelope('*** Delete File: d', '*** Update File: d/x', '@@', '-x', '+X'), { 'd/x': 'x\n' });
  assert.equal(changedInside.code, 'not_found');
  assert.match(changedInside.message, /^The patch deletes d and changes d\/x: d would have to be a file now, to be taken away, and a directory holding d\/x, to be changed\./);
  // A file changed and another made inside it: both would be there afterwards.
  assert.match(refused(envelope('*** Update File: d', '@@', '-d', '+D', '*** Delete File: e', '*** Add File: d/x', '+x'), { d: 'd\n', e: 'e\n' }).message, /d cannot be both a file and a directory holding d\/x/);
});

test('every dialect: unified, V4A, SEARCH/REPLACE and edits', () => {
  const unified = { patch: 'diff --git a/d/x b/d\nsimilarity index 100%\nrename from d/x\nrename to d\n', format: 'unified' } as const;
  assert.deepEqual(appliedPaths(unified, { 'd/x': 'x\n' }), ['rename d/x -> d']);
  const created = { patch: '--- /dev/null\n+++ b/a/b\n@@ -0,0 +1 @@\n+x\n--- /dev/null\n+++ b/a\n@@ -0,0 +1 @@\n+y\n', format: 'unified' } as const;
  assert.equal(refused(created).code, 'already_exists');
  const operations: PatchInput = { operations: [{ type: 'create_file', path: 'a/b', diff: '+x\n' }, { type: 'delete_file', path: 'a' }], format: 'v4a' };
  assert.deepEqual(appliedPaths(operations, { a: 'a\n' }), ['add a/b', 'delete a']);
  const blocks = { patch: 'a\n<<<<<<< SEARCH\n=======\nx\n>>>>>>> REPLACE\n\na/b\n<<<<<<< SEARCH\n=======\ny\n>>>>>>> REPLACE\n', format: 'search-replace' } as const;
  assert.equal(refused(blocks).code, 'already_exists');
  const edits: PatchInput = { edits: [{ path: 'a', content: 'x\n' }, { path: 'a/b', oldText: '', newText: 'y\n' }], format: 'edits' };
  assert.match(refused(edits).message, /^The patch writes a and changes a\/b: a cannot be both/);
  const written: PatchInput = { edits: [{ path: 'a', content: 'x\n' }], format: 'edits' };
  assert.equal(refused(written, { 'a/b': 'b\n' }).code, 'already_exists', 'a whole-file write onto a directory it does not empty');
});

test('look-alikes apply: siblings, names that share a prefix, a delete beside an add in the same directory', () => {
  assert.deepEqual(appliedPaths(envelope('*** Add File: d/x', '+x', '*** Add File: d/y', '+y', '*** Add File: dd', '+z', '*** Add File: d.txt', '+w')), ['add d/x', 'add d/y', 'add dd', 'add d.txt']);
  assert.deepEqual(appliedPaths(envelope('*** Delete File: d/x', '*** Add File: d/z', '+z', '*** Add File: dd/x', '+w'), { 'd/x': 'x\n', 'd/y': 'y\n' }), ['delete d/x', 'add d/z', 'add dd/x']);
  assert.deepEqual(appliedPaths(envelope('*** Move File: a -> b/a'), { a: 'a\n' }), ['rename a -> b/a']);
  assert.deepEqual(appliedPaths(envelope('*** Move File: b/a -> a'), { 'b/a': 'a\n' }), ['rename b/a -> a']);
});

test('two paths taken away, one inside the other, are left to the plan: the one that is not there is not_found', () => {
  assert.equal(refused(envelope('*** Delete File: d', '*** Delete File: d/x'), { d: 'd\n' }).code, 'not_found');
});

/** Two `git format-patch` mails: `first` then `second` (diff lines each). */
function mailbox(first: readonly string[], second: readonly string[]): PatchInput {
  const mail = (number: number, diff: readonly string[]) => [
    'From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001',
    'From: A U Thor <author@example.com>',
    'Date: Thu, 1 Jan 2026 00:00:00 +0000',
    `Subject: [PATCH ${number}/2] Part ${number}`,
    '',
    '---',
    ...diff,
    '-- ',
    '2.39.5',
    '',
  ];
  return { patch: [...mail(1, first), ...mail(2, second)].join('\n'), format: 'unified' };
}

test('a series is checked on its net effect: a path its parts take away and reuse is fine, and so is a net replacement', () => {
  const addX = ['diff --git a/d/x b/d/x', 'new file mode 100644', '--- /dev/null', '+++ b/d/x', '@@ -0,0 +1 @@', '+x'];
  const deleteX = ['diff --git a/d/x b/d/x', 'deleted file mode 100644', '--- a/d/x', '+++ /dev/null', '@@ -1 +0,0 @@', '-x'];
  const addD = ['diff --git a/d b/d', 'new file mode 100644', '--- /dev/null', '+++ b/d', '@@ -0,0 +1 @@', '+d'];
  const deleteD = ['diff --git a/d b/d', 'deleted file mode 100644', '--- a/d', '+++ /dev/null', '@@ -1 +0,0 @@', '-d'];
  // The second mail replaces the directory d (holding only the d/x the first one added) by a file: net, d is added.
  assert.deepEqual(appliedPaths(mailbox(addX, [...deleteX, ...addD])), ['add d']);
  assert.deepEqual(appliedPaths(mailbox(deleteD, addX), { d: 'd\n' }), ['delete d', 'add d/x']);
  assert.deepEqual(appliedPaths(mailbox(deleteX, addD), { 'd/x': 'x\n' }), ['delete d/x', 'add d']);
  const error = refused(mailbox(addD, addX), { 'd/x': 'x\n' });
  assert.equal(error.code, 'already_exists', 'a directory no part empties stays one');
});
