/**
 * Reading a long history keeps few files open: the session diff, the transaction list and an
 * undo over 300 records all answer under a limit of 128 descriptors (macOS gives a process
 * 256 by default), where opening every record at once would fail with EMFILE.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { PatchClient } from '../../client/index.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const RECORDS = 300;
const DESCRIPTORS = 128;

function prlimitSkip(): string | false {
  if (process.platform !== 'linux') return 'prlimit is Linux only';
  return spawnSync('prlimit', ['--version']).status === 0 ? false : 'prlimit (util-linux) is not installed';
}

test(`session/diff, transaction/list and undo over ${RECORDS} records under a ${DESCRIPTORS}-descriptor limit`, { skip: prlimitSkip() }, async () => {
  using tree = createTempTree({ 'a.txt': 'line 0\n' });
  await using client = await PatchClient.spawn();
  await using workspace = await client.openWorkspace(tree.root);
  for (let step = 1; step <= RECORDS; step++) {
    const receipt = await workspace.apply(`--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-line ${step - 1}\n+line ${step}\n`);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
  }
  const limited = spawnSync('prlimit', ['--pid', String(client.pid), `--nofile=${DESCRIPTORS}:${DESCRIPTORS}`], { encoding: 'utf8' });
  assert.equal(limited.status, 0, limited.stderr);

  const diff = await workspace.sessionDiff();
  assert.deepEqual(diff.files.map((file) => file.path), ['a.txt']);
  assert.match(diff.diff, /-line 0\n\+line 300\n/);
  const transactions = await workspace.transactions({ limit: RECORDS });
  assert.equal(transactions.length, RECORDS);
  const undone = await workspace.undo(transactions[0]!.transactionId);
  assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
  assert.equal(tree.text('a.txt'), 'line 299\n');
});
