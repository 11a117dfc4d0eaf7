/** `patchd log`, `patchd undo` and `patchd diff` as a user runs them, sharing the state dir with `patchd apply`. */
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { stateDirFor } from '../../daemon/workspace/stateDir.ts';
import { ListTransactionsResultSchema, ReceiptSchema, SessionDiffResultSchema } from '../../protocol/index.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const MAIN = fileURLToPath(new URL('../../daemon/main.ts', import.meta.url));
const PATCH = '--- a/greet.txt\n+++ b/greet.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n';

function patchd(args: readonly string[], input = '') {
  const result = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), MAIN, ...args], { input, encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('apply, then log, diff and undo it from the command line', () => {
  using tree = createTempTree({ 'greet.txt': 'hello\nworld\n' });
  assert.equal(patchd(['apply', '-C', tree.root], PATCH).code, 0);

  const log = patchd(['log', '-C', tree.root, '--json']);
  assert.equal(log.code, 0, log.stderr);
  const [transaction] = ListTransactionsResultSchema.parse(JSON.parse(log.stdout)).transactions;
  assert.deepEqual(transaction?.files, [{ path: 'greet.txt', op: 'update' }]);
  const human = patchd(['log', '-C', tree.root]);
  assert.match(human.stdout, new RegExp(`^${transaction!.transactionId} .* unified\\n  update greet.txt\\n`));

  const diff = patchd(['diff', '-C', tree.root]);
  assert.equal(diff.code, 0, diff.stderr);
  assert.equal(diff.stdout, 'diff --git a/greet.txt b/greet.txt\n--- a/greet.txt\n+++ b/greet.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n');
  const since = SessionDiffResultSchema.parse(JSON.parse(patchd(['diff', '--since', transaction!.transactionId, '-C', tree.root, '--json']).stdout));
  assert.deepEqual(since, { diff: '', files: [] });
  assert.equal(patchd(['diff', '--since', 'nope', '-C', tree.root]).code, 1);

  const undo = patchd(['undo', transaction!.transactionId, '-C', tree.root, '--json']);
  assert.equal(undo.code, 0, undo.stderr);
  assert.equal(ReceiptSchema.parse(JSON.parse(undo.stdout)).format, 'undo');
  assert.equal(tree.text('greet.txt'), 'hello\nworld\n');
  const again = patchd(['undo', transaction!.transactionId, '-C', tree.root]);
  assert.equal(again.code, 1);
  assert.match(again.stdout, /stale_file/);
  assert.equal(patchd(['undo', '-C', tree.root]).code, 2);
});

test('a damaged undo record: log marks its transaction damaged, diff and undo refuse naming it (exit 1); a binary file deleted diffs as a git binary patch', () => {
  const png = Buffer.from('\x89PNG\r\n\x1a\n\x00\xff', 'latin1');
  using tree = createTempTree({ 'greet.txt': 'hello\nworld\n', 'logo.png': png });
  assert.equal(patchd(['apply', '-C', tree.root], PATCH).code, 0);
  assert.equal(patchd(['apply', '-C', tree.root], '*** Begin Patch\n*** Delete File: logo.png\n*** End Patch\n').code, 0);
  const diff = patchd(['diff', '-C', tree.root]);
  assert.equal(diff.code, 0, diff.stderr);
  assert.match(diff.stdout, /^diff --git a\/logo\.png b\/logo\.png\ndeleted file mode 100644\nindex [0-9a-f]{40}\.\.0{40}\nGIT binary patch\nliteral 0\n/m);
  const [deleted, edited] = ListTransactionsResultSchema.parse(JSON.parse(patchd(['log', '-C', tree.root, '--json']).stdout)).transactions;

  const history = join(stateDirFor(tree.root, TEST_STATE_ROOT), 'history');
  const record = readdirSync(history).find((name) => name.includes(edited!.transactionId))!;
  truncateSync(join(history, record), 100);

  const log = patchd(['log', '-C', tree.root, '--json']);
  assert.equal(log.code, 0, log.stderr);
  const listed = ListTransactionsResultSchema.parse(JSON.parse(log.stdout)).transactions;
  assert.deepEqual(listed.map((transaction) => transaction.transactionId), [deleted!.transactionId, edited!.transactionId]);
  assert.match(listed[1]!.damaged ?? '', new RegExp(`^undo record history/${record.replaceAll('.', '\\.')} `));
  assert.match(patchd(['log', '-C', tree.root]).stdout, new RegExp(`^${edited!.transactionId} .* damaged\\n(.*\\n)*  undo record history/`, 'm'));

  const refused = patchd(['diff', '-C', tree.root]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.ok(refused.stderr.includes(edited!.transactionId) && refused.stderr.includes(record), refused.stderr);
  assert.equal(refused.stdout, '');
  assert.equal(patchd(['diff', '--since', edited!.transactionId, '-C', tree.root]).code, 0, 'a window after it is told');
  const undo = patchd(['undo', edited!.transactionId, '-C', tree.root, '--json']);
  assert.equal(undo.code, 1);
  const receipt = ReceiptSchema.parse(JSON.parse(undo.stdout));
  assert.equal(receipt.error?.code, 'io_error');
  assert.ok(receipt.error?.message.includes(edited!.transactionId));
  assert.equal(tree.text('greet.txt'), 'hello\nthere\n');
});

test('log checks pre-images and whose a record is: a flipped byte lists as damaged, a record with no header as status unknown, one from another workspace is refused', () => {
  using tree = createTempTree({ 'greet.txt': 'hello\nworld\n', 'other.txt': 'one\n' });
  using elsewhere = createTempTree({ 'greet.txt': 'hi\nworld\n' });
  assert.equal(patchd(['apply', '-C', tree.root], PATCH).code, 0);
  assert.equal(patchd(['apply', '-C', tree.root], '--- a/other.txt\n+++ b/other.txt\n@@ -1 +1 @@\n-one\n+two\n').code, 0);
  assert.equal(patchd(['apply', '-C', elsewhere.root], '--- a/greet.txt\n+++ b/greet.txt\n@@ -1,2 +1,2 @@\n-hi\n-world\n+hello\n+there\n').code, 0);
  const [other, edited] = ListTransactionsResultSchema.parse(JSON.parse(patchd(['log', '-C', tree.root, '--json']).stdout)).transactions;
  const [foreign] = ListTransactionsResultSchema.parse(JSON.parse(patchd(['log', '-C', elsewhere.root, '--json']).stdout)).transactions;

  const history = join(stateDirFor(tree.root, TEST_STATE_ROOT), 'history');
  const recordOf = (dir: string, id: string) => join(dir, readdirSync(dir).find((name) => name.includes(id))!);
  const flipped = readFileSync(recordOf(history, edited!.transactionId));
  flipped[flipped.length - 2]! ^= 0x20; // inside greet.txt's pre-image: "world" → "worlD"
  writeFileSync(recordOf(history, edited!.transactionId), flipped);
  writeFileSync(recordOf(history, other!.transactionId), 'not a record\n');
  // Newer than every record here, so listed first and taken for this workspace's latest.
  const copied = join(history, basename(recordOf(join(stateDirFor(elsewhere.root, TEST_STATE_ROOT), 'history'), foreign!.transactionId)).replace(/^\d{13}/, String(Date.now() + 1000)));
  copyFileSync(recordOf(join(stateDirFor(elsewhere.root, TEST_STATE_ROOT), 'history'), foreign!.transactionId), copied);

  const log = patchd(['log', '-C', tree.root, '--json']);
  assert.equal(log.code, 0, log.stderr);
  const listed = ListTransactionsResultSchema.parse(JSON.parse(log.stdout)).transactions;
  assert.deepEqual(listed.map(({ transactionId, status, format }) => ({ transactionId, status, format })), [
    { transactionId: foreign!.transactionId, status: 'unknown', format: 'unknown' },
    { transactionId: other!.transactionId, status: 'unknown', format: 'unknown' },
    { transactionId: edited!.transactionId, status: 'applied', format: 'unified' },
  ]);
  assert.match(listed[0]!.damaged ?? '', /was written for another workspace/);
  assert.match(listed[1]!.damaged ?? '', /has no header line|not an undo record/);
  assert.match(listed[2]!.damaged ?? '', /holds a pre-image of greet\.txt that no longer matches the sha256/);
  assert.deepEqual(listed[2]!.files, [{ path: 'greet.txt', op: 'update' }], 'what its whole header says is still shown');
  const human = patchd(['log', '-C', tree.root]).stdout;
  assert.match(human, new RegExp(`^${other!.transactionId} \\S+ unknown status unknown damaged$`, 'm'));
  assert.match(human, new RegExp(`^${edited!.transactionId} \\S+ unified damaged\n  update greet\\.txt\n  undo record history/`, 'm'));

  const undo = patchd(['undo', foreign!.transactionId, '-C', tree.root, '--json']);
  assert.equal(undo.code, 1, undo.stderr);
  assert.equal(ReceiptSchema.parse(JSON.parse(undo.stdout)).error?.code, 'io_error');
  assert.equal(tree.text('greet.txt'), 'hello\nthere\n', 'the other workspace\'s pre-image is not written here');
});

/** Runs `patchd ARGS` on a pseudo-terminal (util-linux `script`), typing `typed` into it. */
function patchdOnTerminal(args: readonly string[], typed: string) {
  const command = [process.execPath, '--import', import.meta.resolve('tsx'), MAIN, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
  const result = spawnSync('script', ['-qec', command, '/dev/null'], { input: typed, encoding: 'utf8', timeout: 60_000 });
  return { code: result.status, output: result.stdout };
}

const hasScript = spawnSync('script', ['--version']).status === 0;

test('apply --interactive shows the diff and writes only after a y on the terminal', { skip: hasScript ? false : 'no `script` to make a terminal' }, () => {
  using tree = createTempTree({ 'greet.txt': 'hello\nworld\n' });
  tree.write('../change.diff', PATCH);
  const patchFile = `${tree.base}/change.diff`;
  const declined = patchdOnTerminal(['apply', patchFile, '-C', tree.root, '--interactive'], 'n\n');
  assert.equal(declined.code, 1, declined.output);
  assert.match(declined.output, /-world\r?\n\+there/);
  assert.match(declined.output, /declined/);
  assert.equal(tree.text('greet.txt'), 'hello\nworld\n');
  const approved = patchdOnTerminal(['apply', patchFile, '-C', tree.root, '--interactive'], 'y\n');
  assert.equal(approved.code, 0, approved.output);
  assert.equal(tree.text('greet.txt'), 'hello\nthere\n');
});
