/**
 * Retention belongs to the state root: `patchd serve --retain` records it there, and every later
 * process using that root — a one-shot `patchd apply`, `patchd log`, a daemon started without
 * `--retain` — prunes with it, never with the default.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PatchClient, RpcError } from '../../client/index.ts';
import { DEFAULT_RETENTION } from '../../daemon/workspace/retention.ts';
import { ListTransactionsResultSchema } from '../../protocol/index.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const MAIN = fileURLToPath(new URL('../../daemon/main.ts', import.meta.url));

function patchd(args: readonly string[], input = '') {
  const result = spawnSync(process.execPath, ['--import', import.meta.resolve('tsx'), MAIN, ...args], { input, encoding: 'utf8', timeout: 120_000 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

const addFile = (name: string) => `--- /dev/null\n+++ b/${name}\n@@ -0,0 +1 @@\n+${name}\n`;

test('a one-shot apply next to a daemon started with --retain 5000 deletes none of the records it keeps', async () => {
  using tree = createTempTree();
  const stateRoot = path.join(tree.base, 'state');
  const count = DEFAULT_RETENTION.maxTransactions + 5;
  {
    await using client = await PatchClient.spawn({ serveArgs: ['--retain', '5000', '--state-dir', stateRoot] });
    const workspace = await client.openWorkspace(tree.root);
    const patches = Array.from({ length: count }, (_, index) => addFile(`f${index}.txt`));
    let applied = 0;
    for await (const { receipt } of workspace.applyMany(patches, { timeoutMs: 3_600_000 })) applied += receipt.status === 'applied' ? 1 : 0;
    assert.equal(applied, count);
    assert.deepEqual(JSON.parse(readFileSync(path.join(stateRoot, 'retention.json'), 'utf8')), { maxTransactions: 5000, maxAgeMs: DEFAULT_RETENTION.maxAgeMs });

    // While the daemon runs, one-shot commands open the same state dir (and prune on open).
    const oneShot = patchd(['apply', '--state-dir', stateRoot, '-C', tree.root], addFile('one-shot.txt'));
    assert.equal(oneShot.code, 0, oneShot.stderr);
    const log = patchd(['log', '--state-dir', stateRoot, '-C', tree.root, '--limit', '10000', '--json']);
    assert.equal(log.code, 0, log.stderr);
    assert.equal(ListTransactionsResultSchema.parse(JSON.parse(log.stdout)).transactions.length, count + 1);
    assert.equal((await workspace.transactions({ limit: 10_000 })).length, count + 1);
  }
  // A daemon started later without --retain keeps them too.
  await using later = await PatchClient.spawn({ serveArgs: ['--state-dir', stateRoot] });
  const reopened = await later.openWorkspace(tree.root);
  assert.equal((await reopened.transactions({ limit: 10_000 })).length, count + 1);
});

test('a retention record that makes no sense prunes nothing, says so, and --retain rewrites it', async () => {
  using tree = createTempTree({ 'a.txt': 'a\n' });
  const stateRoot = path.join(tree.base, 'state');
  assert.equal(patchd(['apply', '--state-dir', stateRoot, '-C', tree.root], '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n').code, 0);
  tree.write('../state/retention.json', '{"maxTransactions": 0}\n');
  const log = patchd(['log', '--state-dir', stateRoot, '-C', tree.root, '--json']);
  assert.equal(log.code, 0, log.stderr);
  assert.equal(ListTransactionsResultSchema.parse(JSON.parse(log.stdout)).transactions.length, 1);
  assert.match(log.stderr, /retention\.json does not hold a retention/);
  await using client = await PatchClient.spawn({ serveArgs: ['--retain', '1h', '--state-dir', stateRoot] });
  await client.openWorkspace(tree.root);
  assert.deepEqual(JSON.parse(readFileSync(path.join(stateRoot, 'retention.json'), 'utf8')), { maxTransactions: DEFAULT_RETENTION.maxTransactions, maxAgeMs: 3_600_000 });
});

test('a daemon prunes as it commits; a session diff whose start was pruned is -32602 unknown_transaction, one since a kept transaction is told', async () => {
  using tree = createTempTree({ 'a.txt': 'a0\n' });
  const stateRoot = path.join(tree.base, 'state');
  await using client = await PatchClient.spawn({ serveArgs: ['--retain', '2', '--state-dir', stateRoot] });
  const workspace = await client.openWorkspace(tree.root);
  const ids: string[] = [];
  for (let index = 0; index < 5; index++) {
    const receipt = await workspace.apply(`--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a${index}\n+a${index + 1}\n`);
    assert.equal(receipt.status, 'applied');
    ids.push(receipt.transactionId);
  }
  await assert.rejects(workspace.sessionDiff(), (error: unknown) => (
    error instanceof RpcError && error.code === -32602 && error.data?.code === 'unknown_transaction' && /past retention/.test(error.message)
  ));
  assert.equal((await workspace.sessionDiff({ since: ids[3] })).diff, 'diff --git a/a.txt b/a.txt\n--- a/a.txt\n+++ b/a.txt\n@@ -1,1 +1,1 @@\n-a4\n+a5\n');
  await workspace.close();
  const [stateDir] = readdirSync(stateRoot).filter((name) => name !== 'retention.json');
  assert.equal(readdirSync(path.join(stateRoot, stateDir!, 'history')).filter((name) => name.endsWith('.record')).length, 2);
});

test('serve --retain with a part given twice is a usage error (exit 2) that records nothing, rather than keeping the last part', () => {
  using tree = createTempTree();
  const stateRoot = path.join(tree.base, 'state');
  const recorded = patchd(['serve', '--retain', '5000,30d', '--state-dir', stateRoot]);
  assert.equal(recorded.code, 0, recorded.stderr);
  const kept = readFileSync(path.join(stateRoot, 'retention.json'), 'utf8');
  const cases = [
    ['5000,100', /the number of transactions is given twice \(5000 and 100\)/],
    ['30d,1h', /the age is given twice \(30d and 1h\)/],
    ['5,7d,1', /the number of transactions is given twice \(5 and 1\)/],
  ] as const;
  for (const [value, problem] of cases) {
    const refused = patchd(['serve', '--retain', value, '--state-dir', stateRoot]);
    assert.equal(refused.code, 2, `${value}: ${refused.stderr}`);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, new RegExp(`^patchd serve: --retain "${value}": ${problem.source}; it takes N \\(transactions\\), Nd or Nh \\(age\\), or one of each: 1000,7d\\nusage: patchd serve `));
    assert.equal(readFileSync(path.join(stateRoot, 'retention.json'), 'utf8'), kept, `${value} left the recorded retention alone`);
  }
});
