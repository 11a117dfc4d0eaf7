/** The strip level of unified diff paths: given, from the names, or from the files that exist. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePatch, type ParsedPatch, type PatchInput } from '../../daemon/engine/index.ts';
import { MAX_FOUND_LEVEL, preferredName, stripComponents } from '../../daemon/engine/strip.ts';

function parsed(input: PatchInput): ParsedPatch {
  const result = parsePatch(input);
  if (!result.ok) assert.fail(`${result.error.code}: ${result.error.message}`);
  return result.value;
}

const targets = (input: PatchInput) => parsed(input).files.map((file) => `${file.op} ${file.path}`);

const section = (oldName: string, newName: string, oldStamp = '', newStamp = '') =>
  `--- ${oldName}${oldStamp}\n+++ ${newName}${newStamp}\n@@ -1 +1 @@\n-a\n+b\n`;

const STAMP = '\t2026-11-23 10:00:00.000000000 +0000';

describe('stripComponents', () => {
  test('drops leading slash runs the way patch -p does', () => {
    assert.equal(stripComponents('a/b/c', 0), 'a/b/c');
    assert.equal(stripComponents('a/b/c', 1), 'b/c');
    assert.equal(stripComponents('a//b/c', 2), 'c');
    assert.equal(stripComponents('/u/src/x.c', 1), 'u/src/x.c');
    assert.equal(stripComponents('./x.c', 1), 'x.c');
    assert.equal(stripComponents('a/b', 2), undefined);
  });
});

describe('strip level', () => {
  test('the caller\'s level applies to every path, git sections included', () => {
    assert.deepEqual(targets({ patch: section('x/y/f.txt', 'x/y/f.txt'), strip: 2 }), ['update f.txt']);
    const git = 'diff --git a/src/f.txt b/src/f.txt\n--- a/src/f.txt\n+++ b/src/f.txt\n@@ -1 +1 @@\n-a\n+b\n';
    assert.deepEqual(targets({ patch: git, strip: 2 }), ['update f.txt']);
    const literal = parsePatch({ patch: git, strip: 0 });
    assert.equal(literal.ok ? 'parsed' : literal.error.code, 'rename_path_mismatch', 'a/src/f.txt and b/src/f.txt are two files at -p0, as for git apply -p0');
  });

  test('a level that leaves nothing is a parse_error', () => {
    const result = parsePatch({ patch: section('a/f.txt', 'b/f.txt'), strip: 2 });
    assert.equal(result.ok ? 'applied' : result.error.code, 'parse_error');
  });

  test('diff -ruN names: stripped until old and new agree, epoch timestamps are absent files', () => {
    const patch = section('old/src/f.txt', 'new/src/f.txt', STAMP, STAMP)
      + '--- old/src/g.txt\t1970-01-01 00:00:00.000000000 +0000\n+++ new/src/g.txt' + STAMP + '\n@@ -0,0 +1 @@\n+g\n'
      + '--- old/h.txt' + STAMP + '\n+++ new/h.txt\t1969-12-31 19:00:00.000000000 -0500\n@@ -1 +0,0 @@\n-h\n';
    assert.deepEqual(targets({ patch }), ['update src/f.txt', 'add src/g.txt', 'delete h.txt']);
    const diagnostic = parsed({ patch }).diagnostics.find((entry) => entry.code === 'strip_level');
    assert.match(diagnostic?.message ?? '', /strip level 1/);
  });

  test('a quoted name (GNU diff quotes spaces and non-ASCII bytes) keeps its timestamp: the epoch after the quote is an absent file', () => {
    const patch = '--- "old/a b.txt"' + STAMP + '\n+++ "new/a b.txt"\t1970-01-01 00:00:00.000000000 +0000\n@@ -1 +0,0 @@\n-a\n'
      + '--- "old/\\303\\251.txt"\t1970-01-01 00:00:00.000000000 +0000\n+++ "new/\\303\\251.txt"' + STAMP + '\n@@ -0,0 +1 @@\n+e\n'
      + '--- "old/c d.txt"' + STAMP + '\n+++ "new/c d.txt"' + STAMP + '\n@@ -1 +0,0 @@\n-c\n';
    assert.deepEqual(targets({ patch }), ['delete a b.txt', 'add é.txt', 'update c d.txt']);
  });

  test('a file that does not exist, with one hunk adding to nothing (`@@ -0,0`), is added, as git apply and GNU patch do', () => {
    const adds = (name: string) => `--- ${name}\t(nonexistent)\n+++ ${name}\t(working copy)\n@@ -0,0 +1,2 @@\n+one\n+two\n`;
    const patch = `Index: src/new.txt\n${'='.repeat(67)}\n${adds('src/new.txt')}`;
    const missing = parsed({ patch, existingPaths: [] });
    assert.deepEqual(missing.files, [{ op: 'add', path: 'src/new.txt', content: 'one\ntwo\n' }]);
    assert.match(missing.diagnostics.find((entry) => entry.code === 'missing_file_added')?.message ?? '', /src\/new.txt does not exist/);
    assert.deepEqual(targets({ patch: adds('a/b.txt').replace('+++ a/', '+++ b/'), existingPaths: [] }), ['add b.txt'], 'git\'s prefixes, without diff --git');
    assert.deepEqual(targets({ patch, existingPaths: ['src/new.txt'] }), ['update src/new.txt'], 'an existing file gets the lines at its top');
    assert.deepEqual(targets({ patch }), ['update src/new.txt'], 'nothing is added without asking the workspace');
    const withContext = '--- x.txt\n+++ x.txt\n@@ -1 +1,2 @@\n a\n+b\n';
    const twoHunks = '--- x.txt\n+++ x.txt\n@@ -0,0 +1 @@\n+a\n@@ -0,0 +2 @@\n+b\n';
    const numberedLower = '--- x.txt\n+++ x.txt\n@@ -3,0 +4 @@\n+a\n';
    for (const other of [withContext, twoHunks, numberedLower]) assert.deepEqual(targets({ patch: other, existingPaths: [] }), ['update x.txt'], other);
    const git = 'diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -0,0 +1 @@\n+a\n';
    assert.deepEqual(targets({ patch: git, existingPaths: [] }), ['update x.txt'], 'a git diff says new file mode when it adds');
  });

  test('an empty file dated at the epoch is added or deleted', () => {
    const patch = '--- old/e.txt\t1970-01-01 00:00:00.000000000 +0000\n+++ new/e.txt' + STAMP + '\n';
    assert.deepEqual(parsed({ patch }).files, [{ op: 'add', path: 'e.txt', content: '' }]);
  });

  test('with a probe the engine asks which files exist, then finds the level where they do', () => {
    const patch = section('proj/src/f.txt', 'proj/src/f.txt');
    const first = parsed({ patch, probe: true });
    assert.deepEqual(first.files.map((file) => file.path), ['proj/src/f.txt'], 'the guess: the names as written');
    assert.deepEqual(first.pathProbe, ['proj/src/f.txt', 'src/f.txt', 'f.txt']);
    assert.deepEqual(first.probeExpects, ['proj/src/f.txt'], 'the guess stands only if this exists');
    const differing = parsed({ patch: section('a.orig', 'a', STAMP, STAMP), probe: true });
    assert.deepEqual([differing.files, differing.probeExpects, differing.pathProbe], [[], undefined, ['a.orig', 'a']], 'no guess: the names differ');
    assert.deepEqual(targets({ patch, existingPaths: ['src/f.txt'] }), ['update src/f.txt']);
    assert.deepEqual(targets({ patch, existingPaths: [] }), ['update proj/src/f.txt']);
    assert.deepEqual(targets({ patch, existingPaths: ['proj/src/f.txt', 'src/f.txt'] }), ['update proj/src/f.txt']);
  });

  test('git prefixes win when their file exists; a git diff asks nothing', () => {
    const patch = section('a/f.txt', 'b/f.txt');
    assert.deepEqual(targets({ patch, existingPaths: ['f.txt', 'a/f.txt'] }), ['update f.txt']);
    const git = 'diff --git a/f.txt b/f.txt\n' + patch;
    assert.equal(parsed({ patch: git, probe: true }).pathProbe, undefined);
  });

  test(`levels are worked out up to ${MAX_FOUND_LEVEL} deep; strip reaches deeper`, () => {
    const deep = (levels: number) => section(`${'old/'.repeat(levels)}f.txt`, `${'new/'.repeat(levels)}f.txt`);
    assert.deepEqual(targets({ patch: deep(MAX_FOUND_LEVEL) }), ['update f.txt']);
    const deeper = parsePatch({ patch: deep(MAX_FOUND_LEVEL + 1) });
    assert.equal(deeper.ok ? 'parsed' : deeper.error.code, 'rename_path_mismatch');
    assert.deepEqual(targets({ patch: deep(MAX_FOUND_LEVEL + 1), strip: MAX_FOUND_LEVEL + 1 }), ['update f.txt']);
    assert.deepEqual(parsed({ patch: section(`${'p/'.repeat(40)}f.txt`, `${'p/'.repeat(40)}f.txt`), probe: true }).pathProbe?.length, MAX_FOUND_LEVEL + 1);
  });

  test('names thousands of components deep, or with long slash runs, are read in one pass', () => {
    const deep = parsePatch({ patch: section(`${'o/'.repeat(2_000)}f.txt`, `${'n/'.repeat(2_000)}f.txt`) });
    assert.equal(deep.ok ? 'parsed' : deep.error.code, 'rename_path_mismatch');
    // Past maxPathChars a name is refused as such, whatever its depth.
    const deeper = parsePatch({ patch: section(`${'o/'.repeat(20_000)}f.txt`, `${'n/'.repeat(20_000)}f.txt`) });
    assert.equal(deeper.ok ? 'parsed' : deeper.error.code, 'limit_exceeded');
    const slashes = '/'.repeat(100_000);
    assert.deepEqual(targets({ patch: section(`old${slashes}f.txt`, `new${slashes}f.txt`) }), ['update f.txt']);
  });

  test('diff -u a.orig a patches the name that exists; both: the one GNU patch prefers; neither: rename_path_mismatch', () => {
    const patch = section('a.orig', 'a', STAMP, STAMP);
    assert.deepEqual(targets({ patch, existingPaths: ['a'] }), ['update a']);
    assert.deepEqual(targets({ patch, existingPaths: ['a.orig'] }), ['update a.orig']);
    assert.deepEqual(targets({ patch, existingPaths: ['a.orig', 'a'] }), ['update a']);
    const result = parsePatch({ patch, existingPaths: [] });
    assert.equal(result.ok ? 'parsed' : result.error.code, 'rename_path_mismatch');
    assert.equal(preferredName('src/x.c', 'x.c'), 'x.c');
    assert.equal(preferredName('lib/long.c', 'src/x.c'), 'src/x.c');
  });
});
