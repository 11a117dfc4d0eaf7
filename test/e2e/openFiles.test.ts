/**
 * patchd keeps few files open at once, so that it works under the descriptor limits processes
 * get (macOS: 256 by default; Linux: 1,024): reading a long history (the session diff, the
 * transaction list and an undo over 300 records, under 128), and a patch of 1,500 new files in
 * as many directories, applied and undone by the CLI under 256 — where a temp, a directory
 * fsync or a record per file open all at once would fail with EMFILE.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { PatchClient } from '../../client/index.ts';
import { BIN } from '../helpers/cli.ts';
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

test('a patch adding 1,500 files in as many directories applies, and is undone, under a 256-descriptor limit', { skip: prlimitSkip() }, () => {
  const FILES = 1_500;
  using tree = createTempTree();
  const lines = ['*** Begin Patch', ...Array.from({ length: FILES }, (_, index) => [`*** Add File: d${index}/sub/f${index}.txt`, `+line ${index}`]).flat(), '*** End Patch'];
  const limited = (args: readonly string[], input = '') => spawnSync('prlimit', ['--nofile=256:256', process.execPath, BIN, ...args], { input, encoding: 'utf8', timeout: 120_000 });
  const applied = limited(['apply', '--json', '-C', tree.root, '-'], `${lines.join('\n')}\n`);
  assert.equal(applied.status, 0, applied.stdout.slice(0, 2000) + applied.stderr);
  const { transactionId } = JSON.parse(applied.stdout) as { transactionId: string };
  assert.equal(tree.text(`d${FILES - 1}/sub/f${FILES - 1}.txt`), `line ${FILES - 1}\n`);
  const undone = limited(['undo', transactionId, '--json', '-C', tree.root]);
  assert.equal(undone.status, 0, undone.stdout.slice(0, 2000) + undone.stderr);
  assert.equal(tree.text('d0/sub/f0.txt'), undefined);
});
