import assert from 'node:assert/strict';
import test from 'node:test';
import { detectTextDialect } from '../../daemon/engine/detect.ts';
import type { EngineError } from '../../daemon/engine/errors.ts';
import { parsePatch, requiredPaths } from '../../daemon/engine/parse.ts';
import { planPatch } from '../../daemon/engine/plan.ts';
import { hunksOf, type FileSnapshot, type FormatName, type ParsedPatch } from '../../daemon/engine/types.ts';

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

// A shell command anywhere before the patch: parsed as one, or refused — never its paths taken from the root.

const UPDATE_F = ['*** Begin Patch', '*** Update File: f.txt', '@@', ' a', '-b', '+B', ' c', '*** End Patch'];
const DIFF_F = ['--- a/f.txt', '+++ b/f.txt', '@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c'];

test('after prose, or inside a fence after prose, cd <dir> && apply_patch is the shell dialect: paths under <dir>, the text reported', () => {
  const afterProse = parsed(`I'll run:\n\n${command("cd sub && apply_patch <<'EOF'", UPDATE_F)}`, 'auto');
  assert.equal(afterProse.dialect, 'shell');
  assert.deepEqual(paths(afterProse), ['sub/f.txt']);
  assert.deepEqual(afterProse.diagnostics.map((diagnostic) => diagnostic.code), ['shell_command', 'text_around_patch']);
  assert.match(afterProse.diagnostics[1]!.message, /1 line\(s\) before it, 0 after it/);
  const fenced = parsed(`Here it is:\n\`\`\`bash\n${command("cd sub && apply_patch <<'EOF'", UPDATE_F)}\`\`\`\n\nThat updates f.txt.\n`, 'auto');
  assert.deepEqual(paths(fenced), ['sub/f.txt']);
  assert.match(fenced.diagnostics[1]!.message, /2 line\(s\) before it, 2 after it/);
  assert.equal(parsed(`\`\`\`sh\n${command("cd sub && apply_patch <<'EOF'", UPDATE_F)}\`\`\`\n`, 'auto').files[0]!.path, 'sub/f.txt');
});

test('a cd <dir> && apply_patch after prose is honoured whatever the format says', () => {
  for (const format of ['codex', 'unified', 'search-replace', 'shell'] as const) {
    assert.deepEqual(paths(parsed(`Running:\n${command("cd sub && apply_patch <<'EOF'", UPDATE_F)}`, format)), ['sub/f.txt'], format);
  }
});

test('bash -lc "…", cd …; apply_patch, and other wrappings are unsupported_command wherever they stand, never applied at the root', () => {
  const wrapped = [
    `bash -lc "cd sub && apply_patch <<'EOF'\n${UPDATE_F.join('\n')}\nEOF\n"\n`,
    `I'll run:\n\`\`\`bash\nbash -lc "cd sub && apply_patch <<'EOF'\n${UPDATE_F.join('\n')}\nEOF\n"\n\`\`\`\n`,
    `bash -lc 'apply_patch <<EOF\n${UPDATE_F.join('\n')}\nEOF\n'\n`,
    command("cd sub; apply_patch <<'EOF'", UPDATE_F),
    `Patch:\n${command("cd sub; apply_patch <<'EOF'", UPDATE_F)}`,
    `\`\`\`bash\n${command("cd sub; apply_patch <<'EOF'", UPDATE_F)}\`\`\`\n`,
    `Patch:\n${command("(cd sub && apply_patch <<'EOF'", UPDATE_F)}`,
    `Patch:\n${command("$ cd sub && apply_patch <<'EOF'", UPDATE_F)}`,
    `Patch:\n${command("cd sub && git apply <<'EOF' | cat", DIFF_F)}`,
  ];
  for (const text of wrapped) {
    for (const format of ['auto', 'codex', 'unified'] as const) assert.equal(rejected(text, format).code, 'unsupported_command', `${format}: ${text}`);
  }
});

test('a cd a shell would run, before the patch, is refused: the paths may be relative to it', () => {
  const cases = [
    `cd sub\n${command("apply_patch <<'EOF'", UPDATE_F)}`,
    `\`\`\`bash\ncd sub\napply_patch <<'EOF'\n${UPDATE_F.join('\n')}\nEOF\n\`\`\`\n`,
    `cd sub\n${UPDATE_F.join('\n')}\n`,
    `$ cd sub\n${UPDATE_F.join('\n')}\n`,
    `Then: $ cd sub\n${UPDATE_F.join('\n')}\n`,
    `pushd sub\n${UPDATE_F.join('\n')}\n`,
    `make && cd sub\n${UPDATE_F.join('\n')}\n`,
    `(cd sub\n${UPDATE_F.join('\n')}\n`,
    `bash -lc "cd sub"\n${UPDATE_F.join('\n')}\n`,
    `sh -c 'cd sub && make'\n${DIFF_F.join('\n')}\n`,
    `eval "cd sub"\nf.txt\n<<<<<<< SEARCH\nb\n=======\nB\n>>>>>>> REPLACE\n`,
  ];
  for (const text of cases) {
    for (const format of ['auto', 'codex', 'unified', 'search-replace'] as const) assert.equal(rejected(text, format).code, 'unsupported_command', `${format}: ${text}`);
  }
});

test('look-alikes that keep their meaning: the bare wrapper (after prose too), cd first, cd in a path, a word, a file or after the patch', () => {
  const bare = parsed(`Here:\n\n${command("apply_patch <<'EOF'", UPDATE_F)}`, 'auto');
  assert.equal(bare.dialect, 'codex');
  assert.deepEqual(paths(bare), ['f.txt']);
  assert.deepEqual(paths(parsed(command("cd sub && apply_patch <<'EOF'", UPDATE_F), 'auto')), ['sub/f.txt']);
  const notCd = ['*** Begin Patch', '*** Update File: src/cd/x.txt', '@@', '-cd old', '+cd new', ' cd sub && make', '*** End Patch'];
  assert.deepEqual(paths(parsed(`Fix the abcd cd-rom helper:\n${notCd.join('\n')}\n`, 'auto')), ['src/cd/x.txt']);
  // The word in a sentence is prose (a commit message may say it); only a cd where a shell would run it counts.
  assert.deepEqual(paths(parsed(`commit 0123abc\n\n    Fix the cd builtin\n\n${UPDATE_F.join('\n')}\n`, 'auto')), ['f.txt']);
  const after = parsed(`${UPDATE_F.join('\n')}\n\nThen run: cd sub && npm test\n`, 'auto');
  assert.equal(after.dialect, 'codex');
  assert.deepEqual(paths(after), ['f.txt']);
  const diffOfCd = parsed('--- cd\n+++ cd\n@@ -1 +1 @@\n-a\n+b\n', 'auto');
  assert.equal(diffOfCd.dialect, 'unified');
  assert.deepEqual(paths(diffOfCd), ['cd']);
});

test('after a fenced command: prose is fine; a second command or another patch is refused, not dropped', () => {
  const fenced = `\`\`\`bash\n${command("cd sub && apply_patch <<'EOF'", UPDATE_F)}\`\`\`\n`;
  assert.equal(rejected(`${fenced}\nAnd:\n${fenced}`, 'auto').code, 'unsupported_command');
  assert.equal(rejected(`${fenced}\nAnd:\n${UPDATE_F.join('\n')}\n`, 'auto').code, 'parse_error');
  assert.equal(rejected(`${fenced}\n--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-x\n+y\n`, 'auto').code, 'parse_error');
  assert.equal(rejected(`\`\`\`bash\n${command("cd sub && apply_patch <<'EOF'", UPDATE_F)}echo done\n\`\`\`\n`, 'auto').code, 'unsupported_command', 'a command before the closing fence');
  assert.equal(rejected(`Run:\n${command("cd sub && apply_patch <<'EOF'", UPDATE_F)}That's all.\n`, 'auto').code, 'unsupported_command', 'no fence: what follows the heredoc would run');
});

test('the heredoc ends only at a line that is exactly the delimiter, as in bash: " EOF" is a context line', () => {
  const body = ['*** Begin Patch', '*** Update File: notes.txt', '@@', ' EOF', '-x', '+y', '*** End Patch'];
  const [hunk] = hunksOf(parsed(command("cd sub && apply_patch <<'EOF'", body)).files[0]!);
  assert.deepEqual(hunk!.lines.map((line) => `${line.kind}:${line.text}`), ['context:EOF', 'remove:x', 'add:y']);
  assert.equal(rejected(command("cd sub && apply_patch <<'EOF'", ENVELOPE, ' EOF')).code, 'parse_error', 'an indented delimiter closes nothing');
  assert.equal(rejected(command("cd sub && apply_patch <<'EOF'", ENVELOPE, 'EOF ')).code, 'parse_error', 'nor one with trailing blanks');
  assert.equal(parsed(command("cd sub && apply_patch <<-'EOF'", ENVELOPE, '\t\tEOF')).files.length, 1, '<<- strips leading tabs');
  assert.equal(rejected(command("cd sub && apply_patch <<-'EOF'", ENVELOPE, '  EOF')).code, 'parse_error', '<<- strips tabs only');
  const crlfEnd = `${["cd sub && apply_patch <<'EOF'", ...ENVELOPE].join('\n')}\nEOF\r\n`;
  assert.equal(parsed(crlfEnd).files.length, 1, 'a CR after the delimiter is a line ending');
});

test('<<- strips the leading tabs of every body line, as bash does: only tabs, only at the start, so a line\'s own tab after +, - or space stays', () => {
  const indented = ['*** Begin Patch', '\t*** Update File: a.txt', '\t\t@@', '\t-\tx', '\t+\ty', ' \tz', '\t*** End Patch'].map((line) => `\t${line}`);
  const [hunk] = hunksOf(parsed(command("cd sub && apply_patch <<-'EOF'", indented, '\tEOF')).files[0]!);
  assert.deepEqual(hunk!.lines.map((line) => `${line.kind}:${line.text}`), ['remove:\tx', 'add:\ty', 'context:\tz']);
  const diff = ['--- a/a.txt', '+++ b/a.txt', '@@ -1 +1 @@', '-\tx', '+\ty'].map((line) => `\t${line}`);
  assert.deepEqual(paths(parsed(command("git apply <<-'EOF'", diff))), ['a.txt']);
  assert.equal(rejected(command("git apply <<'EOF'", diff)).code, 'parse_error', 'without the dash the tabs are the text');
});

test('an unquoted delimiter: the body is taken as written, and a note names the first line a shell would have expanded', () => {
  const body = ['*** Begin Patch', '*** Update File: a.txt', '@@', '-costs $ 5, \\n and $', '+echo "$HOME"', '+`date`', '*** End Patch'];
  const noted = (first: string) => parsed(command(first, body)).diagnostics.find((diagnostic) => diagnostic.code === 'heredoc_not_expanded');
  for (const first of ['cd sub && apply_patch <<EOF', 'cd sub && apply_patch <<-EOF']) {
    const note = noted(first);
    assert.match(note?.message ?? '', /delimiter EOF is unquoted.*first on line 6 \("\+echo \\"\$HOME\\""\); patchd took the text as written/, first);
  }
  assert.equal(hunksOf(parsed(command('cd sub && apply_patch <<EOF', body)).files[0]!)[0]!.lines[1]!.text, 'echo "$HOME"');
  for (const first of ["cd sub && apply_patch <<'EOF'", 'cd sub && apply_patch <<"EOF"', "cd sub && apply_patch <<-'EOF'"]) assert.equal(noted(first), undefined, first);
  const plain = ['*** Begin Patch', '*** Update File: a.txt', '@@', '-costs $ 5', '+a \\n b, $. and \\"', '*** End Patch'];
  assert.equal(parsed(command('cd sub && apply_patch <<EOF', plain)).diagnostics.some((diagnostic) => diagnostic.code === 'heredoc_not_expanded'), false, 'a $ or backslash bash keeps');
  const wrapper = parsed(command('apply_patch <<EOF', body), 'auto');
  assert.equal(wrapper.dialect, 'codex');
  assert.deepEqual(wrapper.diagnostics.map((diagnostic) => diagnostic.code), ['heredoc_not_expanded'], 'the bare wrapper too');
  assert.deepEqual(parsed(command("apply_patch <<'EOF'", body), 'auto').diagnostics, []);
});

test('cd <dir> makes the plan require <dir>: a missing directory (or a file) is not_found naming it, even for an Add', () => {
  const add = ['*** Begin Patch', '*** Add File: x.txt', '+x', '*** End Patch'];
  const patch = parsed(command("cd nope && apply_patch <<'EOF'", add));
  assert.equal(patch.workingDirectory, 'nope');
  assert.deepEqual(requiredPaths(patch), ['nope', 'nope/x.txt']);
  const missing = planPatch(patch, new Map([['nope/x.txt', { kind: 'missing' }]]));
  assert.equal(missing.ok, false);
  if (!missing.ok) {
    assert.equal(missing.error.code, 'not_found');
    assert.equal(missing.error.path, 'nope');
    assert.match(missing.error.message, /cd nope: nope does not exist/);
  }
  const file = planPatch(patch, new Map<string, FileSnapshot>([['nope', { kind: 'file', bytes: new Uint8Array() }], ['nope/x.txt', { kind: 'missing' }]]));
  assert.equal(!file.ok && file.error.code, 'not_found');
  const present = planPatch(patch, new Map<string, FileSnapshot>([['nope', { kind: 'directory' }], ['nope/x.txt', { kind: 'missing' }]]));
  assert.equal(present.ok, true);
  assert.equal(parsed(command("cd sub/.. && apply_patch <<'EOF'")).workingDirectory, undefined, 'the root needs no check');
  assert.equal(parsed(command("cd './a//b/' && apply_patch <<'EOF'")).workingDirectory, 'a/b');
  assert.equal(parsed(command("apply_patch <<'EOF'")).workingDirectory, undefined);
});
