/**
 * A `cd` that prose names before a patch ("Run 'cd build' first.") is not run: the paths stay
 * relative to the root once the workspace shows the patch does not apply under that directory.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { detectTextDialect } from '../../daemon/engine/detect.ts';
import { parsePatch } from '../../daemon/engine/parse.ts';
import type { PatchInput, Result, ParsedPatch } from '../../daemon/engine/types.ts';

const DIFF = ['--- a/f.txt', '+++ b/f.txt', '@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c'].join('\n');
const ENVELOPE = ['*** Begin Patch', '*** Update File: f.txt', '@@', ' a', '-b', '+B', ' c', '*** End Patch'].join('\n');
const ADD_ONLY = ['*** Begin Patch', '*** Add File: new.txt', '+n', '*** End Patch'].join('\n');

/** Parsed as the daemon parses: a first pass that may ask about paths, then one with the answer from `files` (and `refused`, the paths the workspace does not look at). */
function inWorkspace(patch: string, files: readonly string[], extra: Partial<PatchInput> = {}, refused: readonly string[] = []): Result<ParsedPatch> {
  const first = parsePatch({ patch, probe: true, ...extra });
  if (!first.ok || first.value.pathProbe === undefined) return first;
  const answer = (listed: readonly string[]) => first.value.pathProbe!.filter((path) => listed.includes(path));
  return parsePatch({ patch, existingPaths: answer(files), refusedPaths: answer(refused), ...extra });
}

function applied(patch: string, files: readonly string[], extra: Partial<PatchInput> = {}): ParsedPatch {
  const result = inWorkspace(patch, files, extra);
  if (!result.ok) assert.fail(`unexpected ${result.error.code}: ${result.error.message}`);
  return result.value;
}

function refused(patch: string, files: readonly string[]) {
  const result = inWorkspace(patch, files);
  if (result.ok) assert.fail(`expected a refusal, got ${result.value.files.map((file) => file.path).join(', ')}`);
  return result.error;
}

const PROSE = ["Run 'cd build' first.", 'You may need to `cd build`.', 'Run "cd build" first, then:', 'First `cd build && make`, then:', "It's `cd build/` you want."];

test('prose quoting a cd is not a shell line: detection goes on to the patch', () => {
  for (const prose of PROSE) assert.equal(detectTextDialect(`${prose}\n\n${DIFF}`.split('\n')), 'unified', prose);
});

test('the patch applies at the root when the files it changes are not all under the named directory', () => {
  for (const prose of PROSE) {
    for (const body of [DIFF, ENVELOPE]) {
      const result = applied(`${prose}\n\n${body}\n`, ['f.txt', 'build/other.txt']);
      assert.deepEqual(result.files.map((file) => file.path), ['f.txt'], prose);
      assert.equal(result.mentionedDirectory, 'build');
      const note = result.diagnostics.find((diagnostic) => diagnostic.code === 'directory_named_in_text');
      assert.match(note!.message, /names cd build; that is not run/);
    }
  }
  // Neither reading finds the file: the root one stands, and its plan will say not_found.
  assert.deepEqual(applied(`${PROSE[0]}\n${DIFF}\n`, []).files.map((file) => file.path), ['f.txt']);
});

test('the first pass asks about the files the patch changes at the root and under the directory, and every strip candidate there', () => {
  const first = parsePatch({ patch: `${PROSE[1]}\n${DIFF}\n`, probe: true });
  assert.ok(first.ok);
  assert.ok(first.value.pathProbe!.includes('f.txt') && first.value.pathProbe!.includes('build/f.txt'));
  assert.equal(first.value.probeExpects, undefined, 'always asked again');
  const bare = parsePatch({ patch: `${PROSE[1]}\n--- src/f.txt\n+++ src/f.txt\n@@ -1 +1 @@\n-b\n+B\n`, probe: true });
  assert.ok(bare.ok);
  for (const path of ['src/f.txt', 'f.txt', 'build/src/f.txt', 'build/f.txt']) assert.ok(bare.value.pathProbe!.includes(path), path);
});

test('refused when the patch would apply under the directory too, or only there, or only adds files', () => {
  const both = refused(`${PROSE[0]}\n${DIFF}\n`, ['f.txt', 'build/f.txt']);
  assert.equal(both.code, 'unsupported_command');
  assert.match(both.message, /both at the workspace root and under build/);
  const there = refused(`${PROSE[1]}\n${ENVELOPE}\n`, ['build/f.txt']);
  assert.equal(there.code, 'unsupported_command');
  assert.equal(there.path, 'build/f.txt');
  assert.match(there.message, /Put build\/ before each path/);
  assert.match(refused(`${PROSE[1]}\n${ADD_ONLY}\n`, []).message, /only adds files/);
  const block = 'f.txt\n<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n';
  assert.equal(refused(`Run this in sub (\`cd sub\`):\n${block}`, ['f.txt', 'sub/f.txt']).code, 'unsupported_command');
  assert.deepEqual(applied(`Run this in sub (\`cd sub\`):\n${block}`, ['f.txt']).files.map((file) => file.path), ['f.txt']);
});

test('a file under the directory that the workspace does not look at (behind a link) is not missing: refused, not taken from the root', () => {
  const unseen = inWorkspace(`${PROSE[1]}\n${DIFF}\n`, ['f.txt'], {}, ['build/f.txt']);
  assert.equal(!unseen.ok && unseen.error.code, 'unsupported_command');
  assert.equal(!unseen.ok && unseen.error.path, 'build/f.txt');
  assert.match(!unseen.ok ? unseen.error.message : '', /does not look at build\/f\.txt \(a symbolic link is or leads there/);
  const twoFiles = `${PROSE[1]}\n${DIFF}\n${DIFF.replaceAll('f.txt', 'g.txt')}\n`;
  assert.equal(inWorkspace(twoFiles, ['f.txt', 'g.txt', 'build/g.txt'], {}, ['build/f.txt']).ok, false, 'one unseen, the other there');
  const oneMissing = inWorkspace(twoFiles, ['f.txt', 'g.txt'], {}, ['build/g.txt']);
  assert.deepEqual(oneMissing.ok && oneMissing.value.files.map((file) => file.path), ['f.txt', 'g.txt'], 'one missing there: the directory reading cannot apply');
});

test('reversed, the check is on the patch as it will apply', () => {
  const deletes = ['*** Begin Patch', '*** Delete File: gone.txt', '*** End Patch'].join('\n');
  const error = inWorkspace(`${PROSE[1]}\n--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n`, ['build/gone.txt'], { reverse: true });
  assert.equal(!error.ok && error.error.code, 'unsupported_command', 'reversed, it only adds a file');
  assert.deepEqual(applied(`${PROSE[1]}\n${deletes}\n`, ['gone.txt']).files.map((file) => file.path), ['gone.txt']);
});

test('without a workspace to ask, a named cd is refused rather than guessed at', () => {
  const result = parsePatch({ patch: `${PROSE[0]}\n${DIFF}\n` });
  assert.equal(!result.ok && result.error.code, 'unsupported_command');
});

test('a cd named alone or to the root names no directory; one that cannot be read or leaves the workspace, or two, refuse', () => {
  for (const prose of ['Fix the `cd` builtin.', "The 'cd' command.", 'Run `cd .` first.']) {
    const result = parsePatch({ patch: `${prose}\n${DIFF}\n` });
    assert.ok(result.ok && result.value.mentionedDirectory === undefined, prose);
  }
  for (const prose of ['Run `cd $(git rev-parse --show-toplevel)` first.', 'Run `cd ..` first.', 'Run `cd ~/src` first.', 'Run `cd /tmp/x` first.', 'Run `cd -` first.', 'Run `cd a` then `cd b`.']) {
    const result = inWorkspace(`${prose}\n${DIFF}\n`, ['f.txt']);
    assert.equal(!result.ok && result.error.code, 'unsupported_command', prose);
  }
  assert.equal(applied('Run `cd a`, yes, `cd a`.\n' + `${DIFF}\n`, ['f.txt']).mentionedDirectory, 'a');
});

test('prose naming the cd its command runs describes the command; another directory is checked under the command\'s', () => {
  const command = `I'll \`cd sub\` first, then:\ncd sub && apply_patch <<'EOF'\n${ADD_ONLY}\nEOF\n`;
  const described = parsePatch({ patch: command });
  assert.ok(described.ok);
  assert.deepEqual(described.value.files.map((file) => file.path), ['sub/new.txt']);
  assert.equal(described.value.mentionedDirectory, undefined);
  const other = `Run \`cd pkg\` first:\ngit -C sub apply <<'EOF'\n${DIFF}\nEOF\n`;
  assert.deepEqual(applied(other, ['sub/f.txt']).files.map((file) => file.path), ['sub/f.txt']);
  assert.equal(refused(other, ['sub/f.txt', 'pkg/sub/f.txt']).code, 'unsupported_command');
});

test('"I\'ll cd into sub" is a sentence: the envelope applies at the root, as its paths say; nothing is asked', () => {
  const result = parsePatch({ patch: `I'll cd into sub and update f.txt.\n${ENVELOPE}\n`, probe: true });
  assert.ok(result.ok);
  assert.equal(result.value.dialect, 'codex');
  assert.deepEqual(result.value.files.map((file) => file.path), ['f.txt']);
  assert.equal(result.value.pathProbe, undefined);
});

test('an apostrophe ending a word is not a quote opening a cd: "the users\' cd command" names no directory', () => {
  for (const prose of ["Fix the users' cd command:", "Update the shell's cd builtin.", 'Quote it as in "she said" cd later.']) {
    const result = parsePatch({ patch: `${prose}\n${ADD_ONLY}\n`, probe: true });
    assert.ok(result.ok, prose);
    assert.equal(result.value.mentionedDirectory, undefined, prose);
    assert.equal(result.value.pathProbe, undefined, prose);
  }
});

test('text after the patch is not read for a cd', () => {
  const result = parsePatch({ patch: `${DIFF}\n\nThen run \`cd build && make\`.\n` });
  assert.ok(result.ok && result.value.mentionedDirectory === undefined);
});
