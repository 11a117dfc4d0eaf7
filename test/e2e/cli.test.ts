/** The `patchd` command line: bin/patchd.js run as a child, as a user would. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BatchSummarySchema, ReceiptSchema, type Receipt } from '../../protocol/index.ts';
import { createProgress } from '../../daemon/cli/progress.ts';
import { NO_COLORS } from '../../daemon/cli/render.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const BIN = fileURLToPath(new URL('../../bin/patchd.js', import.meta.url));
// The source under test; bin/patchd.js would prefer a dist/ build when one exists.
const MAIN = fileURLToPath(new URL('../../daemon/main.ts', import.meta.url));
const PATCH = '--- a/greet.txt\n+++ b/greet.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n';

function run(argv: readonly string[], options: { cwd?: string | undefined; input?: string | undefined }) {
  const result = spawnSync(process.execPath, argv, { cwd: options.cwd, input: options.input ?? '', encoding: 'utf8', timeout: 30_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function patchd(args: readonly string[], options: { cwd?: string; input?: string } = {}) {
  return run(['--import', import.meta.resolve('tsx'), MAIN, ...args], options);
}

describe('patchd CLI', () => {
  test('bin/patchd.js --version prints the package version; --help the usage', () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.deepEqual(run([BIN, '--version'], {}), { code: 0, stdout: `patchd ${version}\n`, stderr: '' });
    const help = patchd(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /patchd apply \[PATCHFILE\|-\] \[-C DIR\]/);
  });

  test('apply PATCHFILE -C DIR applies and prints a readable receipt (no colour off a TTY)', () => {
    using tree = createTempTree({ 'greet.txt': 'hello\nworld\n' });
    const file = join(tree.base, 'change.diff');
    writeFileSync(file, PATCH);
    const run = patchd(['apply', file, '-C', tree.root]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^applied 1 file \(unified, \d+ ms\)\n {2}M greet\.txt {2}\+1 −1\n$/);
    assert.equal(tree.text('greet.txt'), 'hello\nthere\n');
  });

  test('apply - --dry-run reads stdin and writes nothing', () => {
    using tree = createTempTree({ 'greet.txt': 'hello\nworld\n' });
    const before = tree.fingerprint();
    const run = patchd(['apply', '-', '--dry-run'], { cwd: tree.root, input: PATCH });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^dry run: would change 1 file/);
    assert.equal(tree.fingerprint(), before);
  });

  test('a rejection exits 1 and shows the code, the hint and the nearest text', () => {
    using tree = createTempTree({ 'greet.txt': 'hello\nplanet\n' });
    const run = patchd(['apply', '-C', tree.root], { input: PATCH });
    assert.equal(run.code, 1);
    assert.match(run.stdout, /rejected/);
    assert.match(run.stdout, /context_not_found \(greet\.txt, hunk 1\)/);
    assert.match(run.stdout, /hint: The context or removed lines are not in the file/);
    assert.match(run.stdout, /nearest text, line 1/);
    assert.doesNotMatch(run.stdout, /\u001b\[/);
  });

  test('--json prints the receipt; --exact turns off tolerance', () => {
    using tree = createTempTree({ 'greet.txt': 'hello  \nworld\n' });
    const exact = patchd(['apply', '--json', '--exact', '-C', tree.root], { input: PATCH });
    assert.equal(exact.code, 1);
    assert.equal(ReceiptSchema.parse(JSON.parse(exact.stdout)).error?.code, 'context_not_found');
    const tolerant = patchd(['apply', '--json', '-C', tree.root], { input: PATCH });
    assert.equal(tolerant.code, 0, tolerant.stdout);
    const receipt = ReceiptSchema.parse(JSON.parse(tolerant.stdout));
    assert.equal(receipt.files[0]?.hunks[0]?.tier, 'trailing_whitespace');
  });

  test('usage and setup errors exit 2', () => {
    assert.equal(patchd(['apply', '--bogus']).code, 2);
    assert.equal(patchd(['apply', '--format', 'klingon'], { input: PATCH }).code, 2);
    assert.equal(patchd(['apply', '-C', '/definitely/not/here'], { input: PATCH }).code, 2);
    assert.equal(patchd(['frobnicate']).code, 2);
  });
});

describe('patchd apply --batch', () => {
  const batchTree = () => {
    const tree = createTempTree({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const dir = join(tree.base, 'patches');
    mkdirSync(dir);
    writeFileSync(join(dir, '1-a.diff'), '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n');
    writeFileSync(join(dir, '2-b.json'), JSON.stringify([{ type: 'update_file', path: 'b.txt', diff: '-b\n+B\n' }]));
    writeFileSync(join(dir, '3-c.json'), JSON.stringify({ edits: [{ path: 'c.txt', content: 'new\n' }] }));
    return { tree, dir };
  };

  test('a directory of patches: a summary table, exit 0 when every patch applied', () => {
    const { tree, dir } = batchTree();
    using _tree = tree;
    const run = patchd(['apply', '--batch', dir, '-C', tree.root]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^patch\s+status\s+files\s+detail\n/);
    assert.match(run.stdout, /1-a\.diff\s+applied\s+1\n/);
    assert.match(run.stdout, /3-c\.json\s+applied\s+1\n/);
    assert.match(run.stdout, /\n3 patches: 3 applied, 0 rejected\n$/);
    assert.equal(run.stderr, '', 'no progress bar off a terminal');
    assert.deepEqual([tree.text('a.txt'), tree.text('b.txt'), tree.text('c.txt')], ['A\n', 'B\n', 'new\n']);
  });

  test('files as given; one rejection exits 1; --json gives the summary with every receipt', () => {
    const { tree, dir } = batchTree();
    using _tree = tree;
    writeFileSync(join(dir, '4-bad.diff'), '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zzz\n+x\n');
    const run = patchd(['apply', '--batch', '--json', join(dir, '4-bad.diff'), join(dir, '1-a.diff'), '-C', tree.root]);
    assert.equal(run.code, 1, run.stderr);
    const report = JSON.parse(run.stdout) as { files: string[] };
    const summary = BatchSummarySchema.parse(report);
    assert.deepEqual([summary.total, summary.applied, summary.rejected], [2, 1, 1]);
    assert.deepEqual(report.files.map((file) => file.split('/').at(-1)), ['4-bad.diff', '1-a.diff']);
    assert.deepEqual(summary.receipts?.map((receipt) => receipt.error?.code ?? receipt.status), ['context_not_found', 'applied']);
  });

  test('usage errors exit 2', () => {
    assert.equal(patchd(['apply', '--batch']).code, 2);
    assert.equal(patchd(['apply', '--batch', '/definitely/not/here']).code, 2);
    assert.equal(patchd(['apply', '--batch', '.', '--concurrency', '0']).code, 2);
  });

  test('the progress bar draws on a terminal only, and erases itself', () => {
    const written: string[] = [];
    const terminal = { isTTY: true, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    const progress = createProgress(terminal, 2, NO_COLORS);
    progress.tick({ status: 'applied' } as Receipt);
    progress.tick({ status: 'rejected' } as Receipt);
    progress.done();
    assert.match(written.join(''), /2\/2 {2}✓ 1 {2}✗ 1/);
    assert.equal(written.at(-1), '\r\u001b[2K');
    const pipe = { isTTY: false, write: () => assert.fail('wrote to a pipe') } as unknown as NodeJS.WriteStream;
    createProgress(pipe, 1, NO_COLORS).tick({ status: 'applied' } as Receipt);
  });
});
