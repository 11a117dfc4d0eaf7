import assert from 'node:assert/strict';
import test from 'node:test';
import { detectTextDialect } from '../../daemon/engine/detect.ts';
import type { EngineError } from '../../daemon/engine/errors.ts';
import { parsePatch } from '../../daemon/engine/parse.ts';
import type { FormatName, ParsedPatch } from '../../daemon/engine/types.ts';

const ENVELOPE = ['*** Begin Patch', '*** Update File: a.txt', '@@', '-x', '+y', '*** End Patch'];

function command(first: string, body: readonly string[] = ENVELOPE, last = 'EOF'): string {
  return `${[first, ...body, last].join('\n')}\n`;
}

function parsed(text: string, format: FormatName = 'shell'): ParsedPatch {
  const result = parsePatch({ patch: text, format });
  if (!result.ok) assert.fail(`unexpected ${result.error.code}: ${result.error.message}`);
  return result.value;
}

function rejected(text: string, format: FormatName = 'shell'): EngineError {
  const result = parsePatch({ patch: text, format });
  if (result.ok) assert.fail('expected the command to be rejected');
  return result.error;
}

const paths = (patch: ParsedPatch) => patch.files.map((file) => (file.op === 'rename' ? `${file.fromPath} -> ${file.path}` : file.path));

test('apply_patch <<\'EOF\' … EOF: the envelope is parsed; dialect shell, with a diagnostic', () => {
  const result = parsed(command("apply_patch <<'EOF'"));
  assert.equal(result.dialect, 'shell');
  assert.deepEqual(paths(result), ['a.txt']);
  assert.equal(result.files[0]!.op, 'update');
  assert.deepEqual(result.diagnostics.map((diagnostic) => diagnostic.code), ['shell_command']);
});

test('cd <dir> && apply_patch: paths relative to the directory', () => {
  const body = ['*** Begin Patch', '*** Add File: n.txt', '+n', '*** Update File: a.txt', '*** Move to: b/c.txt', '@@', '-x', '+y', '*** End Patch'];
  assert.deepEqual(paths(parsed(command("cd sub/dir && apply_patch <<'EOF'", body))), ['sub/dir/n.txt', 'sub/dir/a.txt -> sub/dir/b/c.txt']);
  assert.deepEqual(paths(parsed(command("cd 'my dir' && apply_patch <<'EOF'"))), ['my dir/a.txt']);
  assert.deepEqual(paths(parsed(command('cd "./sub/" && apply_patch <<EOF'))), ['sub/a.txt']);
  assert.deepEqual(paths(parsed(command("cd sub/.. && apply_patch <<'EOF'"))), ['a.txt']);
});

test('heredoc spellings: quotes, other delimiters, <<-, the applypatch alias, CRLF', () => {
  for (const first of ['apply_patch <<"EOF"', 'apply_patch <<EOF', 'apply_patch<<EOF', 'apply_patch <<-EOF', 'applypatch <<\'EOF\'', '  cd sub &&apply_patch << \'EOF\'  ']) {
    assert.equal(parsed(command(first)).files.length, 1, first);
  }
  assert.equal(parsed(command("apply_patch <<'PATCH'", ENVELOPE, 'PATCH')).files.length, 1);
  assert.equal(parsed(command("cd sub && apply_patch <<'EOF'").replaceAll('\n', '\r\n')).files[0]!.path, 'sub/a.txt');
  assert.equal(parsed(`\n${command("apply_patch <<'EOF'")}\n\n`).files.length, 1, 'blank lines around');
});

test('a unified diff body is parsed as one', () => {
  const result = parsed(command("cd pkg && apply_patch <<'EOF'", ['--- a/a.txt', '+++ b/a.txt', '@@ -1 +1 @@', '-x', '+y']));
  assert.deepEqual(paths(result), ['pkg/a.txt']);
  assert.equal(result.dialect, 'shell');
});

test('a cd that leaves the workspace, or an absolute one, is path_escape', () => {
  for (const directory of ['../..', '..', '/abs/path', '~', '~/x', 'a/../..']) {
    assert.equal(rejected(command(`cd ${directory} && apply_patch <<'EOF'`)).code, 'path_escape', directory);
  }
});

test('anything but the one form is unsupported_command', () => {
  const cases = [
    "git status && apply_patch <<'EOF'",
    "cd a && cd b && apply_patch <<'EOF'",
    "cd a && apply_patch <<'EOF' && git commit",
    "apply_patch <<'EOF' | tee out.txt",
    "apply_patch <<'EOF' > out.txt",
    "cd a; apply_patch <<'EOF'",
    "cd $HOME && apply_patch <<'EOF'",
    "cd `pwd` && apply_patch <<'EOF'",
    "bash -lc \"apply_patch <<'EOF'",
    'rm -rf /',
    '*** Begin Patch',
  ];
  for (const first of cases) assert.equal(rejected(command(first)).code, 'unsupported_command', first);
  assert.equal(rejected(`${command("apply_patch <<'EOF'")}echo done\n`).code, 'unsupported_command', 'a command after the heredoc');
});

test('an unclosed heredoc or a body that is no patch is parse_error', () => {
  assert.equal(rejected(command("apply_patch <<'EOF'", ENVELOPE, '')).code, 'parse_error');
  assert.equal(rejected(command("apply_patch <<'EOF'", ENVELOPE, 'END')).code, 'parse_error');
  assert.equal(rejected(command("apply_patch <<'EOF'", ['a.txt', '<<<<<<< SEARCH', 'x', '=======', 'y', '>>>>>>> REPLACE'])).code, 'parse_error');
  assert.equal(rejected('').code, 'parse_error');
});

test('auto picks shell only for a cd prefix; a bare apply_patch heredoc stays codex (its envelope leniency)', () => {
  assert.equal(parsed(command("cd sub && apply_patch <<'EOF'"), 'auto').dialect, 'shell');
  assert.equal(parsed(command("apply_patch <<'EOF'"), 'auto').dialect, 'codex');
  assert.equal(parsed(command("<<'EOF'"), 'auto').dialect, 'codex');
});

test('an explicit codex or unified format still honours a cd prefix rather than skip it as prose', () => {
  assert.deepEqual(paths(parsed(command("cd sub && apply_patch <<'EOF'"), 'codex')), ['sub/a.txt']);
  assert.deepEqual(paths(parsed(command("cd sub && apply_patch <<'EOF'", ['--- a/a.txt', '+++ b/a.txt', '@@ -1 +1 @@', '-x', '+y']), 'unified')), ['sub/a.txt']);
});

test('auto detection: the first marker decides; a lone --- line is prose', () => {
  const detect = (text: string) => detectTextDialect(text.split('\n'));
  assert.equal(detect('*** Begin Patch\n*** Add File: a\n+a\n*** End Patch'), 'codex');
  assert.equal(detect('a.txt\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE'), 'search-replace');
  assert.equal(detect('--- not a header\nx.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE'), 'search-replace');
  assert.equal(detect('prose\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b'), 'unified');
  assert.equal(detect('diff --git a/x b/x'), 'unified');
  assert.equal(detect('cd sub && apply_patch <<EOF'), 'shell');
  assert.equal(detect('just words'), 'unified');
});
