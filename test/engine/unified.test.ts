/** The unified / git diff parser, tested directly on patch text. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { EngineError } from '../../daemon/engine/errors.ts';
import { LIMITS } from '../../daemon/engine/limits.ts';
import { fromText, hunksOf, parserHarness } from '../helpers/parserHarness.ts';
import type { Hunk } from '../../daemon/engine/types.ts';
import { parseUnified } from '../../daemon/engine/unified.ts';

/** A limit only a catastrophic (quadratic or worse) parse reaches, however loaded the machine; speed itself is measured by `npm run bench`. */
const NOT_CATASTROPHIC = { timeout: 60_000 };

const patch = (...lines: string[]) => `${lines.join('\n')}\n`;

const harness = parserHarness(fromText(parseUnified));
const { parsed, onlyFile } = harness;

function rejected(text: string, code: EngineError['code']): EngineError {
  const error = harness.rejected(text);
  assert.equal(error.code, code, error.message);
  return error;
}

function firstHunk(text: string): Hunk {
  return hunksOf(onlyFile(text))[0]!;
}

const MODIFY = patch(
  '--- a/src/main.rs',
  '+++ b/src/main.rs',
  '@@ -10,4 +10,5 @@ fn helper() {',
  ' fn main() {',
  '     println!("hello");',
  '-    old_call();',
  '+    new_call();',
  '+    extra_call();',
  ' }',
);

describe('RFC verification plan', () => {
  test('modify: one update with its hunk', () => {
    const result = parsed(MODIFY);
    assert.equal(result.dialect, 'unified');
    assert.deepEqual(result.diagnostics, []);
    assert.deepEqual(result.files, [{
      op: 'update',
      path: 'src/main.rs',
      hunks: [{
        oldStart: 10,
        anchors: [],
        atEndOfFile: false,
        lines: [
          { kind: 'context', text: 'fn main() {' },
          { kind: 'context', text: '    println!("hello");' },
          { kind: 'remove', text: '    old_call();' },
          { kind: 'add', text: '    new_call();' },
          { kind: 'add', text: '    extra_call();' },
          { kind: 'context', text: '}' },
        ],
      }],
    }]);
  });

  test('add: the + lines joined, with a final newline', () => {
    const file = onlyFile(patch('--- /dev/null', '+++ b/docs/new.md', '@@ -0,0 +1,3 @@', '+line 1', '+line 2', '+line 3'));
    assert.deepEqual(file, { op: 'add', path: 'docs/new.md', content: 'line 1\nline 2\nline 3\n' });
  });

  test('delete: the hunks are kept so the planner can check the content', () => {
    const file = onlyFile(patch('--- a/docs/old.md', '+++ /dev/null', '@@ -1,2 +0,0 @@', '-old line 1', '-old line 2'));
    assert.equal(file.op, 'delete');
    assert.equal(file.path, 'docs/old.md');
    assert.deepEqual(hunksOf(file)[0]?.lines, [{ kind: 'remove', text: 'old line 1' }, { kind: 'remove', text: 'old line 2' }]);
  });

  test('rename-only: diff --git + rename from/to, metadata listed', () => {
    const result = parsed(patch('diff --git a/old.txt b/new.txt', 'similarity index 100%', 'rename from old.txt', 'rename to new.txt'));
    assert.deepEqual(result.files, [{ op: 'rename', fromPath: 'old.txt', path: 'new.txt', hunks: [] }]);
    assert.deepEqual(result.ignoredMetadata, ['similarity index 100%']);
  });

  test('rename with edits', () => {
    const file = onlyFile(patch(
      'diff --git a/old.txt b/new.txt',
      'similarity index 80%',
      'rename from old.txt',
      'rename to new.txt',
      'index 1234567..89abcde 100644',
      '--- a/old.txt',
      '+++ b/new.txt',
      '@@ -1,3 +1,3 @@',
      ' line 1',
      '-old line',
      '+new line',
      ' line 3',
    ));
    assert.equal(file.op, 'rename');
    assert.ok(file.op === 'rename');
    assert.equal(file.fromPath, 'old.txt');
    assert.equal(file.path, 'new.txt');
    assert.equal(file.hunks.length, 1);
    assert.deepEqual(file.blobs, { old: '1234567', new: '89abcde' });
  });

  test('the index line gives the blob ids; one that is not two hex ids is only listed', () => {
    const body = ['--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b'];
    const full = onlyFile(patch('diff --git a/x b/x', `index ${'a'.repeat(40)}..${'b'.repeat(40)}`, ...body));
    assert.ok(full.op === 'update');
    assert.deepEqual(full.blobs, { old: 'a'.repeat(40), new: 'b'.repeat(40) });
    const odd = onlyFile(patch('diff --git a/x b/x', 'index 1..2 100644', ...body));
    assert.ok(odd.op === 'update');
    assert.equal(odd.blobs, undefined);
  });

  test('prefix normalisation: a/ b/ stripped, ./ and // collapsed', () => {
    assert.equal(onlyFile(patch('--- a/./src//x.ts', '+++ b/src/x.ts', '@@ -1 +1 @@', '-a', '+b')).path, 'src/x.ts');
  });

  for (const [name, oldPath, newPath] of [
    ['../ climbing out', 'a/../outside.txt', 'b/../outside.txt'],
    ['a/../../x', 'a/../../x', 'b/../../x'],
    ['an absolute path', '/etc/passwd', '/etc/passwd'],
    ['a/ prefix before an absolute path', 'a//etc/hostname', 'b//etc/hostname'],
  ] as const) {
    test(`path_escape: ${name}`, () => {
      rejected(patch(`--- ${oldPath}`, `+++ ${newPath}`, '@@ -1 +1 @@', '-a', '+b'), 'path_escape');
    });
  }

  test('path_escape: a new file outside the workspace', () => {
    rejected(patch('--- /dev/null', '+++ b/../../x', '@@ -0,0 +1 @@', '+x'), 'path_escape');
  });

  test('path_escape: a rename destination outside', () => {
    rejected(patch('diff --git a/x b/../y', 'rename from x', 'rename to ../y'), 'path_escape');
  });

  test('path_escape even when the escape comes after good sections', () => {
    rejected(MODIFY + patch('--- /dev/null', '+++ b/../evil', '@@ -0,0 +1 @@', '+x'), 'path_escape');
  });
});

describe('prefixes and paths', () => {
  test('git --no-prefix style', () => {
    const file = onlyFile(patch('diff --git lib/x.js lib/x.js', 'index 1..2 100644', '--- lib/x.js', '+++ lib/x.js', '@@ -1 +1 @@', '-a', '+b'));
    assert.equal(file.path, 'lib/x.js');
  });

  test('other prefixes on a diff --git line (diff.mnemonicPrefix, --src-prefix/--dst-prefix) are dropped, as git apply -p1 does', () => {
    assert.equal(onlyFile(patch('diff --git c/src/x.c w/src/x.c', 'index 1..2 100644', '--- c/src/x.c', '+++ w/src/x.c', '@@ -1 +1 @@', '-a', '+b')).path, 'src/x.c');
    assert.deepEqual(onlyFile(patch('diff --git i/n.txt w/n.txt', 'new file mode 100644', '--- /dev/null', '+++ w/n.txt', '@@ -0,0 +1 @@', '+n')), { op: 'add', path: 'n.txt', content: 'n\n' });
    assert.deepEqual(onlyFile(patch('diff --git left/my file right/my file', 'deleted file mode 100644', 'index e69de29..0000000')), { op: 'delete', path: 'my file', hunks: [], mustBeEmpty: true });
    assert.deepEqual(onlyFile(patch('diff --git x/a b/c d yy/a b/c d', 'new file mode 100644')), { op: 'add', path: 'a b/c d', content: '' });
    rejected(patch('diff --git x/a b/c d yy/a b/c e', 'new file mode 100644'), 'parse_error');
    assert.deepEqual(onlyFile(patch('diff --git c/old name.txt i/new name.txt', 'similarity index 100%', 'rename from old name.txt', 'rename to new name.txt')),
      { op: 'rename', fromPath: 'old name.txt', path: 'new name.txt', hunks: [] });
    assert.deepEqual(onlyFile(patch('diff --git c/a.txt w/b.txt', 'rename from a.txt', 'rename to b.txt', '--- c/a.txt', '+++ w/b.txt', '@@ -1 +1 @@', '-a', '+b')).path, 'b.txt');
  });

  test('equal first components are not prefixes (--no-prefix), nor are ones a rename does not drop', () => {
    assert.equal(onlyFile(patch('diff --git src/x.c src/x.c', '--- src/x.c', '+++ src/x.c', '@@ -1 +1 @@', '-a', '+b')).path, 'src/x.c');
    const file = onlyFile(patch('diff --git src/a.txt lib/a.txt', 'rename from src/a.txt', 'rename to lib/a.txt'));
    assert.deepEqual(file, { op: 'rename', fromPath: 'src/a.txt', path: 'lib/a.txt', hunks: [] });
    rejected(patch('diff --git c/x.txt w/y.txt', '--- c/x.txt', '+++ w/y.txt', '@@ -1 +1 @@', '-a', '+b'), 'rename_path_mismatch');
  });

  test('bare ---/+++ without prefixes', () => {
    assert.equal(onlyFile(patch('--- lib/x.js', '+++ lib/x.js', '@@ -1 +1 @@', '-a', '+b')).path, 'lib/x.js');
  });

  test('a path that genuinely starts with a/ is kept when the other side has no b/', () => {
    assert.equal(onlyFile(patch('--- a/x.txt', '+++ a/x.txt', '@@ -1 +1 @@', '-a', '+b')).path, 'a/x.txt');
  });

  test('with diff --git a/ b/ the --- and +++ prefixes are stripped', () => {
    assert.equal(onlyFile(patch('diff --git a/a/x b/a/x', '--- a/a/x', '+++ b/a/x', '@@ -1 +1 @@', '-a', '+b')).path, 'a/x');
  });

  test('a prefix on one side only is stripped when that names the same file', () => {
    assert.equal(onlyFile(patch('--- a/src/x.ts', '+++ src/x.ts', '@@ -1 +1 @@', '-a', '+b')).path, 'src/x.ts');
  });

  test('/dev/null counts as prefixed: +++ b/new gives new', () => {
    assert.deepEqual(onlyFile(patch('--- /dev/null', '+++ b/new', '@@ -0,0 +1 @@', '+x')), { op: 'add', path: 'new', content: 'x\n' });
  });

  test('GNU diff timestamps after a tab are dropped', () => {
    const file = onlyFile(patch('--- lib/x.js\t2024-01-01 10:00:00.000000000 +0100', '+++ lib/x.js\t2024-01-02 10:00:00.000000000 +0100', '@@ -1 +1 @@', '-a', '+b'));
    assert.equal(file.path, 'lib/x.js');
  });

  test('quoted paths: octal escapes are UTF-8 bytes, plus \\t \\n \\"', () => {
    const added = onlyFile(patch('--- /dev/null', '+++ "b/caf\\303\\251 \\"q\\" \\t.txt"\t', '@@ -0,0 +1 @@', '+x'));
    assert.equal(added.path, 'café "q" \t.txt');
    const weird = onlyFile(patch('--- /dev/null', '+++ "b/line\\nbreak"', '@@ -0,0 +1 @@', '+x'));
    assert.equal(weird.path, 'line\nbreak');
  });

  test('quoted paths on the diff --git line are enough for an empty new file', () => {
    const file = onlyFile(patch('diff --git "a/utf-8 \\355\\225\\234.txt" "b/utf-8 \\355\\225\\234.txt"', 'new file mode 100644', 'index 0000000..e69de29'));
    assert.deepEqual(file, { op: 'add', path: 'utf-8 한.txt', content: '' });
  });

  test('an escaped backslash is unquoted, then refused by the path rules', () => {
    rejected(patch('--- /dev/null', '+++ "b/back\\\\slash"', '@@ -0,0 +1 @@', '+x'), 'path_escape');
  });

  test('an unterminated quoted path is a parse_error', () => {
    rejected(patch('--- "a/x', '+++ "b/x', '@@ -1 +1 @@', '-a', '+b'), 'parse_error');
  });

  test('diff --git with spaces in the same path: split in half', () => {
    const file = onlyFile(patch('diff --git a/my b/file.txt b/my b/file.txt', 'deleted file mode 100644', 'index e69de29..0000000'));
    assert.deepEqual(file, { op: 'delete', path: 'my b/file.txt', hunks: [], mustBeEmpty: true });
  });

  test('rename-only with spaces: split at the one " b/"', () => {
    const file = onlyFile(patch('diff --git a/old name.txt b/new name.txt', 'rename from old name.txt', 'rename to new name.txt'));
    assert.deepEqual(file, { op: 'rename', fromPath: 'old name.txt', path: 'new name.txt', hunks: [] });
  });

  test('spaces in paths: ---/+++ decide when diff --git cannot be split', () => {
    const file = onlyFile(patch('diff --git a/x b/y b/x b/y', '--- a/x b/y', '+++ b/x b/y', '@@ -1 +1 @@', '-a', '+b'));
    assert.equal(file.path, 'x b/y');
  });

  test('a diff --git line that cannot be split, with nothing else to go on, is a parse_error', () => {
    rejected(patch('diff --git a/x b/y b/z', 'new file mode 100644'), 'parse_error');
  });

  test('a CR left on header lines (mixed line endings) is not part of the path', () => {
    const file = onlyFile('--- a/x.txt\r\n+++ b/x.txt\r\n@@ -1 +1 @@\n-a\r\n+b\n');
    assert.equal(file.path, 'x.txt');
    assert.deepEqual(hunksOf(file)[0]?.lines, [{ kind: 'remove', text: 'a\r' }, { kind: 'add', text: 'b' }]);
  });
});

describe('git sections', () => {
  test('several diff --git sections with metadata', () => {
    const result = parsed(patch(
      'diff --git a/bin/run b/bin/run',
      'old mode 100644',
      'new mode 100755',
      'index 1111111..2222222',
      '--- a/bin/run',
      '+++ b/bin/run',
      '@@ -1 +1 @@',
      '-a',
      '+b',
      'diff --git a/new.sh b/new.sh',
      'new file mode 100755',
      'index 0000000..3333333',
      '--- /dev/null',
      '+++ b/new.sh',
      '@@ -0,0 +1 @@',
      '+echo hi',
      'diff --git a/gone.txt b/gone.txt',
      'deleted file mode 100644',
      'index 4444444..0000000',
      '--- a/gone.txt',
      '+++ /dev/null',
      '@@ -1 +0,0 @@',
      '-bye',
    ));
    assert.deepEqual(result.files.map((file) => [file.op, file.path]), [['update', 'bin/run'], ['add', 'new.sh'], ['delete', 'gone.txt']]);
    // The content is patched; the modes asked for are not, and each such file says so.
    assert.deepEqual(result.diagnostics.map((diagnostic) => [diagnostic.code, diagnostic.path]), [['mode_not_applied', 'bin/run'], ['mode_not_applied', 'new.sh']]);
    assert.deepEqual(result.ignoredMetadata, [
      'old mode 100644', 'new mode 100755', 'index 1111111..2222222',
      'new file mode 100755', 'index 0000000..3333333',
      'deleted file mode 100644', 'index 4444444..0000000',
    ]);
  });

  test('dissimilarity index is accepted and listed', () => {
    const result = parsed(patch('diff --git a/x b/x', 'dissimilarity index 90%', '--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b'));
    assert.deepEqual(result.ignoredMetadata, ['dissimilarity index 90%']);
  });

  test('a mode-only section makes no file patch, only metadata', () => {
    const next = patch('diff --git a/y b/y', '--- a/y', '+++ b/y', '@@ -1 +1 @@', '-a', '+b');
    const result = parsed(MODIFY + patch('diff --git a/bin/express b/bin/express', 'old mode 100644', 'new mode 100755') + next);
    assert.deepEqual(result.files.map((file) => file.path), ['src/main.rs', 'y']);
    assert.deepEqual(result.ignoredMetadata, ['old mode 100644', 'new mode 100755']);
  });

  test('a patch that only changes a mode parses to no files', () => {
    const result = parsed(patch('diff --git a/x b/x', 'old mode 100644', 'new mode 100755'));
    assert.deepEqual(result.files, []);
  });

  test('empty-file add and delete', () => {
    const result = parsed(patch(
      'diff --git a/empty b/empty',
      'new file mode 100644',
      'index 0000000..e69de29',
      'diff --git a/was-empty b/was-empty',
      'deleted file mode 100644',
      'index e69de29..0000000',
    ));
    assert.deepEqual(result.files, [
      { op: 'add', path: 'empty', content: '' },
      { op: 'delete', path: 'was-empty', hunks: [], mustBeEmpty: true },
    ]);
  });

  test('diff --git followed directly by hunks uses the diff --git path', () => {
    assert.equal(onlyFile(patch('diff --git a/x b/x', '@@ -1 +1 @@', '-a', '+b')).path, 'x');
  });

  test('rename onto the same path is an edit', () => {
    const file = onlyFile(patch('diff --git a/x b/x', 'rename from x', 'rename to x', '--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b'));
    assert.equal(file.op, 'update');
  });

  test('rename with only one of rename from/to is a parse_error', () => {
    rejected(patch('diff --git a/x b/y', 'rename from x'), 'parse_error');
  });
});

describe('rename_path_mismatch', () => {
  test('rename from disagrees with diff --git', () => {
    rejected(patch('diff --git a/old.txt b/new.txt', 'rename from other.txt', 'rename to new.txt'), 'rename_path_mismatch');
  });

  test('rename to disagrees with diff --git', () => {
    rejected(patch('diff --git a/old.txt b/new.txt', 'rename from old.txt', 'rename to else.txt'), 'rename_path_mismatch');
  });

  test('+++ disagrees with rename to', () => {
    rejected(patch('diff --git a/old.txt b/new.txt', 'rename from old.txt', 'rename to new.txt', '--- a/old.txt', '+++ b/other.txt', '@@ -1 +1 @@', '-a', '+b'), 'rename_path_mismatch');
  });

  test('+++ differs from --- and diff --git, without rename headers', () => {
    rejected(patch('diff --git a/Readme.md b/Readme.md', 'index 1..2 100644', '--- a/Readme.md', '+++ b/Readme-renamed.md', '@@ -1 +1 @@', '-a', '+b'), 'rename_path_mismatch');
  });

  test('---/+++ agree with each other but not with diff --git', () => {
    rejected(patch('diff --git a/x b/x', '--- a/y', '+++ b/y', '@@ -1 +1 @@', '-a', '+b'), 'rename_path_mismatch');
  });

  test('bare headers naming two different files', () => {
    rejected(patch('--- a/one.txt', '+++ b/two.txt', '@@ -1 +1 @@', '-a', '+b'), 'rename_path_mismatch');
  });

  test('diff --git naming two files without rename headers or ---/+++', () => {
    rejected(patch('diff --git a/x b/y', '@@ -1 +1 @@', '-a', '+b'), 'rename_path_mismatch');
  });
});

describe('duplicate_file_patch', () => {
  test('the same normalised path in two sections', () => {
    const error = rejected(MODIFY + patch('--- a/src/./main.rs', '+++ b/src/main.rs', '@@ -30 +30 @@', '-x', '+y'), 'duplicate_file_patch');
    assert.equal(error.path, 'src/main.rs');
    assert.match(error.message, /line 1 .*line 10/);
  });

  test('a rename source reused by a later section', () => {
    rejected(patch('diff --git a/a.txt b/b.txt', 'rename from a.txt', 'rename to b.txt', 'diff --git a/a.txt b/a.txt', '--- a/a.txt', '+++ /dev/null', '@@ -1 +0,0 @@', '-x'), 'duplicate_file_patch');
  });
});

describe('unsupported_git_patch_feature', () => {
  test('Binary files … differ', () => {
    rejected(MODIFY + patch('diff --git a/logo.png b/logo.png', 'index 1..2 100644', 'Binary files a/logo.png and b/logo.png differ'), 'unsupported_git_patch_feature');
  });

  test('Binary files … differ without diff --git (GNU diff)', () => {
    rejected(patch('Binary files a/logo.png and b/logo.png differ'), 'unsupported_git_patch_feature');
  });

  test('GIT binary patch', () => {
    rejected(patch('diff --git a/icon.bin b/icon.bin', 'new file mode 100644', 'index 0000000..bd05085', 'GIT binary patch', 'literal 40', 'wcmeAS@N?', '', 'literal 0', 'HcmV?d00001', ''), 'unsupported_git_patch_feature');
  });

  test('copy from / copy to', () => {
    rejected(patch('diff --git a/x b/y', 'similarity index 100%', 'copy from x', 'copy to y'), 'unsupported_git_patch_feature');
  });

  test('a submodule (mode 160000)', () => {
    rejected(patch('diff --git a/sub b/sub', 'new file mode 160000', 'index 0000000..abcdef1', '--- /dev/null', '+++ b/sub', '@@ -0,0 +1 @@', '+Subproject commit abcdef1234567890abcdef1234567890abcdef12'), 'unsupported_git_patch_feature');
  });

  test('a symbolic link (mode 120000): added, deleted, retargeted or made from a file, never written as a regular file', () => {
    const link = (...lines: string[]) => rejected(patch('diff --git a/link b/link', ...lines, '@@ -0,0 +1 @@', '+target.txt', '\\ No newline at end of file'), 'unsupported_git_patch_feature');
    link('new file mode 120000', 'index 0000000..c9c61fe', '--- /dev/null', '+++ b/link');
    link('index 1111111..c9c61fe 120000', '--- a/link', '+++ b/link');
    link('old mode 100644', 'new mode 120000', 'index 1111111..c9c61fe', '--- a/link', '+++ b/link');
    rejected(patch('diff --git a/link b/link', 'deleted file mode 120000', 'index c9c61fe..0000000', '--- a/link', '+++ /dev/null', '@@ -1 +0,0 @@', '-target.txt', '\\ No newline at end of file'), 'unsupported_git_patch_feature');
  });

  test('a submodule commit change (Subproject commit lines)', () => {
    rejected(patch('--- a/sub', '+++ b/sub', '@@ -1 +1 @@', '-Subproject commit 1111111111111111111111111111111111111111', '+Subproject commit 2222222222222222222222222222222222222222'), 'unsupported_git_patch_feature');
  });
});

describe('hunk headers', () => {
  for (const header of ['@@ ... @@', '@@ @@', '@@', '@@ … @@ tail']) {
    test(`${JSON.stringify(header)} is accepted without numbers`, () => {
      const hunk = firstHunk(patch('--- a/x', '+++ b/x', header, ' a', '-b', '+c'));
      assert.equal(hunk.oldStart, undefined);
      assert.ok(!('oldStart' in hunk));
      assert.deepEqual(hunk.anchors, []);
    });
  }

  test('the header tail is informational, never an anchor', () => {
    assert.deepEqual(firstHunk(patch('--- a/x', '+++ b/x', '@@ -3,1 +3,1 @@ function foo() {', '-a', '+b')).anchors, []);
  });

  test('counts may be omitted: @@ -3 +3 @@', () => {
    const result = parsed(patch('--- a/x', '+++ b/x', '@@ -3 +3 @@', '-a', '+b'));
    assert.equal(hunksOf(result.files[0]!)[0]?.oldStart, 3);
    assert.deepEqual(result.diagnostics, []);
  });

  test('no closing @@ is tolerated', () => {
    assert.equal(firstHunk(patch('--- a/x', '+++ b/x', '@@ -7,1 +7,1', '-a', '+b')).oldStart, 7);
  });

  for (const [name, header] of [
    ['non-numeric count', '@@ -50,x7 +50,7 @@'],
    ['combined-diff @@@ header', '@@@ -54,7 -54,7 +54,7 @@@'],
    ['three ranges', '@@ -222,8 +222,6 +222,6 @@'],
    ['text instead of ranges', '@@ def foo @@'],
    ['new range first', '@@ +1,2 -1,2 @@'],
    ['huge number', '@@ -99999999999999999999 +1 @@'],
  ] as const) {
    test(`invalid_hunk_header: ${name}`, () => {
      const error = rejected(patch('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b', header, '-c', '+d'), 'invalid_hunk_header');
      assert.equal(error.path, 'x');
      assert.equal(error.hunkIndex, 1);
      assert.match(error.message, /^Line 6 /);
    });
  }
});

describe('oldStart conventions', () => {
  const startOf = (header: string, body: string[]) => firstHunk(patch('--- a/x', '+++ b/x', header, ...body)).oldStart;

  test('the first old line for a normal hunk', () => assert.equal(startOf('@@ -7,2 +7,2 @@', [' a', '-b', '+c']), 7));
  test('a pure insertion goes before line old_start + 1', () => assert.equal(startOf('@@ -5,0 +6,2 @@', ['+a', '+b']), 6));
  test('-0,0 gives 1', () => assert.equal(firstHunk(patch('--- a/x', '+++ b/x', '@@ -0,0 +1 @@', '+a')).oldStart, 1));
  test('-0 with the implied count of 1 is clamped to 1', () => assert.equal(startOf('@@ -0 +1 @@', ['-a', '+b']), 1));
});

describe('hunk bodies', () => {
  test('several hunks in one file', () => {
    const hunks = hunksOf(onlyFile(patch('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b', '@@ -10,2 +10,2 @@', ' c', '-d', '+e')));
    assert.deepEqual(hunks.map((hunk) => hunk.oldStart), [1, 10]);
  });

  test('a totally empty line is an empty context line', () => {
    const hunk = firstHunk(patch('--- a/x', '+++ b/x', '@@ -1,3 +1,3 @@', ' a', '', '-b', '+c'));
    assert.deepEqual(hunk.lines[1], { kind: 'context', text: '' });
  });

  test('a CR at a line end is content when the patch is not all CRLF', () => {
    const hunk = firstHunk('--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\n');
    assert.deepEqual(hunk.lines, [{ kind: 'context', text: 'a\r' }, { kind: 'remove', text: 'b\r' }, { kind: 'add', text: 'c' }]);
  });

  test('an all-CRLF patch arrives without CRs', () => {
    const hunk = firstHunk('--- a/x\r\n+++ b/x\r\n@@ -1 +1 @@\r\n-b\r\n+c\r\n');
    assert.deepEqual(hunk.lines, [{ kind: 'remove', text: 'b' }, { kind: 'add', text: 'c' }]);
  });

  test('wrong counts are advisory: parsed by prefix, with a diagnostic', () => {
    const result = parsed(patch('--- a/x', '+++ b/x', '@@ -1,9 +1,2 @@', ' a', '-b', '+c', '@@ -20,1 +20,1 @@', '-d', '+e'));
    assert.equal(hunksOf(result.files[0]!)[0]?.lines.length, 3);
    assert.deepEqual(result.diagnostics.map(({ code, path, hunkIndex }) => ({ code, path, hunkIndex })), [{ code: 'hunk_count_mismatch', path: 'x', hunkIndex: 0 }]);
  });

  test('a body line that is not " ", "-", "+" or "\\" inside a hunk is a parse_error', () => {
    const error = rejected(patch('--- a/x', '+++ b/x', '@@ -1,4 +1,4 @@', ' a', 'b lost its space', '-c', '+d', ' e'), 'parse_error');
    assert.match(error.message, /^Line 5 /);
    assert.equal(error.hunkIndex, 0);
  });

  test('a hunk with no lines is a parse_error', () => {
    rejected(patch('--- a/x', '+++ b/x', '@@ -1 +1 @@', '@@ -3 +3 @@', '-a', '+b'), 'parse_error');
  });

  test('blank lines between the file header and the first hunk are skipped', () => {
    assert.equal(hunksOf(onlyFile(patch('--- a/x', '+++ b/x', '', '@@ -1 +1 @@', '-a', '+b'))).length, 1);
  });
});

describe('--- / +++ inside a hunk', () => {
  test('a removed "-- x" and added "++ y" line when the counts need them', () => {
    const result = parsed(patch('--- a/x.sql', '+++ b/x.sql', '@@ -1,2 +1,2 @@', ' select 1;', '--- old comment', '+++ new comment'));
    assert.equal(result.files.length, 1);
    assert.deepEqual(hunksOf(result.files[0]!)[0]?.lines.slice(1), [{ kind: 'remove', text: '-- old comment' }, { kind: 'add', text: '++ new comment' }]);
  });

  test('a new file header when the counts are already met', () => {
    const result = parsed(patch('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b', '--- a/y', '+++ b/y', '@@ -1 +1 @@', '-c', '+d'));
    assert.deepEqual(result.files.map((file) => file.path), ['x', 'y']);
  });

  test('a new file header when the hunk has no counts', () => {
    const result = parsed(patch('--- a/x', '+++ b/x', '@@', '-a', '+b', '--- a/y', '+++ b/y', '@@', '-c', '+d'));
    assert.deepEqual(result.files.map((file) => file.path), ['x', 'y']);
  });

  test('a new file header when counts too large would only come out wrong anyway', () => {
    const result = parsed(patch('--- a/x', '+++ b/x', '@@ -1,5 +1,5 @@', '-a', '+b', '--- a/y', '+++ b/y', '@@ -1 +1 @@', '-c', '+d'));
    assert.deepEqual(result.files.map((file) => file.path), ['x', 'y']);
  });
});

describe('blank lines at the end of a hunk', () => {
  test('dropped at the end of the patch', () => {
    const hunk = firstHunk('--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\n\n');
    assert.equal(hunk.lines.length, 3);
  });

  test('dropped before the next file header', () => {
    const result = parsed(patch('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b', '', 'diff --git a/y b/y', '--- a/y', '+++ b/y', '@@ -1 +1 @@', '-c', '+d'));
    assert.equal(hunksOf(result.files[0]!)[0]?.lines.length, 2);
    assert.deepEqual(result.diagnostics, []);
  });

  test('kept when the counts say they are context', () => {
    const hunk = firstHunk(patch('--- a/x', '+++ b/x', '@@ -1,3 +1,3 @@', ' a', '-b', '+c', '', ''));
    assert.deepEqual(hunk.lines.at(-1), { kind: 'context', text: '' });
    assert.equal(hunk.lines.length, 4);
  });

  test('a line holding one space is real context and always kept', () => {
    const hunk = firstHunk(patch('--- a/x', '+++ b/x', '@@', '-b', '+c', ' '));
    assert.deepEqual(hunk.lines.at(-1), { kind: 'context', text: '' });
  });
});

describe('\\ No newline at end of file', () => {
  const MARKER = '\\ No newline at end of file';

  test('after a removed line: the old side lacked it, the new side gets one', () => {
    const hunk = firstHunk(patch('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', MARKER, '+b'));
    assert.deepEqual(hunk.finalNewline, { old: false, new: true });
    assert.equal(hunk.atEndOfFile, true);
  });

  test('after an added line: the new side lacks it, so the hunk ends the file', () => {
    const hunk = firstHunk(patch('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b', MARKER));
    assert.deepEqual(hunk.finalNewline, { old: true, new: false });
    assert.equal(hunk.atEndOfFile, true);
  });

  test('on both sides', () => {
    const hunk = firstHunk(patch('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', MARKER, '+b', MARKER));
    assert.deepEqual(hunk.finalNewline, { old: false, new: false });
    assert.equal(hunk.atEndOfFile, true);
  });

  test('after a context line: both sides', () => {
    const hunk = firstHunk(patch('--- a/x', '+++ b/x', '@@ -1,2 +1,2 @@', '-a', '+b', ' c', MARKER));
    assert.deepEqual(hunk.finalNewline, { old: false, new: false });
    assert.equal(hunk.atEndOfFile, true);
  });

  test('no marker: finalNewline absent', () => {
    const hunk = firstHunk(patch('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b'));
    assert.ok(!('finalNewline' in hunk));
    assert.equal(hunk.atEndOfFile, false);
  });

  test('a new file without a final newline', () => {
    assert.deepEqual(onlyFile(patch('--- /dev/null', '+++ b/x', '@@ -0,0 +1,2 @@', '+a', '+b', MARKER)), { op: 'add', path: 'x', content: 'a\nb' });
  });

  test('a marker before any line is a parse_error', () => {
    rejected(patch('--- a/x', '+++ b/x', '@@ -1 +1 @@', MARKER, '-a', '+b'), 'parse_error');
  });

  test('an old-side line after an old-side marker is a parse_error', () => {
    rejected(patch('--- a/x', '+++ b/x', '@@ -1,2 +1 @@', '-a', MARKER, '-b', '+c'), 'parse_error');
  });
});

describe('add and delete bodies', () => {
  test('an add with context lines is a parse_error', () => {
    const error = rejected(patch('--- /dev/null', '+++ b/x', '@@ -0,0 +1,2 @@', ' a', '+b'), 'parse_error');
    assert.equal(error.path, 'x');
  });

  test('a delete with added lines is a parse_error', () => {
    rejected(patch('--- a/x', '+++ /dev/null', '@@ -1 +0,0 @@', '-a', '+b'), 'parse_error');
  });

  test('an add keeps CR content in its lines', () => {
    assert.deepEqual(onlyFile('--- /dev/null\n+++ b/x\n@@ -0,0 +1,2 @@\n+a\r\n+b\n'), { op: 'add', path: 'x', content: 'a\r\nb\n' });
  });

  test('/dev/null on both sides is a parse_error', () => {
    rejected(patch('--- /dev/null', '+++ /dev/null', '@@ -0,0 +0,0 @@', ' a'), 'parse_error');
  });
});

describe('missing_file_header and parse_error', () => {
  test('hunks with no file header', () => {
    const error = rejected(patch('@@ -1,2 +1,2 @@', ' a', '-b', '+c'), 'missing_file_header');
    assert.match(error.message, /^Line 1 /);
  });

  test('hunks with no file header inside a fence after prose', () => {
    rejected(patch('Change lib/x.js like this:', '', '```diff', '@@ -1 +1 @@', '-a', '+b', '```'), 'missing_file_header');
  });

  test('a hunk after text that ended the diff', () => {
    rejected(patch('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b', '```', 'and also:', '```diff', '@@ -9 +9 @@', '-c', '+d', '```'), 'missing_file_header');
  });

  test('an empty patch', () => {
    rejected('', 'parse_error');
  });

  test('prose only', () => {
    rejected('Here is my change: rename foo to bar.\n', 'parse_error');
  });

  test('a bare file section without hunks', () => {
    rejected(patch('--- a/x', '+++ b/x'), 'parse_error');
  });

  test('a git section with ---/+++ but no hunks', () => {
    rejected(patch('diff --git a/x b/x', 'index 1..2', '--- a/x', '+++ b/x', 'diff --git a/y b/y', '--- a/y', '+++ b/y', '@@ -1 +1 @@', '-a', '+b'), 'parse_error');
  });

  test('a git section with nothing in it', () => {
    rejected(patch('diff --git a/x b/x', 'diff --git a/y b/y', '--- a/y', '+++ b/y', '@@ -1 +1 @@', '-a', '+b'), 'parse_error');
  });
});

describe('text around the patch', () => {
  test('prose before and after, and a ```diff fence', () => {
    const result = parsed(`The fix is below.\n\n\`\`\`diff\n${MODIFY}\`\`\`\n\nLet me know if you want more changes.\n`);
    assert.equal(result.files.length, 1);
    assert.deepEqual(result.diagnostics.map((diagnostic) => diagnostic.code).sort(), ['fenced_patch', 'text_around_patch']);
  });

  test('a ```patch fence with no newline after the closing fence', () => {
    const result = parsed(`\`\`\`patch\n${MODIFY}\`\`\``);
    assert.deepEqual(result.diagnostics.map((diagnostic) => diagnostic.code), ['fenced_patch']);
    assert.equal(hunksOf(result.files[0]!)[0]?.lines.length, 6);
  });

  test('prose right after a hunk whose counts came out exactly', () => {
    const result = parsed(`${MODIFY}That is all.\n- it renames old_call\n`);
    assert.equal(hunksOf(result.files[0]!)[0]?.lines.length, 6);
    assert.deepEqual(result.diagnostics.map((diagnostic) => diagnostic.code), ['text_around_patch']);
  });

  test('prose after a hunk without counts, when nothing diff-like follows', () => {
    const result = parsed(patch('--- a/x', '+++ b/x', '@@', '-a', '+b', '', 'Hope this helps.'));
    assert.equal(hunksOf(result.files[0]!)[0]?.lines.length, 2);
  });

  test('two fenced blocks, prose between them', () => {
    const second = patch('--- a/y', '+++ b/y', '@@ -1 +1 @@', '-c', '+d');
    const result = parsed(`First:\n\`\`\`diff\n${MODIFY}\`\`\`\nThen:\n\`\`\`diff\n${second}\`\`\`\n`);
    assert.deepEqual(result.files.map((file) => file.path), ['src/main.rs', 'y']);
  });
});

describe('limits', () => {
  test('too many hunks → limit_exceeded, before anything is built', () => {
    const count = LIMITS.maxHunks + 1;
    const lines = ['--- a/x', '+++ b/x'];
    for (let index = 0; index < count; index++) lines.push(`@@ -${index * 3 + 1} +${index * 3 + 1} @@`, '-a', '+b');
    const result = parseUnified(lines);
    assert.ok(!result.ok);
    assert.equal(result.error.code, 'limit_exceeded');
    assert.deepEqual(result.error.limit, { name: 'maxHunks', max: LIMITS.maxHunks, actual: count });
  });

  test('too many file sections → limit_exceeded, parsing stops at the first one over', () => {
    const lines: string[] = [];
    for (let index = 0; index <= LIMITS.maxFiles; index++) lines.push(`diff --git a/f${index} b/f${index}`, `--- a/f${index}`, `+++ b/f${index}`, '@@ -1 +1 @@', '-a', '+b');
    const result = parseUnified(lines);
    assert.ok(!result.ok);
    assert.deepEqual(result.error.limit, { name: 'maxFiles', max: LIMITS.maxFiles, actual: LIMITS.maxFiles + 1 });
  });

  // A parse gone quadratic takes minutes here: the time limit catches that; how fast it is belongs to `npm run bench`.
  test('100,000 hunks are refused', NOT_CATASTROPHIC, () => {
    const lines = ['--- a/x', '+++ b/x'];
    for (let index = 0; index < 100_000; index++) lines.push('@@', '-a', '+b');
    const result = parseUnified(lines);
    assert.ok(!result.ok && result.error.code === 'limit_exceeded');
  });
});

describe('robustness', () => {
  test('a large patch full of --- / +++ lookalikes parses, without blowing up', NOT_CATASTROPHIC, () => {
    const body: string[] = [];
    for (let index = 0; index < 50_000; index++) body.push('--- removed', '+++ added');
    const lines = ['--- a/x', '+++ b/x', '@@ -1,50000 +1,50000 @@', ...body];
    const result = parseUnified(lines);
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    assert.equal(result.value.files.length, 1);
  });

  test('a long run of prose after many short hunks is refused, without blowing up', NOT_CATASTROPHIC, () => {
    const lines = ['--- a/x', '+++ b/x'];
    for (let index = 0; index < 5_000; index++) lines.push('@@', '-a', '+b', 'prose');
    for (let index = 0; index < 50_000; index++) lines.push('more prose');
    const result = parseUnified(lines);
    assert.ok(!result.ok && result.error.code === 'parse_error', 'prose inside a hunk is refused');
  });

  test('never throws, always returns a Result', () => {
    const piece = fc.constantFrom(
      '--- a/x', '+++ b/x', '--- /dev/null', '+++ /dev/null', '--- "a/q\\303', 'diff --git a/x b/x', 'diff --git "a/x', 'diff --git ',
      '@@ -1,2 +1,2 @@', '@@ -0,0 +1 @@', '@@', '@@@ x', '@@ -x', ' ctx', '-old', '+new', '', '\r', '\\ No newline at end of file',
      'rename from x', 'rename to y', 'new file mode 100644', 'deleted file mode 100644', 'old mode 100644', 'index 1..2', '```', 'prose',
    );
    fc.assert(fc.property(fc.array(fc.oneof(piece, fc.string()), { maxLength: 30 }), (lines) => {
      const result = parseUnified(lines);
      assert.equal(typeof result.ok, 'boolean');
      if (!result.ok) assert.equal(typeof result.error.code, 'string');
    }), { numRuns: 2000 });
  });
});
