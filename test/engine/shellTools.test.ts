/** `git apply` and `patch` heredocs: read as the tool reads them, in the directory it runs in, or refused. */
import assert from 'node:assert/strict';
import test from 'node:test';
import type { EngineError } from '../../daemon/engine/errors.ts';
import { parsePatch, requiredPaths } from '../../daemon/engine/parse.ts';
import { planPatch } from '../../daemon/engine/plan.ts';
import type { FileSnapshot, FormatName, ParsedPatch } from '../../daemon/engine/types.ts';

const hunk = ['@@ -1,3 +1,3 @@', ' a', '-b', '+B', ' c'];
const diff = (old: string, next = old.replace(/^a\//, 'b/')) => [`--- ${old}`, `+++ ${next}`, ...hunk];
const PREFIXED = diff('a/f.txt');
const GIT = ['diff --git a/f.txt b/f.txt', ...PREFIXED];

function heredoc(first: string, body: readonly string[] = PREFIXED): string {
  return `${[first, ...body, 'EOF'].join('\n')}\n`;
}

function parsed(text: string, format: FormatName = 'auto', strip?: number): ParsedPatch {
  const result = parsePatch({ patch: text, format, strip });
  if (!result.ok) assert.fail(`unexpected ${result.error.code}: ${result.error.message}`);
  return result.value;
}

function rejected(text: string, format: FormatName = 'auto', strip?: number): EngineError {
  const result = parsePatch({ patch: text, format, strip });
  if (result.ok) assert.fail(`expected a refusal, got ${result.value.files.map((file) => file.path).join(', ')}`);
  return result.error;
}

const paths = (text: string, format?: FormatName) => parsed(text, format).files.map((file) => file.path);

test('git -C, patch -d and their long forms run the command in the directory: paths under it, whatever the format, after prose or in a fence', () => {
  const cases: [string, string][] = [
    ["git -C sub apply <<'EOF'", 'sub/f.txt'],
    ["git -C a -C b apply <<'EOF'", 'a/b/f.txt'],
    ["cd a && git -C b apply -v - <<'EOF'", 'a/b/f.txt'],
    ["cd sub && git apply <<EOF", 'sub/f.txt'],
    ["patch -d sub -p1 <<'EOF'", 'sub/f.txt'],
    ["patch -dsub -p1 <<'EOF'", 'sub/f.txt'],
    ["patch -p1 --directory=sub <<'EOF'", 'sub/f.txt'],
    ["patch --directory 'my dir' --strip=1 -u <<'EOF'", 'my dir/f.txt'],
    ["cd a && patch -d b -p 1 -s <<-EOF", 'a/b/f.txt'],
    ["cd sub && patch -p1 <<\"EOF\"", 'sub/f.txt'],
  ];
  for (const [first, path] of cases) {
    for (const format of ['auto', 'unified', 'codex', 'shell'] as const) {
      assert.deepEqual(paths(heredoc(first), format), [path], `${format}: ${first}`);
      assert.deepEqual(paths(`I'll apply it there:\n\n\`\`\`bash\n${heredoc(first)}\`\`\`\nDone.\n`, format), [path], `${format}, fenced: ${first}`);
    }
    const result = parsed(heredoc(first));
    assert.equal(result.dialect, 'shell');
    assert.equal(result.workingDirectory, path.slice(0, path.lastIndexOf('/')), first);
  }
});

test('the directory a command runs in must exist: the plan is not_found naming it, as for cd', () => {
  for (const first of ["git -C nope apply <<'EOF'", "patch -d nope -p1 <<'EOF'"]) {
    const patch = parsed(heredoc(first, ['--- /dev/null', '+++ b/x.txt', '@@ -0,0 +1 @@', '+x']));
    assert.deepEqual(requiredPaths(patch), ['nope', 'nope/x.txt']);
    const plan = planPatch(patch, new Map<string, FileSnapshot>([['nope/x.txt', { kind: 'missing' }]]));
    assert.equal(!plan.ok && plan.error.code, 'not_found', first);
    assert.equal(!plan.ok && plan.error.path, 'nope');
  }
});

test('git apply --directory puts a directory before each stripped path, diff --git ones too; it need not exist yet', () => {
  const result = parsed(heredoc("git apply --directory=pkg/lib <<'EOF'", GIT));
  assert.deepEqual(result.files.map((file) => file.path), ['pkg/lib/f.txt']);
  assert.equal(result.workingDirectory, undefined);
  assert.deepEqual(paths(heredoc("git -C sub apply --directory x <<'EOF'")), ['sub/x/f.txt']);
});

test('a directory that leaves the workspace, or is absolute or ~, is path_escape', () => {
  for (const first of ["git -C .. apply <<'EOF'", "git -C /tmp apply <<'EOF'", "git -C a -C ../.. apply <<'EOF'", "patch -d ../x -p1 <<'EOF'", "patch --directory=~ -p1 <<'EOF'", "git apply --directory=../out <<'EOF'", "cd a && patch -d ../.. -p1 <<'EOF'"]) {
    assert.equal(rejected(heredoc(first)).code, 'path_escape', first);
    assert.equal(rejected(`Run:\n${heredoc(first)}`, 'unified').code, 'path_escape', first);
  }
});

test('patch strips exactly what -p says', () => {
  assert.deepEqual(paths(heredoc("patch -p0 <<'EOF'", diff('f.txt'))), ['f.txt']);
  assert.deepEqual(paths(heredoc("patch -p0 <<'EOF'", diff('src/f.txt'))), ['src/f.txt']);
  assert.deepEqual(paths(heredoc("patch -p2 <<'EOF'", diff('a/src/f.txt'))), ['f.txt']);
  assert.deepEqual(paths(heredoc("patch -d sub -p2 <<'EOF'", diff('a/src/f.txt'))), ['sub/f.txt']);
  // -p0 keeps a/ and b/: two different files, which GNU patch would look up; never f.txt.
  assert.equal(rejected(heredoc("patch -p0 <<'EOF'")).code, 'rename_path_mismatch');
  assert.equal(rejected(heredoc("patch -p3 <<'EOF'", diff('a/src/f.txt'))).code, 'parse_error', 'nothing left of the path');
});

test('git apply strips -p<n>, or without it one directory (none of a name without one), as git does', () => {
  assert.deepEqual(paths(heredoc("git apply <<'EOF'")), ['f.txt']);
  assert.deepEqual(paths(heredoc("git apply <<'EOF'", GIT)), ['f.txt']);
  assert.deepEqual(paths(heredoc("git apply <<'EOF'", diff('f.txt'))), ['f.txt']);
  assert.deepEqual(paths(heredoc("git apply -p0 <<'EOF'", diff('src/f.txt'))), ['src/f.txt']);
  assert.deepEqual(paths(heredoc("git apply -p1 <<'EOF'", diff('src/f.txt'))), ['f.txt']);
  assert.deepEqual(paths(heredoc("git apply -p2 <<'EOF'", diff('a/src/f.txt'))), ['f.txt']);
});

test('git apply without -p on names git would strip differently from how they read is refused, never guessed', () => {
  const error = rejected(heredoc("git apply <<'EOF'", diff('src/f.txt')));
  assert.equal(error.code, 'unsupported_command');
  assert.match(error.message, /reads f\.txt where the diff names src\/f\.txt/);
});

test('git apply run in a directory: diff --git paths, or names starting with the directory without -p, depend on a repository: refused', () => {
  for (const text of [
    heredoc("git -C sub apply <<'EOF'", GIT),
    heredoc("cd sub && git apply -p1 <<'EOF'", GIT),
    `Here:\n${heredoc("git -C sub apply <<'EOF'", GIT)}`,
    heredoc("git -C sub apply <<'EOF'", diff('a/sub/f.txt')),
    heredoc("cd pkg/sub && git apply <<'EOF'", diff('pkg/sub/f.txt')),
  ]) {
    const error = rejected(text);
    assert.equal(error.code, 'unsupported_command', text);
    assert.match(error.message, /repository/);
  }
  assert.deepEqual(paths(heredoc("git -C sub apply -p1 <<'EOF'", diff('a/sub/f.txt'))), ['sub/sub/f.txt'], 'with -p, outside and inside a repository agree');
});

test('options and operands patchd does not read are unsupported_command, never applied at the root', () => {
  for (const first of [
    "patch <<'EOF'", "patch -p1 -R <<'EOF'", "patch -p1 --dry-run <<'EOF'", "patch -p1 f.txt <<'EOF'", "patch -p1 -d a -d b <<'EOF'",
    "git apply --check <<'EOF'", "git apply -R <<'EOF'", "git apply --cached <<'EOF'", "git apply --3way <<'EOF'", "git apply --stat <<'EOF'",
    "git -c core.x=y apply <<'EOF'", "git am <<'EOF'", "git -C <<'EOF'", "git apply patch.diff <<'EOF'", "apply_patch -p1 <<'EOF'",
    "cd a && cd b && git apply <<'EOF'", "git -C $HOME apply <<'EOF'", "patch -p1 < fix.diff <<'EOF'",
  ]) {
    for (const text of [heredoc(first), `Now:\n${heredoc(first)}`]) {
      for (const format of ['auto', 'unified'] as const) assert.equal(rejected(text, format).code, 'unsupported_command', `${format}: ${text}`);
    }
  }
  assert.match(rejected(heredoc("patch <<'EOF'")).message, /base name/);
});

test('git apply and patch read a unified diff: an envelope in their heredoc is a parse_error', () => {
  const envelope = ['*** Begin Patch', '*** Update File: f.txt', '@@', '-b', '+B', '*** End Patch'];
  for (const first of ["git apply <<'EOF'", "patch -p1 <<'EOF'"]) {
    const error = rejected(heredoc(first, envelope));
    assert.equal(error.code, 'parse_error');
    assert.match(error.message, /envelope/);
  }
});

test("the request's strip stands in for a missing -p and must agree with a given one", () => {
  assert.deepEqual(parsed(heredoc("git apply <<'EOF'", diff('src/f.txt')), 'auto', 0).files.map((file) => file.path), ['src/f.txt']);
  assert.deepEqual(parsed(heredoc("patch -p1 <<'EOF'"), 'auto', 1).files.map((file) => file.path), ['f.txt']);
  assert.equal(rejected(heredoc("patch -p1 <<'EOF'"), 'auto', 0).code, 'parse_error');
  assert.deepEqual(parsed(heredoc("apply_patch <<'EOF'", diff('a/src/f.txt')), 'shell', 2).files.map((file) => file.path), ['f.txt']);
});

test('the diagnostic names the tool and where it ran', () => {
  const [note] = parsed(heredoc("git -C sub apply <<'EOF'")).diagnostics;
  assert.equal(note!.code, 'shell_command');
  assert.match(note!.message, /a git apply heredoc run in sub/);
});
