/** What real producers emit, through the pure engine: colour codes, directory paths, patches already applied. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePatch, planPatch, requiredPaths, type FileSnapshot, type PatchInput, type Plan, type StructuredEdit } from '../../daemon/engine/index.ts';

type Tree = Readonly<Record<string, string>>;

/** Parses and plans against an in-memory tree (a path with files below it is a directory). */
function run(input: PatchInput, tree: Tree): { code?: string; message?: string; plan?: Plan } {
  const parsed = parsePatch(input);
  if (!parsed.ok) return { code: parsed.error.code, message: parsed.error.message };
  const files = new Map<string, FileSnapshot>();
  for (const path of requiredPaths(parsed.value)) {
    const isDirectory = Object.keys(tree).some((key) => key.startsWith(`${path}/`));
    const text = tree[path];
    files.set(path, text !== undefined ? { kind: 'file', bytes: new TextEncoder().encode(text) } : isDirectory ? { kind: 'directory' } : { kind: 'missing' });
  }
  const plan = planPatch(parsed.value, files);
  return plan.ok ? { plan: plan.value } : { code: plan.error.code, message: plan.error.message };
}

const codeOf = (input: PatchInput, tree: Tree) => run(input, tree).code ?? 'applied';
const textOf = (plan: Plan | undefined, path: string) => new TextDecoder().decode(plan?.files.find((file) => file.path === path)?.after ?? undefined);

const UPDATE = '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n';

describe('terminal colour codes', () => {
  const ESC = '\x1b';
  const coloured = `${ESC}[1mdiff --git a/f.txt b/f.txt${ESC}[m\n${ESC}[1m--- a/f.txt${ESC}[m\n${ESC}[1m+++ b/f.txt${ESC}[m\n`
    + `${ESC}[36m@@ -1,3 +1,3 @@${ESC}[m\n one\n${ESC}[31m-two${ESC}[m\n${ESC}[32m+TWO${ESC}[m${ESC}[41m  ${ESC}[m\n three\n`;

  test('are stripped, with a diagnostic, and the patch applies', () => {
    const { plan } = run({ patch: coloured }, { 'f.txt': 'one\ntwo\nthree\n' });
    assert.equal(textOf(plan, 'f.txt'), 'one\nTWO  \nthree\n');
    assert.match(plan?.diagnostics.find((entry) => entry.code === 'ansi_colors_stripped')?.message ?? '', /14 terminal colour codes/);
  });

  test('an escape byte inside a line of an uncoloured patch is content', () => {
    const patch = `--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-x\n+echo "${ESC}[31mred${ESC}[m"\n`;
    const { plan } = run({ patch }, { 'f.txt': 'x\n' });
    assert.equal(textOf(plan, 'f.txt'), `echo "${ESC}[31mred${ESC}[m"\n`);
    assert.equal(plan?.diagnostics.some((entry) => entry.code === 'ansi_colors_stripped'), false);
  });
});

describe('paths naming a directory', () => {
  test('a trailing slash is is_directory in every dialect, before anything is looked up', () => {
    assert.equal(codeOf({ patch: '*** Begin Patch\n*** Add File: newdir/\n+x\n*** End Patch\n' }, {}), 'is_directory');
    assert.equal(codeOf({ patch: '--- /dev/null\n+++ b/dir/\n@@ -0,0 +1 @@\n+x\n' }, {}), 'is_directory');
    assert.equal(codeOf({ operations: [{ type: 'create_file', path: 'dir/', diff: '+x\n' }] }, {}), 'is_directory');
    assert.equal(codeOf({ operations: [{ type: 'create_file', path: 'dir/sub/.', diff: '+x\n' }] }, {}), 'is_directory');
    assert.equal(codeOf({ edits: [{ path: 'notes/', content: 'x\n' }] }, {}), 'is_directory');
  });

  test('an existing directory as a target is refused with a typed error', () => {
    const tree = { 'dir/inside.txt': 'x\n' };
    assert.equal(codeOf({ patch: '*** Begin Patch\n*** Add File: dir\n+x\n*** End Patch\n' }, tree), 'already_exists');
    assert.equal(codeOf({ patch: '--- a/dir\n+++ b/dir\n@@ -1 +1 @@\n-x\n+y\n' }, tree), 'not_found');
    assert.match(run({ patch: '*** Begin Patch\n*** Delete File: dir\n*** End Patch\n' }, tree).message ?? '', /is a directory/);
  });
});

describe('already applied or reversed', () => {
  test('an update applied twice is already_applied, and the message names both causes', () => {
    const result = run({ patch: UPDATE }, { 'f.txt': 'one\nTWO\nthree\n' });
    assert.equal(result.code, 'already_applied');
    assert.match(result.message ?? '', /applied before, or it is reversed/);
  });

  test('a reversed patch (old and new swapped) is detected the same way', () => {
    const reversed = '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-TWO\n+two\n three\n';
    assert.equal(codeOf({ patch: reversed }, { 'f.txt': 'one\ntwo\nthree\n' }), 'already_applied');
  });

  test('context that matches nowhere stays context_not_found; half applied too', () => {
    assert.equal(codeOf({ patch: UPDATE }, { 'f.txt': 'one\nzwei\nthree\n' }), 'context_not_found');
    const twoHunks = '--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -5,2 +5,2 @@\n-e\n+E\n f\n';
    assert.equal(codeOf({ patch: twoHunks }, { 'f.txt': 'a\nb\nc\nd\ne\nf\n' }), 'applied');
    assert.equal(codeOf({ patch: twoHunks }, { 'f.txt': 'A\nb\nc\nd\ne\nf\n' }), 'context_not_found');
    assert.equal(codeOf({ patch: twoHunks }, { 'f.txt': 'a\nb\nc\nd\nE\nf\n' }), 'context_not_found');
    assert.equal(codeOf({ patch: twoHunks }, { 'f.txt': 'A\nb\nc\nd\nE\nf\n' }), 'already_applied');
  });

  test('a patch that applies is never reported as applied, even when its new side is there too', () => {
    const { plan } = run({ patch: UPDATE }, { 'f.txt': 'one\ntwo\nthree\none\nTWO\nthree\n' });
    assert.equal(textOf(plan, 'f.txt'), 'one\nTWO\nthree\none\nTWO\nthree\n');
  });

  test('an add onto a file holding exactly its content is already_applied; other content stays already_exists', () => {
    const add = '--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n';
    assert.equal(codeOf({ patch: add }, { 'new.txt': 'x\ny\n' }), 'already_applied');
    assert.equal(codeOf({ patch: add }, { 'new.txt': 'x\nz\n' }), 'already_exists');
    assert.equal(codeOf({ patch: '*** Begin Patch\n*** Add File: new.txt\n+x\n+y\n*** End Patch\n' }, { 'new.txt': 'x\ny\n' }), 'already_applied');
  });

  test('a delete with its content of a file that is gone is already_applied; a bare delete stays not_found', () => {
    assert.equal(codeOf({ patch: '--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n' }, {}), 'already_applied');
    assert.equal(codeOf({ patch: '*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n' }, {}), 'not_found');
    assert.equal(codeOf({ patch: '--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-x\n+y\n' }, {}), 'not_found');
  });

  test('a rename whose source is gone and whose target holds the new content is already_applied', () => {
    const rename = 'diff --git a/a.txt b/b.txt\nsimilarity index 80%\nrename from a.txt\nrename to b.txt\n--- a/a.txt\n+++ b/b.txt\n@@ -1,2 +1,2 @@\n keep\n-x\n+y\n';
    assert.equal(codeOf({ patch: rename }, { 'b.txt': 'keep\ny\n' }), 'already_applied');
    assert.equal(codeOf({ patch: rename }, { 'a.txt': 'keep\nx\n', 'b.txt': 'other\n' }), 'already_exists');
  });

  test('a SEARCH/REPLACE block applied before is already_applied; text found nowhere stays context_not_found', () => {
    const reply = (search: string, replace: string) => ({ patch: `f.txt\n<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n`, format: 'search-replace' as const });
    const block = reply('two\n', 'TWO\n2\n');
    assert.equal(codeOf(block, { 'f.txt': 'one\ntwo\nthree\n' }), 'applied');
    const again = run(block, { 'f.txt': 'one\nTWO\n2\nthree\n' });
    assert.equal(again.code, 'already_applied');
    assert.match(again.message ?? '', /applied before, or it is reversed/);
    assert.equal(codeOf(block, { 'f.txt': 'one\nthree\n' }), 'context_not_found');
    const twoBlocks = { patch: `${reply('a\n', 'A\n').patch}f.txt\n<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n` };
    assert.equal(codeOf(twoBlocks, { 'f.txt': 'A\nb\n' }), 'context_not_found', 'half applied');
    assert.equal(codeOf(twoBlocks, { 'f.txt': 'A\nB\n' }), 'already_applied');
  });

  test('a str_replace edit applied before is already_applied: its new text is there and its old text is not', () => {
    const edit = (oldText: string, newText: string, replaceAll?: boolean) => ({ edits: [{ path: 'f.ts', oldText, newText, replaceAll }] });
    assert.equal(codeOf(edit('foo()', 'bar()'), { 'f.ts': 'x = bar();\n' }), 'already_applied');
    assert.equal(codeOf(edit('foo()', 'bar()', true), { 'f.ts': 'bar();\nbar();\n' }), 'already_applied');
    assert.equal(codeOf(edit('foo()', 'bar()'), { 'f.ts': 'x = baz();\n' }), 'context_not_found');
    // Nothing to look for: a deletion applied before cannot be told from text that was never there.
    assert.equal(codeOf(edit('foo();\n', ''), { 'f.ts': 'x\n' }), 'context_not_found');
    // Half applied: edit 1 is there, edit 2 is neither old nor new.
    const two = { edits: [{ path: 'f.ts', oldText: 'a', newText: 'A' }, { path: 'f.ts', oldText: 'b', newText: 'B' }] };
    assert.equal(codeOf(two, { 'f.ts': 'A c\n' }), 'context_not_found');
    assert.equal(codeOf(two, { 'f.ts': 'A B\n' }), 'already_applied');
  });

  test('a deletion or an insert beside a str_replace edit applied before: already_applied when they agree with it', () => {
    const edits = (...list: StructuredEdit[]) => ({ edits: list });
    const rename = { path: 'f.ts', oldText: 'foo()', newText: 'bar()' };
    const drop = { path: 'f.ts', oldText: 'debug();\n', newText: '' };
    // The rename proves it; the deleted line is gone, as it would be.
    assert.equal(codeOf(edits(rename, drop), { 'f.ts': 'x = bar();\n' }), 'already_applied');
    // The deleted line is still there: not applied, and the deletion is what fails.
    assert.equal(codeOf(edits(rename, drop), { 'f.ts': 'x = bar();\ndebug();\n' }), 'context_not_found');
    // Deletions alone prove nothing.
    assert.equal(codeOf(edits(drop, { path: 'f.ts', oldText: 'trace();\n', newText: '' }), { 'f.ts': 'x\n' }), 'context_not_found');
    // A deletion with surrounding text has both sides, and shows it.
    assert.equal(codeOf(edits({ path: 'f.ts', oldText: 'a\ndebug();\nb\n', newText: 'a\nb\n' }), { 'f.ts': 'a\nb\n' }), 'already_applied');
    const top = { path: 'f.ts', insertLine: 0, text: '// header\n' };
    assert.equal(codeOf(edits(top, rename), { 'f.ts': '// header\nx = bar();\n' }), 'already_applied');
    assert.equal(codeOf(edits(top, rename), { 'f.ts': 'x = bar();\n' }), 'context_not_found', 'the inserted text is not there');
  });

  test('a file-creating edit onto an existing file is already_exists in every dialect; already_applied when it holds exactly that content', () => {
    const creations: Record<string, PatchInput> = {
      unified: { patch: '--- /dev/null\n+++ b/f.txt\n@@ -0,0 +1 @@\n+new\n' },
      envelope: { patch: '*** Begin Patch\n*** Add File: f.txt\n+new\n*** End Patch\n' },
      v4a: { operations: [{ type: 'create_file', path: 'f.txt', diff: '+new\n+' }] },
      'search-replace': { patch: 'f.txt\n<<<<<<< SEARCH\n=======\nnew\n>>>>>>> REPLACE\n' },
      edits: { edits: [{ path: 'f.txt', oldText: '', newText: 'new\n' }] },
    };
    for (const [dialect, input] of Object.entries(creations)) {
      assert.equal(codeOf(input, { 'f.txt': 'old\n' }), 'already_exists', dialect);
      assert.equal(codeOf(input, { 'f.txt': 'new\n' }), 'already_applied', dialect);
    }
    const createThenEdit = { edits: [{ path: 'f.txt', oldText: '', newText: 'new\n' }, { path: 'f.txt', oldText: 'new', newText: 'newer' }] };
    assert.equal(codeOf(createThenEdit, { 'f.txt': 'newer\n' }), 'already_applied');
    assert.equal(codeOf(createThenEdit, { 'f.txt': 'new\n' }), 'already_exists');
  });

  test('a hunk that only removes lines, without context, proves nothing by its absence: context_not_found', () => {
    assert.equal(codeOf({ patch: '--- a/f.txt\n+++ b/f.txt\n@@ -2 +1,0 @@\n-b\n' }, { 'f.txt': 'a\nc\n' }), 'context_not_found');
    assert.equal(codeOf({ patch: '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,2 @@\n a\n-b\n c\n' }, { 'f.txt': 'a\nc\n' }), 'already_applied');
    // Beside a hunk that shows it, such a hunk only has to agree: its lines are gone.
    const mixed = '--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n-a\n+A\n b\n@@ -5 +4,0 @@\n-e\n';
    assert.equal(codeOf({ patch: mixed }, { 'f.txt': 'A\nb\nc\nd\nf\n' }), 'already_applied');
    assert.equal(codeOf({ patch: mixed }, { 'f.txt': 'A\nb\nc\nd\ne\nf\n' }), 'context_not_found');
  });

  test('a diff without CRs on a file whose lines hold lone CRs: context_not_found that says so, never already_applied', () => {
    const stripped = '--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +0,0 @@\n-lonecr\n-x\n';
    const result = run({ patch: stripped }, { 'f.txt': 'lone\rcr\r\nx\r\n' });
    assert.equal(result.code, 'context_not_found');
    assert.match(result.message ?? '', /carriage returns inside its lines/);
    assert.doesNotMatch(run({ patch: UPDATE }, { 'f.txt': 'one\nzwei\nthree\n' }).message ?? '', /carriage return/);
  });

  test('a final newline the patch removed is part of the check', () => {
    const patch = '--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n';
    assert.equal(codeOf({ patch }, { 'f.txt': 'a\nb\n' }), 'applied');
    assert.equal(codeOf({ patch }, { 'f.txt': 'a\nc' }), 'already_applied');
    assert.equal(codeOf({ patch }, { 'f.txt': 'a\nc\nmore\n' }), 'context_not_found', 'the new side must end the file');
  });

  test('a git diff of an empty file (its index line names the empty blob) is already_applied once the file holds its lines', () => {
    for (const index of ['index e69de29..909796d 100644', 'index e69de29bb2d1d6434b8b29ae775ad8c2e48c5391..909796d', 'index 473a0f4c3b..909796d 100644']) {
      const patch = `diff --git a/f.txt b/f.txt\n${index}\n--- a/f.txt\n+++ b/f.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n`;
      const first = run({ patch }, { 'f.txt': '' });
      assert.equal(textOf(first.plan, 'f.txt'), 'x\ny\n', first.message);
      assert.equal(codeOf({ patch }, { 'f.txt': 'x\ny\n' }), 'already_applied', index);
      const other = run({ patch }, { 'f.txt': 'z\n' });
      assert.equal(other.code, 'context_not_found', index);
      assert.match(other.message ?? '', /says f\.txt was empty .* but it is not/);
      assert.equal(codeOf({ patch, reverse: true }, { 'f.txt': 'x\ny\n' }), 'applied');
      assert.equal(codeOf({ patch, reverse: true }, { 'f.txt': '' }), 'already_applied');
    }
  });

  test('a git diff hunk with no context before (after) its change begins (ends) the file, so applying it again is already_applied', () => {
    const git = (body: string) => `diff --git a/f.txt b/f.txt\nindex 1e2f3a4..5b6c7d8 100644\n--- a/f.txt\n+++ b/f.txt\n${body}`;
    const around = '@@ -1,2 +1,4 @@\n+top\n a\n b\n+end\n';
    assert.equal(textOf(run({ patch: git(around) }, { 'f.txt': 'a\nb\n' }).plan, 'f.txt'), 'top\na\nb\nend\n');
    assert.equal(codeOf({ patch: git(around) }, { 'f.txt': 'top\na\nb\nend\n' }), 'already_applied');
    const atTop = '@@ -1,3 +1,4 @@\n+top\n a\n b\n c\n';
    assert.equal(codeOf({ patch: git(atTop) }, { 'f.txt': 'top\na\nb\nc\nd\n' }), 'already_applied');
    const atTopAgain = run({ patch: git(atTop) }, { 'f.txt': 'new\na\nb\nc\n' });
    assert.equal(atTopAgain.code, 'context_not_found');
    assert.match(atTopAgain.message ?? '', /at the start of the file/);
    const atEnd = '@@ -2,2 +2,3 @@\n b\n c\n+end\n';
    assert.equal(codeOf({ patch: git(atEnd) }, { 'f.txt': 'a\nb\nc\nend\n' }), 'already_applied');
    assert.equal(codeOf({ patch: git(atEnd) }, { 'f.txt': 'a\nb\nc\nmore\n' }), 'context_not_found');
    // Less context before the change than the diff shows elsewhere, at line 1: the hunk begins the file.
    const short = '@@ -1,3 +1,5 @@\n b\n+a\n+b\n c\n a\n';
    assert.equal(textOf(run({ patch: git(short) }, { 'f.txt': 'b\nc\na\n' }).plan, 'f.txt'), 'b\na\nb\nc\na\n');
    assert.equal(codeOf({ patch: git(short) }, { 'f.txt': 'b\na\nb\nc\na\n' }), 'already_applied');
    assert.equal(textOf(run({ patch: git(short.replace('-1,3 +1,5', '-4,3 +4,5')) }, { 'f.txt': 'z\nz\nz\nb\nc\na\n' }).plan, 'f.txt'), 'z\nz\nz\nb\na\nb\nc\na\n');
    // Line numbers moved (as a model copying the diff may move them) do not matter: the context does.
    assert.equal(textOf(run({ patch: git(atEnd.replace('-2,2 +2,3', '-9,2 +9,3')) }, { 'f.txt': 'a\nb\nc\n' }).plan, 'f.txt'), 'a\nb\nc\nend\n');
    // Without an index line (a diff by hand or by a model, context trimmed at will) the hunk goes where its context is.
    assert.equal(textOf(run({ patch: `--- a/f.txt\n+++ b/f.txt\n${atEnd}` }, { 'f.txt': 'a\nb\nc\nmore\n' }).plan, 'f.txt'), 'a\nb\nc\nend\nmore\n');
    // Nor does a git diff without any context (-U0) say anything about edges.
    const zero = git('@@ -3,0 +4 @@\n+end\n');
    assert.equal(textOf(run({ patch: zero }, { 'f.txt': 'a\nb\nc\nmore\n' }).plan, 'f.txt'), 'a\nb\nc\nend\nmore\n');
  });

  test('a diff -u hunk (timestamps on both header lines) is held to the file\'s edges as GNU patch holds it, and moves past them as its fuzz does', () => {
    const stamp = '\t2026-11-27 07:32:55.220944641 +0000';
    const dated = (body: string, oldStamp = stamp, newStamp = stamp) => `--- old/f.txt${oldStamp}\n+++ new/f.txt${newStamp}\n${body}`;
    const atEnd = '@@ -1,3 +1,5 @@\n a\n b\n   x\n+}\n+b\n';
    assert.equal(textOf(run({ patch: dated(atEnd) }, { 'f.txt': 'a\nb\n  x\n' }).plan, 'f.txt'), 'a\nb\n  x\n}\nb\n');
    assert.equal(codeOf({ patch: dated(atEnd) }, { 'f.txt': 'a\nb\n  x\n}\nb\n' }), 'already_applied', 'applied twice');
    assert.equal(codeOf({ patch: dated(atEnd) }, { 'f.txt': 'a\nb\n  x\n}\nb\nmore\n' }), 'already_applied', 'applied twice, then a line added below');
    assert.equal(textOf(run({ patch: dated(atEnd) }, { 'f.txt': 'a\nb\n  x\nmore\n' }).plan, 'f.txt'), 'a\nb\n  x\n}\nb\nmore\n', 'lines added below since');
    const atTop = '@@ -1,2 +1,3 @@\n+top\n a\n b\n';
    assert.equal(codeOf({ patch: dated(atTop) }, { 'f.txt': 'top\na\nb\n' }), 'already_applied');
    assert.equal(textOf(run({ patch: dated(atTop) }, { 'f.txt': 'first\na\nb\n' }).plan, 'f.txt'), 'first\ntop\na\nb\n', 'lines added above since');
    // Without timestamps (a header written by hand or by a model), held to no edge: the hunk goes where its context is, but
    // applied twice its new side already ends the file with its old side inside it, so it is not written twice either.
    assert.equal(textOf(run({ patch: dated(atEnd, stamp, '') }, { 'f.txt': 'a\nb\n  x\nmore\n' }).plan, 'f.txt'), 'a\nb\n  x\n}\nb\nmore\n');
    assert.equal(codeOf({ patch: dated(atEnd, stamp, '') }, { 'f.txt': 'a\nb\n  x\n}\nb\n' }), 'already_applied');
  });

  test('a hunk numbered from line 1 with all its context, found lower while the file begins with its new side, is already_applied', () => {
    // Its old side `a b c d e f` reappears inside its new side, from line 4.
    const patch = 'diff --git a/f.txt b/f.txt\nindex 0fdf397..dbcca29 100644\n--- a/f.txt\n+++ b/f.txt\n@@ -1,6 +1,9 @@\n a\n b\n c\n+a\n+b\n+c\n d\n e\n f\n';
    assert.equal(textOf(run({ patch }, { 'f.txt': 'a\nb\nc\nd\ne\nf\n' }).plan, 'f.txt'), 'a\nb\nc\na\nb\nc\nd\ne\nf\n');
    const again = run({ patch }, { 'f.txt': 'a\nb\nc\na\nb\nc\nd\ne\nf\ng\n' });
    assert.equal(again.code, 'already_applied', again.message);
    // Moved by lines above it, the hunk still applies where its context is (its numbers are hints).
    assert.equal(textOf(run({ patch }, { 'f.txt': 'z\na\nb\nc\nd\ne\nf\n' }).plan, 'f.txt'), 'z\na\nb\nc\na\nb\nc\nd\ne\nf\n');
    // Without an index line too: its new side is where its numbers put it, its old side only lower.
    assert.equal(codeOf({ patch: patch.replace(/^diff --git.*\nindex.*\n/, '') }, { 'f.txt': 'a\nb\nc\na\nb\nc\nd\ne\nf\ng\n' }), 'already_applied');
  });

  test('a diff with no index line or timestamps (hg, svn, by hand, by a model) applied again at a file\'s start or end is already_applied', () => {
    const tenLines = '1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n';
    // hg diff --git: no index line. Applied again, its old side `1 2 3` is found only one line lower, inside its new side.
    const atStart = 'diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n+#!header\n 1\n 2\n 3\n';
    assert.equal(textOf(run({ patch: atStart }, { 'f.txt': tenLines }).plan, 'f.txt'), `#!header\n${tenLines}`);
    assert.equal(codeOf({ patch: atStart }, { 'f.txt': `#!header\n${tenLines}` }), 'already_applied');
    assert.equal(textOf(run({ patch: atStart, reverse: true }, { 'f.txt': `#!header\n${tenLines}` }).plan, 'f.txt'), tenLines);
    // svn diff: lines added after the last one leave the old side where it was, at its hint; the file already ends with the new side.
    const atEnd = 'Index: f.txt\n===\n--- f.txt\t(revision 12)\n+++ f.txt\t(working copy)\n@@ -8,3 +8,4 @@\n 8\n 9\n 10\n+11\n';
    assert.equal(textOf(run({ patch: atEnd }, { 'f.txt': tenLines }).plan, 'f.txt'), `${tenLines}11\n`);
    assert.equal(codeOf({ patch: atEnd }, { 'f.txt': `${tenLines}11\n` }), 'already_applied');
    assert.equal(textOf(run({ patch: atEnd, reverse: true }, { 'f.txt': `${tenLines}11\n` }).plan, 'f.txt'), tenLines);
    // Lines added beyond the edge since, the hunk goes where its context is, as before.
    assert.equal(textOf(run({ patch: atStart }, { 'f.txt': `0\n${tenLines}` }).plan, 'f.txt'), `0\n#!header\n${tenLines}`);
    assert.equal(textOf(run({ patch: atEnd }, { 'f.txt': `${tenLines}more\n` }).plan, 'f.txt'), `${tenLines}11\nmore\n`);
  });

  test('a model\'s diff with wrong line numbers applies once where its context is, and applied again at a file\'s edge is already_applied', () => {
    const tenLines = '1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n';
    const model = (body: string) => `--- a/f.txt\n+++ b/f.txt\n${body}`;
    const atStart = model('@@ -5,3 +5,4 @@\n+#!header\n 1\n 2\n 3\n');
    assert.equal(textOf(run({ patch: atStart }, { 'f.txt': tenLines }).plan, 'f.txt'), `#!header\n${tenLines}`);
    assert.equal(codeOf({ patch: atStart }, { 'f.txt': `#!header\n${tenLines}` }), 'already_applied');
    const atEnd = model('@@ -2,3 +2,4 @@\n 8\n 9\n 10\n+11\n');
    assert.equal(textOf(run({ patch: atEnd }, { 'f.txt': tenLines }).plan, 'f.txt'), `${tenLines}11\n`);
    assert.equal(codeOf({ patch: atEnd }, { 'f.txt': `${tenLines}11\n` }), 'already_applied');
    // Inside the file, wrong numbers and trimmed context still place the hunk by its context.
    const inside = model('@@ -1,2 +1,3 @@\n 4\n 5\n+5.5\n');
    assert.equal(textOf(run({ patch: inside }, { 'f.txt': tenLines }).plan, 'f.txt'), '1\n2\n3\n4\n5\n5.5\n6\n7\n8\n9\n10\n');
    const around = model('@@ -9,3 +9,5 @@\n+0\n 1\n 2\n+2.5\n 3\n');
    assert.equal(textOf(run({ patch: around }, { 'f.txt': tenLines }).plan, 'f.txt'), `0\n1\n2\n2.5\n${tenLines.slice(4)}`);
    // A Codex envelope has no numbers at all: lines appended after the last line, applied again, are already there.
    const envelope = '*** Begin Patch\n*** Update File: f.txt\n@@\n 9\n 10\n+11\n*** End Patch\n';
    assert.equal(textOf(run({ patch: envelope }, { 'f.txt': tenLines }).plan, 'f.txt'), `${tenLines}11\n`);
    assert.equal(codeOf({ patch: envelope }, { 'f.txt': `${tenLines}11\n` }), 'already_applied');
  });

  test('applied again, a patch is already_applied as its reverse finds each hunk where it sits in the patched file', () => {
    // `git diff -U0` of `a a "  x"` (no final newline) to `c a "  x"`. Reversed, hunk 2 sits a line below its old numbers,
    // hunk 1 having added a line; at those numbers the file holds `a "  x"`, the reversed hunk's new side, around the
    // `"  x"` it finds: placed by them, the reverse would read as applied already (hunks.ts), and the patch as not there.
    const patch = '--- a/f.txt\n+++ b/f.txt\n@@ -0,0 +1 @@\n+c\n@@ -2,2 +3 @@ a\n-a\n-  x\n\\ No newline at end of file\n+  x\n';
    assert.equal(textOf(run({ patch }, { 'f.txt': 'a\na\n  x' }).plan, 'f.txt'), 'c\na\n  x\n');
    assert.equal(codeOf({ patch }, { 'f.txt': 'c\na\n  x\n' }), 'already_applied');
    assert.equal(textOf(run({ patch, reverse: true }, { 'f.txt': 'c\na\n  x\n' }).plan, 'f.txt'), 'a\na\n  x');
  });

  test('a file patched only in part is refused, neither written twice nor called already_applied', () => {
    const patch = '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n+#!header\n 1\n 2\n 3\n@@ -5,3 +6,3 @@\n 5\n-6\n+six\n 7\n';
    const done = '#!header\n1\n2\n3\n4\n5\nsix\n7\n8\n';
    assert.equal(textOf(run({ patch }, { 'f.txt': '1\n2\n3\n4\n5\n6\n7\n8\n' }).plan, 'f.txt'), done);
    assert.equal(codeOf({ patch }, { 'f.txt': done }), 'already_applied');
    const firstOnly = run({ patch }, { 'f.txt': '#!header\n1\n2\n3\n4\n5\n6\n7\n8\n' });
    assert.equal(firstOnly.code, 'context_not_found');
    assert.match(firstOnly.message ?? '', /^Hunk 1 of f\.txt reads as applied already, so it is not applied again: its new side is at line 1, where its numbers put it, and its old lines are only inside it, at line 2\./);
    assert.equal(codeOf({ patch }, { 'f.txt': '1\n2\n3\n4\n5\nsix\n7\n8\n' }), 'context_not_found');
  });

  test('new lines where a hunk\'s numbers put it prove nothing unless the old lines found are inside them', () => {
    // Two blocks alike, the one at the hint already changed: the hunk goes where its old lines are, as a moved hunk does.
    const patch = '--- a/f.txt\n+++ b/f.txt\n@@ -2,2 +2,3 @@\n a\n+new\n b\n';
    assert.equal(textOf(run({ patch }, { 'f.txt': 'top\na\nnew\nb\nmid\na\nb\n' }).plan, 'f.txt'), 'top\na\nnew\nb\nmid\na\nnew\nb\n');
    // A context-free change whose new lines happen to be at the hint (a blank line, a brace) goes where its old line is.
    const zero = '--- a/f.txt\n+++ b/f.txt\n@@ -3 +3,2 @@\n-foo\n+\n+}\n';
    assert.equal(textOf(run({ patch: zero }, { 'f.txt': 'a\nb\n\n}\nfoo\nd\n' }).plan, 'f.txt'), 'a\nb\n\n}\n\n}\nd\n');
  });

  test('lines added before line 1 without context (-0,0) go in again: git -U0 makes such a hunk of a file that begins with them', () => {
    // `git diff -U0` of `b, "  x", b, "x "` gaining a `b` on top: git's indent heuristic puts the new `b` before line 1.
    const patch = 'diff --git a/f.txt b/f.txt\nindex 9c4a97b..6812e05 100644\n--- a/f.txt\n+++ b/f.txt\n@@ -0,0 +1 @@\n+b\n';
    assert.equal(textOf(run({ patch }, { 'f.txt': 'b\n  x\nb\nx \n' }).plan, 'f.txt'), 'b\nb\n  x\nb\nx \n');
    const noIndex = patch.replace(/^diff --git.*\nindex.*\n/, '');
    assert.equal(textOf(run({ patch: noIndex }, { 'f.txt': 'b\n  x\nb\nx \n' }).plan, 'f.txt'), 'b\nb\n  x\nb\nx \n');
  });

  test('a -U0 git diff that shows context only between or before its changes (--inter-hunk-context, -W) is not held to edges it does not show', () => {
    const git = (body: string) => `diff --git a/f.txt b/f.txt\nindex 1e2f3a4..5b6c7d8 100644\n--- a/f.txt\n+++ b/f.txt\n${body}`;
    // git diff -U0 --inter-hunk-context=2: two changes merged into one hunk around the line between them. It reads as a -U3
    // diff of a whole file too; on the very file it was made from (the index line's old blob), its numbers place it.
    const merged = '@@ -1,4 +1 @@\n-  x\n c\n-  x\n-x\n';
    const madeFrom = '  x\nc\n  x\nx\na\nc\n';
    const mergedByGit = `diff --git a/f.txt b/f.txt\nindex 9f2feee..a07cd97 100644\n--- a/f.txt\n+++ b/f.txt\n${merged}`;
    assert.equal(textOf(run({ patch: mergedByGit }, { 'f.txt': madeFrom }).plan, 'f.txt'), 'c\na\nc\n');
    assert.equal(textOf(run({ patch: mergedByGit, reverse: true }, { 'f.txt': 'c\na\nc\n' }).plan, 'f.txt'), madeFrom);
    assert.equal(codeOf({ patch: mergedByGit }, { 'f.txt': 'c\na\nc\n' }), 'already_applied');
    // On any other file it is held to the edges, as a -U3 diff of the whole file would be.
    assert.equal(codeOf({ patch: git(merged) }, { 'f.txt': madeFrom }), 'context_not_found');
    // git diff -U0 -W: the second hunk shows the function's first line before its change; the first shows nothing after its own.
    const functionContext = git('@@ -1 +1,2 @@\n-x\n+y\n+z\n@@ -3,2 +4,2 @@ b\n }\n-c\n+d\n');
    assert.equal(textOf(run({ patch: functionContext }, { 'f.txt': 'x\nb\n}\nc\n' }).plan, 'f.txt'), 'y\nz\nb\n}\nd\n');
    // Made with context (-U1), the first hunk shows a line after its change, and the last hunk, showing none, ends the file.
    const withContext = git('@@ -1,2 +1,3 @@\n-x\n+y\n+z\n b\n@@ -6,2 +7,2 @@ b\n }\n-c\n+d\n');
    assert.equal(textOf(run({ patch: withContext }, { 'f.txt': 'x\nb\nq\nq\nq\n}\nc\n' }).plan, 'f.txt'), 'y\nz\nb\nq\nq\nq\n}\nd\n');
    assert.equal(codeOf({ patch: withContext }, { 'f.txt': 'x\nb\nq\nq\nq\n}\nc\n}\n' }), 'context_not_found');
  });

  test('a git diff applied to a file that already is its new side (the index line\'s new blob) is already_applied, wherever its context would match', () => {
    // The hunk's old line `a` ends the new side too: applied again, it would find it there.
    const body = '--- a/f.txt\n+++ b/f.txt\n@@ -1 +1,3 @@\n a\n+}\n+a\n';
    const patch = `diff --git a/f.txt b/f.txt\nindex 7898192..a81a311 100644\n${body}`;
    assert.equal(textOf(run({ patch }, { 'f.txt': 'a\n' }).plan, 'f.txt'), 'a\n}\na\n');
    const again = run({ patch }, { 'f.txt': 'a\n}\na\n' });
    assert.equal(again.code, 'already_applied', again.message);
    assert.equal(codeOf({ patch, reverse: true }, { 'f.txt': 'a\n' }), 'already_applied');
    assert.equal(textOf(run({ patch, reverse: true }, { 'f.txt': 'a\n}\na\n' }).plan, 'f.txt'), 'a\n');
    // Any other content is patched as the context says, whatever the ids.
    assert.equal(textOf(run({ patch }, { 'f.txt': 'x\na\n' }).plan, 'f.txt'), 'x\na\n}\na\n');
    assert.equal(textOf(run({ patch: `diff --git a/f.txt b/f.txt\nindex 1234567..89abcde 100644\n${body}` }, { 'f.txt': 'a\n' }).plan, 'f.txt'), 'a\n}\na\n');
  });

  test('lines only added (-U0) by a diff of a file that held content do not go into a file emptied since; no index line, no check', () => {
    const body = '--- a/f.txt\n+++ b/f.txt\n@@ -1,0 +2 @@\n+b\n';
    assert.equal(codeOf({ patch: `diff --git a/f.txt b/f.txt\nindex 7898192..422c2b7 100644\n${body}` }, { 'f.txt': 'a\n' }), 'applied');
    assert.equal(codeOf({ patch: `diff --git a/f.txt b/f.txt\nindex 7898192..422c2b7 100644\n${body}` }, { 'f.txt': '' }), 'context_not_found');
    assert.equal(codeOf({ patch: body }, { 'f.txt': '' }), 'applied');
  });
});
