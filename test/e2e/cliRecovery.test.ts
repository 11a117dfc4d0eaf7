/**
 * A one-shot command that opens a workspace finishes the commit a killed `patchd apply` or
 * `patchd undo` left behind, and tells the user on stderr, once per commit, in one line: whether
 * it was rolled back or forward, on which paths, what was left as found and where the journal is
 * kept. stdout keeps the command's own output (`--json` stays JSON; `-s` stays silent).
 * `patchd apply --socket` says the same of what the shared daemon's opening recovered, when the
 * daemon tells it (to the workspace's first opener after the crash).
 */
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { stateDirFor } from '../../daemon/workspace/stateDir.ts';
import { ListTransactionsResultSchema, ReceiptSchema, SessionDiffResultSchema } from '../../protocol/index.ts';
import { BIN, patchd, patchdInTerminal, stripAnsi } from '../helpers/cli.ts';
import { DYING_CLI } from '../helpers/dyingCli.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree, type TempTree } from '../helpers/tempTree.ts';

const TREE = { 'a.txt': 'one\n', 'b.txt': 'two\n', 'c.txt': 'three\n', 'other.txt': 'other\n' };
const change = (path: string, from: string, to: string) => `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-${from}\n+${to}\n`;
/** Renames a.txt, b.txt, c.txt in that order (0, 1, 2). */
const THREE_FILES = change('a.txt', 'one', '1') + change('b.txt', 'two', '2') + change('c.txt', 'three', '3');
const OTHER = change('other.txt', 'other', 'another');
const RECOVERED = /^patchd: recovered an unfinished commit ([^\s:]+): (.*)\n$/;

/** Runs `patchd ARGS -C <root>` and SIGKILLs it at `dieAt` inside its commit (see `dyingCli.ts`). */
function killInsideCommit(tree: TempTree, dieAt: string, args: readonly string[], input = ''): void {
  const child = spawnSync(process.execPath, [...DYING_CLI, ...args, '-C', tree.root], { input, encoding: 'utf8', env: { ...process.env, PATCHD_TEST_DIE_AT: dieAt } });
  assert.equal(child.signal, 'SIGKILL', child.stderr);
}

/** The one recovery line of `stderr`: the transaction it names and what it says of it. */
function toldRecovery(stderr: string): { transactionId: string; told: string } {
  const [, transactionId, told] = RECOVERED.exec(stderr) ?? assert.fail(`no recovery line alone on stderr: ${JSON.stringify(stderr)}`);
  return { transactionId: transactionId!, told: told! };
}

const texts = (tree: TempTree) => ['a.txt', 'b.txt', 'c.txt', 'other.txt'].map((path) => tree.text(path));

test('the command after a patchd apply killed between its renames says it rolled the commit back, and which files it put back; only once', () => {
  using tree = createTempTree(TREE);
  killInsideCommit(tree, 'rename:2', ['apply'], THREE_FILES);
  assert.deepEqual(texts(tree), ['1\n', '2\n', 'three\n', 'other\n'], 'killed before c.txt');

  const log = patchd(['log', '-C', tree.root]);
  assert.equal(log.code, 0, log.stderr);
  assert.equal(toldRecovery(log.stderr).told, 'rolled back, put back as before it: a.txt, b.txt');
  assert.equal(log.stdout, 'no transactions\n');
  assert.deepEqual(texts(tree), ['one\n', 'two\n', 'three\n', 'other\n']);

  assert.deepEqual(patchd(['log', '-C', tree.root]), { code: 0, stdout: 'no transactions\n', stderr: '' });
});

test('patchd log --json after a patchd apply killed before it was logged done: rolled forward on stderr, the log still JSON on stdout; the commit can be undone', () => {
  using tree = createTempTree(TREE);
  killInsideCommit(tree, 'done', ['apply'], THREE_FILES);

  const log = patchd(['log', '--json', '-C', tree.root]);
  assert.equal(log.code, 0, log.stderr);
  const { transactionId, told } = toldRecovery(log.stderr);
  assert.equal(told, 'rolled forward, its changes stand: a.txt, b.txt, c.txt');
  const { transactions } = ListTransactionsResultSchema.parse(JSON.parse(log.stdout));
  assert.deepEqual(transactions.map((transaction) => transaction.transactionId), [transactionId]);
  assert.deepEqual(texts(tree), ['1\n', '2\n', '3\n', 'other\n']);

  const undo = patchd(['undo', transactionId, '--json', '-C', tree.root]);
  assert.equal(undo.code, 0, undo.stderr);
  assert.equal(undo.stderr, '');
  assert.equal(ReceiptSchema.parse(JSON.parse(undo.stdout)).status, 'applied');
  assert.deepEqual(texts(tree), ['one\n', 'two\n', 'three\n', 'other\n']);
});

test('patchd apply -s is silent about its own patch but says which file a recovery left as found, changed since, and where the journal is kept', () => {
  using tree = createTempTree(TREE);
  killInsideCommit(tree, 'rename:2', ['apply'], THREE_FILES);
  tree.write('a.txt', 'mine\n');

  const apply = patchd(['apply', '-s', '-C', tree.root], { input: OTHER });
  assert.equal(apply.code, 0, apply.stderr);
  assert.equal(apply.stdout, '');
  const { told } = toldRecovery(apply.stderr);
  const [done, conflict, kept, ...rest] = told.split('; ');
  assert.deepEqual([done, conflict, rest], ['rolled back, put back as before it: b.txt', 'left as found, changed since: a.txt', []]);
  const [, journal] = /^journal kept at (.*\.journal\.conflict)$/.exec(kept!) ?? assert.fail(kept);
  assert.ok(journal!.startsWith(stateDirFor(tree.root, TEST_STATE_ROOT)) && existsSync(journal!), journal);
  assert.deepEqual(texts(tree), ['mine\n', 'two\n', 'three\n', 'another\n']);
});

test('patchd diff after a patchd undo killed between its renames says the undo was rolled back; the diff still shows the transaction', () => {
  using tree = createTempTree(TREE);
  assert.equal(patchd(['apply', '-C', tree.root], { input: THREE_FILES }).code, 0);
  const { transactions: [applied] } = ListTransactionsResultSchema.parse(JSON.parse(patchd(['log', '--json', '-C', tree.root]).stdout));
  killInsideCommit(tree, 'rename:1', ['undo', applied!.transactionId]);

  const diff = patchd(['diff', '--json', '-C', tree.root]);
  assert.equal(diff.code, 0, diff.stderr);
  const { transactionId, told } = toldRecovery(diff.stderr);
  assert.notEqual(transactionId, applied!.transactionId, 'the undo is a transaction of its own');
  assert.equal(told, 'rolled back, put back as before it: a.txt');
  assert.deepEqual(SessionDiffResultSchema.parse(JSON.parse(diff.stdout)).files.map((file) => file.path), ['a.txt', 'b.txt', 'c.txt']);
  assert.deepEqual(texts(tree), ['1\n', '2\n', '3\n', 'other\n']);
});

test('patchd apply --batch --json after a journal was damaged: not acted on, where it is kept, on stderr; one JSON receipt per line on stdout', () => {
  using tree = createTempTree(TREE);
  const journals = join(stateDirFor(tree.root, TEST_STATE_ROOT), 'journal');
  mkdirSync(journals, { recursive: true });
  // Named as a journal of a process that is gone; not one any more.
  writeFileSync(join(journals, `${spawnSync('true').pid}-0000-tx_damaged.journal`), 'not a journal\n');
  const patches = join(tree.base, 'patches');
  mkdirSync(patches);
  writeFileSync(join(patches, 'other.diff'), OTHER);

  const batch = patchd(['apply', '--batch', patches, '--json', '-C', tree.root]);
  assert.equal(batch.code, 0, batch.stderr);
  const { transactionId, told } = toldRecovery(batch.stderr);
  assert.equal(transactionId, 'tx_damaged');
  assert.match(told, /^not acted on, its journal is damaged and names no path that can be read; journal kept at .*-tx_damaged\.journal\.conflict$/);
  const rows = batch.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { file: string; status: string });
  assert.deepEqual(rows.map(({ file, status }) => ({ file, status })), [{ file: join(patches, 'other.diff'), status: 'applied' }]);
});

test('on a terminal, the line takes the place of a batch\'s progress bar already drawn, rather than running on after it', () => {
  using tree = createTempTree(TREE);
  killInsideCommit(tree, 'rename:1', ['apply'], THREE_FILES);
  const patches = join(tree.base, 'patches');
  mkdirSync(patches);
  // Holds no patch: its row is done, and the bar drawn, before the workspace opens.
  writeFileSync(join(patches, '1-broken.json'), '{"edits": [');
  writeFileSync(join(patches, '2-other.diff'), OTHER);

  const run = patchdInTerminal(['apply', '--batch', patches, '-C', tree.root]);
  assert.equal(run.code, 1, run.stdout);
  const shown = stripAnsi(run.stdout).split('\n').find((line) => line.includes('recovered an unfinished commit')) ?? assert.fail(run.stdout);
  assert.match(shown.split('\r').at(-1)!, /^patchd: recovered an unfinished commit \S+: rolled back, put back as before it: a\.txt$/);
  assert.match(stripAnsi(run.stdout), /^2 patches: 1 applied, 1 rejected$/m);
});

test('patchd apply --socket --json to a freshly started shared daemon says what the daemon\'s opening recovered, and where it kept the journal; the next apply --socket says nothing of it', async () => {
  using tree = createTempTree(TREE);
  await using daemon = await SocketDaemon.start();
  killInsideCommit(tree, 'rename:2', ['apply', '--state-dir', daemon.stateRoot], THREE_FILES);
  tree.write('a.txt', 'mine\n');

  const apply = patchd(['apply', '--socket', daemon.socket, '--json', '-C', tree.root], { input: OTHER });
  assert.equal(apply.code, 0, apply.stderr);
  assert.equal(ReceiptSchema.parse(JSON.parse(apply.stdout)).status, 'applied');
  const [done, conflict, kept, ...rest] = toldRecovery(apply.stderr).told.split('; ');
  assert.deepEqual([done, conflict, rest], ['rolled back, put back as before it: b.txt', 'left as found, changed since: a.txt', []]);
  const [, journal] = /^journal kept at (.*\.journal\.conflict)$/.exec(kept!) ?? assert.fail(kept);
  assert.ok(journal!.startsWith(stateDirFor(tree.root, daemon.stateRoot)) && existsSync(journal!), journal);
  assert.deepEqual(texts(tree), ['mine\n', 'two\n', 'three\n', 'another\n']);

  const again = patchd(['apply', '--socket', daemon.socket, '-C', tree.root], { input: change('other.txt', 'another', 'other') });
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stderr, '');
  assert.equal(tree.text('other.txt'), 'other\n');
});

test('patchd apply --socket -s names no kept journal where none was kept, and says nothing when a client opened the workspace first and was told', async () => {
  using tree = createTempTree(TREE);
  await using daemon = await SocketDaemon.start();
  killInsideCommit(tree, 'rename:2', ['apply', '--state-dir', daemon.stateRoot], THREE_FILES);
  const apply = patchd(['apply', '--socket', daemon.socket, '-s', '-C', tree.root], { input: OTHER });
  assert.equal(apply.code, 0, apply.stderr);
  assert.equal(apply.stdout, '');
  assert.equal(toldRecovery(apply.stderr).told, 'rolled back, put back as before it: a.txt, b.txt');

  killInsideCommit(tree, 'rename:1', ['apply', '--state-dir', daemon.stateRoot], THREE_FILES);
  const client = await daemon.connect();
  const { recovered } = await client.openWorkspace(tree.root);
  assert.deepEqual(recovered.map(({ outcome, paths }) => ({ outcome, paths })), [{ outcome: 'rolled_back', paths: ['a.txt'] }]);
  const quiet = patchd(['apply', '--socket', daemon.socket, '-C', tree.root], { input: change('other.txt', 'another', 'other') });
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.equal(quiet.stderr, '');
  assert.deepEqual(texts(tree), ['one\n', 'two\n', 'three\n', 'other\n']);
});

test('two commands at once after a patchd apply killed between its renames: both succeed, and one of them tells the rollback', async () => {
  using tree = createTempTree(TREE);
  killInsideCommit(tree, 'rename:2', ['apply'], THREE_FILES);
  const run = () => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'log', '-C', tree.root], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  const logs = await Promise.all([run(), run()]);
  for (const log of logs) assert.deepEqual({ code: log.code, stdout: log.stdout }, { code: 0, stdout: 'no transactions\n' }, log.stderr);
  const told = logs.filter((log) => log.stderr !== '');
  assert.equal(told.length, 1, JSON.stringify(logs));
  assert.equal(toldRecovery(told[0]!.stderr).told, 'rolled back, put back as before it: a.txt, b.txt');
  assert.deepEqual(texts(tree), ['one\n', 'two\n', 'three\n', 'other\n']);
});
