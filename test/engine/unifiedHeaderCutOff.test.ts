/**
 * A tool's diff cut off inside a file's header is refused; the header blocks git writes whole
 * without a hunk still apply. Through the whole engine (parse + plan). The sections are real
 * `git diff --cached -M` (and `diff -ruN`) output of the TREE below.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type PatchInput, type Plan } from '../../daemon/engine/index.ts';
import { planOnFiles } from '../helpers/planText.ts';

type Tree = Readonly<Record<string, string>>;

/** Parses and plans against an in-memory tree. */
function run(input: PatchInput, tree: Tree): { code?: string; message?: string; path?: string; plan?: Plan } {
  const plan = planOnFiles(input, tree);
  return plan.ok ? { plan: plan.value } : plan.error;
}

/** The tree after the patch (paths it deletes gone), and its diagnostics. */
function applied(patch: string, tree: Tree = TREE): { tree: Record<string, string>; diagnostics: readonly string[] } {
  const { plan, code, message } = run({ patch }, tree);
  assert.ok(plan, `expected the patch to apply, got ${code}: ${message}`);
  const after: Record<string, string> = { ...tree };
  for (const file of plan.files) {
    if (file.fromPath !== undefined) delete after[file.fromPath];
    if (file.after === null) delete after[file.path];
    else after[file.path] = new TextDecoder().decode(file.after);
  }
  return { tree: after, diagnostics: plan.diagnostics.map((entry) => entry.code) };
}

/** A refusal at the header of `path`, before anything was planned. */
function cutOff(patch: string, path: string, tree: Tree = TREE): string {
  const { code, message = '', path: named } = run({ patch }, tree);
  assert.equal(code, 'parse_error', `expected a cut-off patch to be refused, got ${code ?? 'applied'}: ${message}`);
  assert.match(message, /^The patch looks cut off at the header of /);
  assert.match(message, /Nothing was applied; resend the whole patch\.$/);
  assert.equal(named, path);
  return message;
}

const lines = (...text: string[]) => `${text.join('\n')}\n`;

const TREE: Tree = {
  'a.txt': lines('1', '2', '3'),
  'del.txt': lines('hello', 'world'),
  'gone.txt': '',
  'mv.txt': lines('x'),
  'mode.txt': lines('m'),
  'ren.txt': lines('r', 's'),
  'both.txt': lines('p', 'q'),
};

const MODIFY = ['diff --git a/a.txt b/a.txt', 'index 01e79c3..6b1f642 100644', '--- a/a.txt', '+++ b/a.txt', '@@ -1,3 +1,3 @@', ' 1', ' 2', '-3', '+three'];
const NEW_FILE = ['diff --git a/n.txt b/n.txt', 'new file mode 100644', 'index 0000000..24641c4', '--- /dev/null', '+++ b/n.txt', '@@ -0,0 +1,2 @@', '+content', '+here'];
const EMPTY_NEW_FILE = ['diff --git a/empty.txt b/empty.txt', 'new file mode 100644', 'index 0000000..e69de29'];
const DELETE = ['diff --git a/del.txt b/del.txt', 'deleted file mode 100644', 'index 94954ab..0000000', '--- a/del.txt', '+++ /dev/null', '@@ -1,2 +0,0 @@', '-hello', '-world'];
const EMPTY_DELETE = ['diff --git a/gone.txt b/gone.txt', 'deleted file mode 100644', 'index e69de29..0000000'];
const PURE_RENAME = ['diff --git a/mv.txt b/moved.txt', 'similarity index 100%', 'rename from mv.txt', 'rename to moved.txt'];
const MODE_ONLY = ['diff --git a/mode.txt b/mode.txt', 'old mode 100644', 'new mode 100755'];
const MODE_AND_EDIT = ['diff --git a/both.txt b/both.txt', 'old mode 100644', 'new mode 100755', 'index e563bc2..4b1287e', '--- a/both.txt', '+++ b/both.txt', '@@ -1,2 +1,2 @@', ' p', '-q', '+Q'];
const RENAME_AND_EDIT = ['diff --git a/ren.txt b/ren2.txt', 'similarity index 50%', 'rename from ren.txt', 'rename to ren2.txt', 'index 7f3f9b3..320d26e 100644', '--- a/ren.txt', '+++ b/ren2.txt', '@@ -1,2 +1,2 @@', ' r', '-s', '+S'];

/** The first `count` lines of a section: where a cut in its header leaves it. */
const upTo = (section: readonly string[], count: number) => section.slice(0, count);

describe('a git diff cut off in a later file\'s header is a parse_error, nothing applied', () => {
  test('the report: a new file cut after its index line would be created empty', () => {
    const message = cutOff(lines(...MODIFY, ...upTo(NEW_FILE, 3)), 'n.txt');
    assert.match(message, /header of n\.txt \(line 10\): its `index` line says the new file has content \(blob 24641c4; an empty file's is e69de29\), but no hunk follows/);
  });

  test('a lone `---` line, or `---` and `+++` with no hunk, where the input ends', () => {
    assert.match(cutOff(lines(...MODIFY, ...upTo(NEW_FILE, 4)), 'n.txt'), /its `---` line has no `\+\+\+` line after it/);
    assert.match(cutOff(lines(...MODIFY, ...upTo(NEW_FILE, 5)), 'n.txt'), /its `---` and `\+\+\+` lines have no hunk after them/);
    cutOff(lines(...NEW_FILE, ...upTo(DELETE, 4)), 'del.txt');
    cutOff(lines(...NEW_FILE, ...upTo(MODIFY, 3)), 'a.txt');
    cutOff(`${lines(...MODIFY, ...upTo(NEW_FILE, 4))}\n\n`, 'n.txt');
  });

  test('wherever the cut falls in the header of each kind of section that has a hunk', () => {
    for (const section of [MODIFY, NEW_FILE, DELETE, MODE_AND_EDIT, RENAME_AND_EDIT]) {
      const first = section.findIndex((line) => line.startsWith('@@'));
      // After the diff --git line up to the +++ line; a delete cut right after its index line is `git diff -D` output (below).
      for (let count = 1; count <= first; count++) {
        // And a mode change cut after `new mode` is a whole mode-only block: nothing shows that more was to come.
        if ((section === DELETE && count === 3) || (section === MODE_AND_EDIT && count === 3)) continue;
        const { code, message } = run({ patch: lines(...EMPTY_NEW_FILE, ...upTo(section, count)) }, TREE);
        // A rename cut before `rename to` is refused for its paths (`rename_path_mismatch`, parse_error).
        const expected = section === RENAME_AND_EDIT && count < 3 ? 'rename_path_mismatch' : 'parse_error';
        assert.equal(code, expected, `${section[0]} cut after ${count} lines: ${code ?? 'applied'} ${message ?? ''}`);
      }
    }
  });

  test('an index line cut mid-line, and the lines git writes before it, are missed as git would not', () => {
    assert.match(cutOff(lines(...MODIFY, 'diff --git a/n.txt b/n.txt', 'new file mode 100644', 'index 0000000..24'), 'n.txt'), /its `index` line is incomplete/);
    assert.match(cutOff(`${lines(...upTo(NEW_FILE, 2))}index 00`, 'n.txt'), /its `index` line is incomplete/);
    assert.match(cutOff(lines(...MODIFY, ...upTo(NEW_FILE, 2)), 'n.txt'), /its `new file mode` line has no `index` line after it, which git always writes/);
    assert.match(cutOff(lines(...MODIFY, ...upTo(DELETE, 2)), 'del.txt'), /its `deleted file mode` line has no `index` line/);
    assert.match(cutOff(lines(...MODIFY, ...upTo(MODE_AND_EDIT, 2)), 'both.txt'), /its `old mode` line has no `new mode` line after it/);
    assert.match(cutOff(lines(...MODIFY, ...upTo(MODE_AND_EDIT, 4)), 'both.txt'), /says the file's content changes \(e563bc2\.\.4b1287e\), but no hunk follows/);
  });

  test('a rename cut before its edits is not applied as a pure rename', () => {
    assert.match(cutOff(lines(...upTo(RENAME_AND_EDIT, 4)), 'ren2.txt'), /its `similarity index 50%` says the renamed file changed, but no hunk follows/);
    assert.match(cutOff(lines(...upTo(RENAME_AND_EDIT, 5)), 'ren2.txt'), /says the file's content changes \(7f3f9b3\.\.320d26e\)/);
    cutOff(lines(...upTo(RENAME_AND_EDIT, 6)), 'ren2.txt');
    cutOff(lines(...upTo(RENAME_AND_EDIT, 7)), 'ren2.txt');
  });

  test('diff -ruN output cut after a file\'s command line or its `---` line', () => {
    const first = ['diff -ruN old/a.txt new/a.txt', '--- old/a.txt\t2026-11-29 06:14:05.901504273 +0000', '+++ new/a.txt\t2026-11-29 06:14:05.902082850 +0000', '@@ -1,3 +1,3 @@', ' 1', ' 2', '-3', '+three'];
    const second = ['diff -ruN old/n.txt new/n.txt', '--- old/n.txt\t1970-01-01 00:00:00.000000000 +0000', '+++ new/n.txt\t2026-11-29 06:14:05.902082850 +0000', '@@ -0,0 +1,2 @@', '+content', '+here'];
    assert.equal(applied(lines(...first, ...second)).tree['n.txt'], lines('content', 'here'));
    assert.match(cutOff(lines(...first, ...upTo(second, 1)), 'new/n.txt'), /its `diff` command line has no `---` and `\+\+\+` lines after it/);
    assert.match(cutOff(lines(...first, ...upTo(second, 2)), 'old/n.txt'), /header of old\/n\.txt \(line 10\): its `---` line has no `\+\+\+` line after it/);
  });

  test('a new file that names content but has no hunk is refused mid-patch too, with the reason', () => {
    const { code, message = '', path } = run({ patch: lines(...upTo(NEW_FILE, 3), ...MODIFY) }, TREE);
    assert.equal(code, 'parse_error');
    assert.equal(path, 'n.txt');
    assert.match(message, /^The file section for n\.txt at line 1 has no hunk, but its `index` line says the new file has content \(blob 24641c4/);
    assert.equal(run({ patch: lines(...upTo(RENAME_AND_EDIT, 5), ...MODIFY) }, TREE).code, 'parse_error', 'a rename whose blobs differ, without its hunk');
  });
});

describe('a deleted file without its lines (`git diff -D`) is deleted only if it is the blob its index line names', () => {
  const withoutLines = upTo(DELETE, 3);

  test('the file git deleted: deleted, at the end of the patch or before another file', () => {
    assert.deepEqual(Object.keys(applied(lines(...MODIFY, ...withoutLines)).tree).sort(), ['a.txt', 'both.txt', 'gone.txt', 'mode.txt', 'mv.txt', 'ren.txt']);
    assert.equal(applied(lines(...withoutLines, ...MODIFY)).tree['del.txt'], undefined);
  });

  test('another file: context_not_found, nothing deleted', () => {
    for (const content of [lines('hello', 'there'), lines('hello', 'world', '!')]) {
      const { code, message = '', path } = run({ patch: lines(...MODIFY, ...withoutLines) }, { ...TREE, 'del.txt': content });
      assert.equal(code, 'context_not_found');
      assert.equal(path, 'del.txt');
      assert.match(message, /deletes del\.txt without listing its lines, and the file is not what its index line says it deletes \(blob 94954ab\)/);
    }
  });

  test('a non-empty file under an index line naming the empty blob, or none: context_not_found', () => {
    const { code, message = '' } = run({ patch: lines(...EMPTY_DELETE) }, { ...TREE, 'gone.txt': lines('now with content') });
    assert.equal(code, 'context_not_found');
    assert.match(message, /^The patch deletes gone\.txt as an empty file \(its section lists no lines\), but the file has content: nothing was deleted\./);
    assert.equal(run({ patch: lines('diff --git a/del.txt b/del.txt', 'deleted file mode 100644') }, TREE).code, 'context_not_found');
  });

  test('reversed, it cannot bring the content back: not_reversible (an empty file\'s delete reverses to an add)', () => {
    assert.equal(run({ patch: lines(...withoutLines), reverse: true }, {}).code, 'not_reversible');
    assert.equal(applied(lines(...EMPTY_DELETE), TREE).tree['gone.txt'], undefined);
    const { plan } = run({ patch: lines(...EMPTY_DELETE), reverse: true }, {});
    assert.deepEqual(plan?.files.map((file) => [file.op, file.path, file.after?.length]), [['add', 'gone.txt', 0]]);
  });
});

describe('header blocks git writes whole without a hunk still apply, at the end or not', () => {
  test('an empty new file, an empty deleted file, a pure rename and a mode change, each last', () => {
    assert.equal(applied(lines(...MODIFY, ...EMPTY_NEW_FILE)).tree['empty.txt'], '');
    assert.equal('gone.txt' in applied(lines(...MODIFY, ...EMPTY_DELETE)).tree, false);
    const renamed = applied(lines(...MODIFY, ...PURE_RENAME)).tree;
    assert.deepEqual([renamed['moved.txt'], 'mv.txt' in renamed], [lines('x'), false]);
    const moded = applied(lines(...MODIFY, ...MODE_ONLY));
    assert.equal(moded.tree['a.txt'], lines('1', '2', 'three'));
    assert.deepEqual(moded.diagnostics, ['mode_not_applied']);
  });

  test('the whole real diff of all of them, in one patch, and followed by blank lines or prose', () => {
    const all = [...MODIFY, ...NEW_FILE, ...DELETE, ...MODE_AND_EDIT, ...RENAME_AND_EDIT, ...MODE_ONLY, ...PURE_RENAME, ...EMPTY_DELETE, ...EMPTY_NEW_FILE];
    const expected = { 'a.txt': lines('1', '2', 'three'), 'n.txt': lines('content', 'here'), 'mode.txt': lines('m'), 'both.txt': lines('p', 'Q'), 'ren2.txt': lines('r', 'S'), 'moved.txt': lines('x'), 'empty.txt': '' };
    for (const after of ['', '\n\n', 'Tell me if the empty file should have content.\n']) {
      assert.deepEqual(applied(lines(...all) + after).tree, expected);
    }
  });
});

describe('diffs a model or a person wrote (no index line, no timestamps) stay as lenient', () => {
  test('a new file with only `new file mode` is created empty, as before', () => {
    assert.equal(applied(lines(...upTo(NEW_FILE, 2))).tree['n.txt'], '');
  });

  test('a lone `---` line after a model\'s header is text around the patch', () => {
    const model = ['diff --git a/n.txt b/n.txt', 'new file mode 100644', '--- /dev/null'];
    const { tree, diagnostics } = applied(lines(...model));
    assert.equal(tree['n.txt'], '');
    assert.deepEqual(diagnostics, ['text_around_patch']);
  });

  test('a model\'s `---` and `+++` with no hunk keep the message they had', () => {
    const { code, message = '' } = run({ patch: lines('diff --git a/n.txt b/n.txt', 'new file mode 100644', '--- /dev/null', '+++ b/n.txt') }, TREE);
    assert.equal(code, 'parse_error');
    assert.match(message, /^The file section for n\.txt at line 1 has no hunks\./);
  });
});
