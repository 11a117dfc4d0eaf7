/** The `patchd` command line: bin/patchd.js run as a child, as a user would (pipes; see cliTerminal.test.ts for a TTY). */
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ReceiptSchema } from '../../protocol/index.ts';
import { patchd, REPO_ROOT } from '../helpers/cli.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const PATCH = '--- a/greet.txt\n+++ b/greet.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n';
const V4A = JSON.stringify([{ type: 'update_file', path: 'greet.txt', diff: ' hello\n-world\n+there\n' }]);
const EDITS = JSON.stringify({ edits: [{ path: 'greet.txt', oldText: 'world', newText: 'there' }] });

/** A workspace holding greet.txt, and patch files beside it (outside the workspace). */
function greetTree(greet = 'hello\nworld\n') {
  const tree = createTempTree({ 'greet.txt': greet });
  const file = (name: string, content: string) => {
    writeFileSync(join(tree.base, name), content);
    return join(tree.base, name);
  };
  return { tree, file };
}

/** A usage mistake: exit 2, one plain sentence naming the command, then one usage line; nothing on stdout. */
function assertUsageError(run: { code: number | null; stdout: string; stderr: string }, sentence: RegExp): void {
  assert.equal(run.code, 2, run.stderr);
  assert.equal(run.stdout, '');
  const lines = run.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 2, run.stderr);
  assert.match(lines[0]!, /^patchd( \w+)?: /);
  assert.match(lines[0]!, sentence);
  assert.match(lines[1]!, /^usage: patchd /);
  assert.doesNotMatch(run.stderr, /ENOENT|EISDIR|EACCES|ERR_|Unknown option|TypeError|at .*\.ts:/);
}

describe('patchd: help and version', () => {
  test('--version prints the package version; --help lists the commands and the environment', () => {
    const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.deepEqual(patchd(['--version']), { code: 0, stdout: `patchd ${version}\n`, stderr: '' });
    const help = patchd(['--help']);
    assert.equal(help.code, 0);
    for (const word of ['apply', 'serve', 'PATCHD_STATE_DIR', 'PATCHD_TASK_TIMEOUT_MS', 'PATCHD_LOG_LEVEL', 'NO_COLOR']) assert.ok(help.stdout.includes(word), word);
  });

  test('every subcommand has --help (exit 0, its options and the environment on stdout)', () => {
    const history = ['-C, --directory DIR', '--json', '--state-dir', '-h, --help'];
    const commands = [
      ['apply', '--help', ['-C, -d, --directory', '-s, --quiet, --silent', '--input', '--strip', '--reverse', '--check', '--stat', '--batch', '--socket', '--state-dir']],
      ['serve', '-h', ['--socket', '--task-timeout-ms', '--state-dir']],
      ['mcp', '--help', ['--task-timeout-ms', '--state-dir']],
      ['log', '--help', ['-n, --limit N', ...history]],
      ['undo', '-h', ['--dry-run', ...history]],
      ['diff', '--help', ['--since TRANSACTION_ID', ...history]],
    ] as const;
    for (const [command, help, flags] of commands) {
      const run = patchd([command, help]);
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`^usage: patchd ${command}`));
      for (const flag of [...flags, 'PATCHD_STATE_DIR', 'PATCHD_LOG_LEVEL']) assert.ok(run.stdout.includes(flag), `${command} ${flag}`);
    }
  });
});

describe('patchd apply: one input reader', () => {
  test('V4A operations and edits in JSON files apply as single patches (the batch reads them the same way, below)', () => {
    for (const [name, content, format] of [['v4a.json', V4A, 'v4a'], ['edits.txt', EDITS, 'edits']] as const) {
      const { tree, file } = greetTree();
      using _tree = tree;
      const run = patchd(['apply', '--json', file(name, content), '-C', tree.root]);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.equal(ReceiptSchema.parse(JSON.parse(run.stdout)).format, format);
      assert.equal(tree.text('greet.txt'), 'hello\nthere\n');
    }
  });

  test('str_replace edits: new lines at the file\'s indentation, uneven indentation refused, the final newline as newText ends, no claim of an unmade change', () => {
    const { tree, file } = greetTree('def main():\n    if x:\n        y()\n    return 0');
    using _tree = tree;
    const edits = (oldText: string, newText: string) => file('edits.json', JSON.stringify({ edits: [{ path: 'greet.txt', oldText, newText }] }));
    const shifted = patchd(['apply', edits('if x:\n    y()\n', 'if x:\n    z()\n'), '-C', tree.root]);
    assert.equal(shifted.code, 0, shifted.stdout + shifted.stderr);
    assert.match(shifted.stdout, /\[hunk 1: relative_indent\]/);
    assert.equal(tree.text('greet.txt'), 'def main():\n    if x:\n        z()\n    return 0');
    const uneven = patchd(['apply', '--json', edits('if x:\n  z()\n', 'if x:\n  w()\n'), '-C', tree.root]);
    assert.equal(uneven.code, 1, uneven.stdout);
    assert.match(ReceiptSchema.parse(JSON.parse(uneven.stdout)).error?.message ?? '', /indentation exactly/);
    const added = patchd(['apply', edits('return 0', 'return 0\n'), '-C', tree.root]);
    assert.equal(added.code, 0, added.stdout + added.stderr);
    assert.equal(tree.text('greet.txt'), 'def main():\n    if x:\n        z()\n    return 0\n');
    const unmade = patchd(['apply', '--json', edits('    return 0  \n', '    return 0\n'), '-C', tree.root]);
    assert.equal(unmade.code, 1, unmade.stdout);
    assert.equal(ReceiptSchema.parse(JSON.parse(unmade.stdout)).error?.code, 'already_applied');
    assert.equal(tree.text('greet.txt'), 'def main():\n    if x:\n        z()\n    return 0\n');
  });

  test('JSON on stdin is detected too; --format overrides the detection', () => {
    const { tree } = greetTree();
    using _tree = tree;
    const asText = patchd(['apply', '--json', '--dry-run', '--format', 'unified', '-C', tree.root], { input: V4A });
    assert.equal(asText.code, 1);
    assert.equal(ReceiptSchema.parse(JSON.parse(asText.stdout)).error?.code, 'parse_error');
    const detected = patchd(['apply', '-C', tree.root], { input: V4A });
    assert.equal(detected.code, 0, detected.stdout);
    assert.match(detected.stdout, /^applied 1 file \(v4a, /);
  });

  test('a file that holds no patch is a rejection with the reason (exit 1), single or batch; nothing changes', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    const bad = file('broken.json', '{"edits": [');
    const shape = file('shape.json', '{"patch": 1}');
    const single = patchd(['apply', bad, '-C', tree.root]);
    assert.equal(single.code, 1);
    assert.match(single.stdout, /rejected: nothing was changed/);
    assert.match(single.stdout, /parse_error: .*broken\.json is not valid JSON/);
    const wrongShape = patchd(['apply', '--json', shape, '-C', tree.root]);
    assert.equal(wrongShape.code, 1);
    assert.match(ReceiptSchema.parse(JSON.parse(wrongShape.stdout)).error?.message ?? '', /is not a patch: a JSON patch is an array of V4A operations/);
    assert.equal(tree.text('greet.txt'), 'hello\nworld\n');
  });
});

describe('patchd apply: usage mistakes are one plain sentence, the usage line and exit 2', () => {
  test('files, directories, options, values', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    const patch = file('change.diff', PATCH);
    // The binary's view of each kind of mistake; test/cli/ covers every rule in-process.
    const cases: [string[], RegExp][] = [
      [['apply', join(tree.base, 'missing.diff')], /missing\.diff cannot be read: it does not exist/],
      [['apply', tree.root], /is a directory, not a patch file \(use --batch/],
      [['apply', '--bogus', patch], /unknown option --bogus$/],
      [['apply', patch, '-C'], /-C needs a value \(DIR\)/],
      [['apply', patch, '-C', join(tree.base, 'nowhere')], /nowhere does not exist/],
      [['apply', '--concurrency', '4', patch], /--concurrency only applies to --batch/],
      [['apply', '--batch', join(tree.base, 'missing')], /missing cannot be read: it does not exist/],
      [['apply', '--socket', join(tree.base, 'no.sock'), patch], /no patchd daemon answers at .*no\.sock/],
      [['serve', '--verbose'], /unknown option --verbose/],
      [['frobnicate'], /unknown command "frobnicate"/],
    ];
    for (const [args, sentence] of cases) assertUsageError(patchd(args, { cwd: tree.root }), sentence);
    assert.equal(tree.text('greet.txt'), 'hello\nworld\n');
  });

  test('environment settings are validated the same way by every command', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    const patch = file('change.diff', PATCH);
    const timeout = /PATCHD_TASK_TIMEOUT_MS must be a whole number 1 or more \(got "abc"\)/;
    assertUsageError(patchd(['apply', patch, '-C', tree.root], { env: { PATCHD_TASK_TIMEOUT_MS: 'abc' } }), timeout);
    assertUsageError(patchd(['apply', '--batch', patch, '-C', tree.root], { env: { PATCHD_TASK_TIMEOUT_MS: 'abc' } }), timeout);
    assertUsageError(patchd(['serve'], { env: { PATCHD_TASK_TIMEOUT_MS: 'abc' } }), timeout);
    const level = /PATCHD_LOG_LEVEL must be one of debug, info, warn, error \(got "loud"\)/;
    assertUsageError(patchd(['apply', patch, '-C', tree.root], { env: { PATCHD_LOG_LEVEL: 'loud' } }), level);
    assertUsageError(patchd(['serve'], { env: { PATCHD_LOG_LEVEL: 'loud' } }), level);
    assert.equal(tree.text('greet.txt'), 'hello\nworld\n');
    const debug = patchd(['apply', patch, '-C', tree.root], { env: { PATCHD_LOG_LEVEL: 'debug', PATCHD_TASK_TIMEOUT_MS: '' } });
    assert.equal(debug.code, 0, debug.stderr);
    assert.match(debug.stderr, /"level":"debug"/);
  });
});

describe('patchd apply: git and patch habits', () => {
  test('apply PATCHFILE -C DIR prints a readable receipt (no colour off a terminal); a rejection shows code, hint, nearest text', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    const patch = file('change.diff', PATCH);
    const run = patchd(['apply', patch, '-C', tree.root]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^applied 1 file \(unified, \d+ ms\)\n {2}M greet\.txt {2}\+1 −1\n$/);
    tree.write('greet.txt', 'hello\nplanet\n');
    const again = patchd(['apply', patch, '-C', tree.root]);
    assert.equal(again.code, 1);
    assert.match(again.stdout, /context_not_found \(greet\.txt, hunk 1\)/);
    assert.match(again.stdout, /hint: The context or removed lines are not in the file/);
    assert.match(again.stdout, /nearest text, line 1/);
    assert.doesNotMatch(again.stdout, /\u001b\[/);
  });

  test('hunks out of order, the later one matching before the earlier and again after it: refused (exit 1), both places named, nothing written', () => {
    const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, offset) => `l${from + offset}\n`).join('');
    const { tree, file } = greetTree();
    using _tree = tree;
    tree.write('f.txt', `${lines(1, 9)}dup1\ndup2\ndup3\n${lines(13, 49)}u1\nu2\nu3\n${lines(53, 69)}dup1\ndup2\ndup3\n`);
    const patch = file('misordered.diff', '--- a/f.txt\n+++ b/f.txt\n@@ -50,3 +50,3 @@\n u1\n-u2\n+U2\n u3\n@@ -10,3 +10,3 @@\n dup1\n-dup2\n+DUP2\n dup3\n');
    const before = tree.fingerprint();
    const run = patchd(['apply', patch, '-C', tree.root]);
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.stdout, /^rejected: nothing was changed/);
    assert.match(run.stdout, /ambiguous_context \(f\.txt, hunk 2\): Hunk 2 of f\.txt matches line 10, before hunk 1 \(line 50\), and again at line 70; .*Hunks must be in file order\./);
    assert.equal(tree.fingerprint(), before);
  });

  test('a git diff cut off in its last hunk is rejected (exit 1), nothing written; without its index line it applies as before', () => {
    const ten = Array.from({ length: 10 }, (_, index) => `${index + 1}\n`).join('');
    const { tree, file } = greetTree();
    using _tree = tree;
    tree.write('a.txt', ten);
    // `git diff | head -n 9` of deleting lines 4 to 6: the hunk stops after `-4`.
    const body = '--- a/a.txt\n+++ b/a.txt\n@@ -1,9 +1,6 @@\n 1\n 2\n 3\n-4\n';
    const cut = file('cut.diff', `diff --git a/a.txt b/a.txt\nindex f00c965..c3a2d1c 100644\n${body}`);
    const run = patchd(['apply', cut, '-C', tree.root]);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /rejected: nothing was changed/);
    assert.match(run.stdout, /parse_error \(a\.txt, hunk 1\): The patch looks cut off: hunk 1 of a\.txt \(line 5\) declares 9 old and 6 new lines, but the input ends after 4 and 3\./);
    assert.match(run.stdout, /hint: The patch is malformed\. Resend it whole/);
    const json = patchd(['apply', '--json', cut, '-C', tree.root]);
    assert.equal(json.code, 1);
    const receipt = ReceiptSchema.parse(JSON.parse(json.stdout));
    assert.deepEqual([receipt.status, receipt.error?.code, receipt.error?.path, receipt.error?.hunkIndex], ['rejected', 'parse_error', 'a.txt', 0]);
    assert.equal(tree.text('a.txt'), ten);
    const modelWritten = patchd(['apply', file('model.diff', body), '-C', tree.root]);
    assert.equal(modelWritten.code, 0, modelWritten.stdout + modelWritten.stderr);
    assert.match(modelWritten.stdout, /declares 9 old and 6 new lines but has 4 and 3; the counts were ignored/);
    assert.equal(tree.text('a.txt'), ten.replace('4\n', ''));
  });

  test('a git diff cut off in a later file\'s header is rejected (exit 1), nothing written; the whole one applies', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    // `git diff` of changing greet.txt and adding n.txt, as far as n.txt's index line.
    const first = 'diff --git a/greet.txt b/greet.txt\nindex 94954ab..c4c0417 100644\n--- a/greet.txt\n+++ b/greet.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n';
    const header = 'diff --git a/n.txt b/n.txt\nnew file mode 100644\nindex 0000000..24641c4\n';
    const cut = file('cut.diff', first + header);
    const run = patchd(['apply', cut, '-C', tree.root]);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.match(run.stdout, /rejected: nothing was changed/);
    assert.match(run.stdout, /parse_error \(n\.txt\): The patch looks cut off at the header of n\.txt \(line 9\): its `index` line says the new file has content/);
    const json = patchd(['apply', '--json', file('cut2.diff', `${first}${header}--- /dev/null\n`), '-C', tree.root]);
    assert.equal(json.code, 1);
    const receipt = ReceiptSchema.parse(JSON.parse(json.stdout));
    assert.deepEqual([receipt.status, receipt.error?.code, receipt.error?.path], ['rejected', 'parse_error', 'n.txt']);
    assert.equal(tree.text('greet.txt'), 'hello\nworld\n');
    assert.equal(existsSync(join(tree.root, 'n.txt')), false);
    const whole = patchd(['apply', file('whole.diff', `${first}${header}--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+content\n+here\n`), '-C', tree.root]);
    assert.equal(whole.code, 0, whole.stdout + whole.stderr);
    assert.equal(tree.text('n.txt'), 'content\nhere\n');
  });

  test('-p N strips N leading path components, like patch -pN', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    const patch = file('deep.diff', PATCH.replaceAll('a/greet.txt', 'x/y/greet.txt').replaceAll('b/greet.txt', 'x/y/greet.txt'));
    const unstripped = patchd(['apply', '-p0', patch, '-C', tree.root]);
    assert.equal(unstripped.code, 1);
    assert.match(unstripped.stdout, /not_found \(x\/y\/greet\.txt\)/);
    const run = patchd(['apply', '--strip', '2', patch, '-C', tree.root]);
    assert.equal(run.code, 0, run.stdout);
    assert.equal(tree.text('greet.txt'), 'hello\nthere\n');
  });

  test('-R applies the inverse: apply then -R gives back the original bytes', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    tree.write('old.txt', 'gone\nsoon\n');
    const patch = file('change.diff', `${PATCH}--- a/old.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-gone\n-soon\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+fresh\n`);
    const before = tree.fingerprint();
    assert.equal(patchd(['apply', patch, '-C', tree.root]).code, 0);
    assert.equal(tree.text('new.txt'), 'fresh\n');
    const reverse = patchd(['apply', '-R', patch, '-C', tree.root]);
    assert.equal(reverse.code, 0, reverse.stdout);
    assert.match(reverse.stdout, /A old\.txt/);
    assert.match(reverse.stdout, /D new\.txt/);
    assert.equal(tree.fingerprint(), before);
    const twice = patchd(['apply', '--reverse', patch, '-C', tree.root]);
    assert.equal(twice.code, 1, 'reversing a patch that is not applied is a rejection');
  });

  test('a git diff that drops a UTF-8 BOM drops it, -R puts it back, and neither claims a change it did not make', () => {
    const { tree, file } = greetTree('\uFEFFbom\nb\n');
    using _tree = tree;
    const bytes = () => readFileSync(join(tree.root, 'greet.txt')).toString('latin1');
    const patch = file('bom.diff', 'diff --git a/greet.txt b/greet.txt\n--- a/greet.txt\n+++ b/greet.txt\n@@ -1,2 +1,2 @@\n-\uFEFFbom\n+bom\n b\n');
    const run = patchd(['apply', patch, '-C', tree.root]);
    assert.equal(run.code, 0, run.stdout);
    assert.equal(bytes(), 'bom\nb\n');
    assert.equal(patchd(['apply', patch, '-C', tree.root]).code, 1, 'applied twice: already_applied');
    assert.equal(patchd(['apply', '-R', patch, '-C', tree.root]).code, 0);
    assert.equal(bytes(), '\xEF\xBB\xBFbom\nb\n');
    const twice = patchd(['apply', '-R', '--json', patch, '-C', tree.root]);
    assert.equal(twice.code, 1, twice.stdout);
    assert.equal(ReceiptSchema.parse(JSON.parse(twice.stdout)).error?.code, 'already_applied');
    assert.equal(bytes(), '\xEF\xBB\xBFbom\nb\n');
  });

  test('-R of a change that hides what it replaced is not_reversible', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    const write = file('write.json', JSON.stringify({ edits: [{ path: 'fresh.txt', content: 'x\n' }] }));
    const run = patchd(['apply', '-R', '--json', write, '-C', tree.root]);
    assert.equal(run.code, 1);
    assert.equal(ReceiptSchema.parse(JSON.parse(run.stdout)).error?.code, 'not_reversible');
  });

  test('--check is silent and writes nothing when the patch applies (exit 0), and explains on stderr when not (exit 1)', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    const patch = file('change.diff', PATCH);
    const before = tree.fingerprint();
    assert.deepEqual(patchd(['apply', '--check', patch, '-C', tree.root]), { code: 0, stdout: '', stderr: '' });
    assert.equal(tree.fingerprint(), before);
    tree.write('greet.txt', 'hello\nplanet\n');
    const failing = patchd(['apply', '--check', patch, '-C', tree.root]);
    assert.equal(failing.code, 1);
    assert.equal(failing.stdout, '');
    assert.match(failing.stderr, /context_not_found/);
  });

  test('--stat prints +/- per file like git apply --stat, and writes nothing', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    const patch = file('change.diff', `${PATCH}--- /dev/null\n+++ b/docs/new.txt\n@@ -0,0 +1,3 @@\n+a\n+b\n+c\n`);
    const before = tree.fingerprint();
    const run = patchd(['apply', '--stat', patch, '-C', tree.root]);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, ' greet.txt    | 2 +-\n docs/new.txt | 3 +++\n 2 files changed, 4 insertions(+), 1 deletion(-)\n');
    assert.equal(tree.fingerprint(), before);
  });

  test('--dry-run off a terminal prints the receipt without the diff, and writes nothing', () => {
    const { tree } = greetTree();
    using _tree = tree;
    const before = tree.fingerprint();
    const run = patchd(['apply', '-', '--dry-run'], { cwd: tree.root, input: PATCH });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^dry run: would change 1 file/);
    assert.doesNotMatch(run.stdout, /^\+there$/m);
    assert.equal(tree.fingerprint(), before);
  });

  test('--exact turns tolerance off; the tolerant tier shows in the receipt', () => {
    const { tree } = greetTree('hello  \nworld\n');
    using _tree = tree;
    const exact = patchd(['apply', '--json', '--exact', '-C', tree.root], { input: PATCH });
    assert.equal(exact.code, 1);
    assert.equal(ReceiptSchema.parse(JSON.parse(exact.stdout)).error?.code, 'context_not_found');
    const tolerant = patchd(['apply', '-C', tree.root], { input: PATCH });
    assert.equal(tolerant.code, 0, tolerant.stdout);
    assert.match(tolerant.stdout, /M greet\.txt {2}\+1 −1 \[hunk 1: trailing_whitespace\]/);
  });

  test('GNU patch spellings: -d DIR, -i PATCHFILE, -s prints nothing unless rejected (then on stderr), -u', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    const patch = file('change.diff', PATCH);
    assert.deepEqual(patchd(['apply', '-d', tree.root, '-p1', '-s', '-i', patch]), { code: 0, stdout: '', stderr: '' });
    assert.equal(tree.text('greet.txt'), 'hello\nthere\n');
    // patch -d DIR -p1 -s < PATCHFILE; already applied now, which -s still reports (and -N asks for).
    const again = patchd(['apply', '-d', tree.root, '-N', '-p1', '--silent'], { input: PATCH });
    assert.equal(again.code, 1);
    assert.equal(again.stdout, '');
    assert.match(again.stderr, /already_applied \(greet\.txt\)/);
    assert.equal(tree.text('greet.txt'), 'hello\nthere\n');
    const unified = patchd(['apply', '-u', '--json', '-R', patch, '-C', tree.root]);
    assert.equal(unified.code, 0, unified.stdout);
    assert.equal(ReceiptSchema.parse(JSON.parse(unified.stdout)).format, 'unified');
    assert.equal(tree.text('greet.txt'), 'hello\nworld\n');
  });

  test('-N: a diff without index line or timestamps applied again at a file\'s start or end is rejected as already_applied (exit 1), not written twice', () => {
    const tenLines = '1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n';
    const { tree, file } = greetTree();
    using _tree = tree;
    tree.write('f.txt', tenLines);
    const hg = file('hg.diff', 'diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n+#!header\n 1\n 2\n 3\n');
    const svn = file('svn.diff', 'Index: f.txt\n===\n--- f.txt\t(revision 12)\n+++ f.txt\t(working copy)\n@@ -8,3 +8,4 @@\n 8\n 9\n 10\n+11\n');
    for (const patch of [hg, svn]) {
      const first = patchd(['apply', '-N', patch, '-C', tree.root]);
      assert.equal(first.code, 0, first.stdout + first.stderr);
      const before = tree.fingerprint();
      const again = patchd(['apply', '-N', '--json', patch, '-C', tree.root]);
      assert.equal(again.code, 1, again.stdout);
      const receipt = ReceiptSchema.parse(JSON.parse(again.stdout));
      assert.deepEqual([receipt.status, receipt.error?.code, receipt.error?.path], ['rejected', 'already_applied', 'f.txt']);
      assert.equal(tree.fingerprint(), before);
    }
    assert.equal(tree.text('f.txt'), `#!header\n${tenLines}11\n`);
  });

  test('options for what patchd does anyway are accepted; those it does not do are refused with the reason, writing nothing', () => {
    const { tree, file } = greetTree('hello\nworld\n');
    using _tree = tree;
    // No context and a wrong line count: what --unidiff-zero and --recount let git apply take.
    const patch = file('zero.diff', '--- a/greet.txt\n+++ b/greet.txt\n@@ -2,3 +2,3 @@\n-world\n+there\n');
    const before = tree.fingerprint();
    const refusals: [string[], RegExp][] = [
      [['--index'], /unknown option --index: patchd changes the workspace's files, never git's index/],
      [['--3way'], /unknown option --3way: patchd does not merge/],
      [['--reject'], /unknown option --reject: patchd applies a patch whole or not at all/],
      [['-b'], /unknown option -b: patchd writes no backup files/],
      [['--include=greet.txt'], /unknown option --include: patchd applies every file of a patch/],
      [['-F', '3'], /unknown option -F: patchd has no fuzz factor/],
      [['--whitespace=fix'], /--whitespace=fix is not taken: patchd neither fixes nor flags whitespace errors/],
      [['--whitespace=sometimes'], /--whitespace must be one of nowarn, warn, fix, strip, error, error-all \(got "sometimes"\)/],
      [['-l', '--exact'], /-l\/--ignore-whitespace and --exact contradict each other/],
      [['-u', '--format', 'codex'], /-u\/--unified says the patch is a unified diff, --format says codex/],
      [['-s', '--json'], /-s\/--quiet prints nothing/],
      [['-i', patch], /-i\/--input names the one patch file; give it there or as the operand, not both/],
    ];
    for (const [options, sentence] of refusals) assertUsageError(patchd(['apply', ...options, patch, '-C', tree.root]), sentence);
    assert.equal(tree.fingerprint(), before);
    const accepted = patchd(['apply', '--unidiff-zero', '--recount', '--whitespace=nowarn', '-l', '-N', '--no-backup-if-mismatch', patch, '-C', tree.root]);
    assert.equal(accepted.code, 0, accepted.stdout);
    assert.equal(tree.text('greet.txt'), 'hello\nthere\n');
  });
});

describe('patchd apply: an apply_patch shell command', () => {
  const heredoc = (cd: string, body: string) => `I'll run:\n\n\`\`\`bash\n${cd}apply_patch <<'EOF'\n*** Begin Patch\n${body}*** End Patch\nEOF\n\`\`\`\n`;

  test('after prose and in a fence, cd DIR && edits DIR\'s file, not the root\'s; a missing DIR is not_found and creates nothing', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    tree.write('f.txt', 'a\nb\nc\n');
    tree.write('sub/f.txt', 'a\nb\nc\n');
    const run = patchd(['apply', file('sub.txt', heredoc('cd sub && ', '*** Update File: f.txt\n@@\n a\n-b\n+B\n c\n')), '-C', tree.root]);
    assert.equal(run.code, 0, run.stdout);
    assert.match(run.stdout, /^applied 1 file \(shell, \d+ ms\)\n {2}M sub\/f\.txt/);
    assert.equal(tree.text('sub/f.txt'), 'a\nB\nc\n');
    assert.equal(tree.text('f.txt'), 'a\nb\nc\n');
    const nope = file('nope.txt', heredoc('cd nope && ', '*** Add File: x.txt\n+x\n'));
    const cdApart = file('separate.txt', heredoc('cd sub\n', '*** Update File: f.txt\n@@\n-a\n+A\n'));
    const before = tree.fingerprint();
    const missing = patchd(['apply', nope, '-C', tree.root]);
    assert.equal(missing.code, 1, missing.stdout);
    assert.match(missing.stdout, /not_found \(nope\): cd nope: nope does not exist/);
    const separate = patchd(['apply', cdApart, '-C', tree.root]);
    assert.equal(separate.code, 1, separate.stdout);
    assert.match(separate.stdout, /unsupported_command: "cd sub"/);
    assert.equal(tree.fingerprint(), before);
  });
});

describe('patchd apply --batch', () => {
  const batchTree = () => {
    const tree = createTempTree({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'w.txt': 'w  \nx\n' });
    const dir = join(tree.base, 'patches');
    mkdirSync(dir);
    writeFileSync(join(dir, '1-a.diff'), '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n');
    writeFileSync(join(dir, '2-b.json'), JSON.stringify([{ type: 'update_file', path: 'b.txt', diff: '-b\n+B\n' }]));
    writeFileSync(join(dir, '3-c.json'), JSON.stringify({ edits: [{ path: 'c.txt', content: 'new\n' }] }));
    writeFileSync(join(dir, '4-broken.json'), '[{"type": ');
    writeFileSync(join(dir, '5-w.diff'), '--- a/w.txt\n+++ b/w.txt\n@@ -1,2 +1,2 @@\n w\n-x\n+X\n');
    return { tree, dir };
  };

  test('a directory of patches: a bad file is a rejected row with its reason, the rest apply; tolerant matches are flagged', () => {
    const { tree, dir } = batchTree();
    using _tree = tree;
    const run = patchd(['apply', '--batch', dir, '-C', tree.root]);
    assert.equal(run.code, 1, run.stderr);
    const lines = run.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^patch\s+status\s+files\s+detail$/);
    assert.match(lines[1]!, /1-a\.diff\s+applied\s+1$/);
    assert.match(lines[3]!, /3-c\.json\s+applied\s+1$/);
    assert.match(lines[4]!, /4-broken\.json\s+rejected\s+0 {2}parse_error: .*4-broken\.json is not valid JSON/);
    assert.match(lines[5]!, /5-w\.diff\s+applied\s+1 {2}tolerant match: w\.txt hunk 1 \(trailing_whitespace\)$/);
    assert.equal(lines[6], '5 patches: 4 applied, 1 rejected, 1 with tolerant matches');
    assert.equal(run.stderr, '', 'no progress bar off a terminal');
    assert.deepEqual(['a.txt', 'b.txt', 'c.txt', 'w.txt'].map((name) => tree.text(name)), ['A\n', 'B\n', 'new\n', 'w  \nX\n']);
  });

  test('--json gives JSON Lines: one receipt per line, each naming its file', () => {
    const { tree, dir } = batchTree();
    using _tree = tree;
    const run = patchd(['apply', '--batch', '--json', '--dry-run', dir, '-C', tree.root]);
    assert.equal(run.code, 1, run.stderr);
    const lines = run.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { file: string });
    const byFile = new Map(lines.map((line) => [line.file.split('/').at(-1), ReceiptSchema.parse(line)]));
    assert.deepEqual([...byFile.keys()].sort(), readdirSync(dir).sort());
    assert.equal(byFile.get('4-broken.json')?.error?.code, 'parse_error');
    assert.equal(byFile.get('5-w.diff')?.files[0]?.hunks[0]?.tier, 'trailing_whitespace');
    assert.deepEqual([...byFile.values()].filter((receipt) => receipt.status === 'dry_run').length, 4);
    assert.equal(tree.text('a.txt'), 'a\n');
  });
});

describe('patchd: where state lives', () => {
  /** Applies PATCH with HOME in the tree and no state settings but `env` (given the tree's base); returns where state went. */
  const applyWithState = (env: (base: string) => Record<string, string>) => {
    const { tree } = greetTree();
    const home = join(tree.base, 'home');
    const run = patchd(['apply', '-C', tree.root], { input: PATCH, env: { HOME: home, PATCHD_STATE_DIR: undefined, XDG_STATE_HOME: undefined, ...env(tree.base) } });
    assert.equal(run.code, 0, run.stderr);
    return { tree, home };
  };

  test('default: ~/.local/state/patchd, one folder per workspace', () => {
    const { tree, home } = applyWithState(() => ({}));
    using _tree = tree;
    assert.equal(readdirSync(join(home, '.local', 'state', 'patchd')).length, 1);
  });

  test('$XDG_STATE_HOME/patchd when it is set (the order against PATCHD_STATE_DIR and --state-dir: test/cli)', () => {
    const { tree, home } = applyWithState((base) => ({ XDG_STATE_HOME: join(base, 'xdg') }));
    using _tree = tree;
    assert.equal(readdirSync(join(tree.base, 'xdg', 'patchd')).length, 1);
    assert.ok(!existsSync(join(home, '.local')));
  });

  test('a state dir that cannot be used is a usage error in plain words', () => {
    const { tree, file } = greetTree();
    using _tree = tree;
    const blocker = file('not-a-dir', 'x');
    const run = patchd(['apply', '--state-dir', join(blocker, 'state'), '-C', tree.root], { input: PATCH });
    assertUsageError(run, /cannot use the state directory .*: a part of the path is not a directory/);
  });

  test('the tests themselves keep state in their own root', () => {
    assert.equal(process.env.PATCHD_STATE_DIR, TEST_STATE_ROOT);
  });
});
