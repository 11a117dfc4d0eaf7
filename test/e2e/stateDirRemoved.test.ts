/**
 * The state dir removed under a live daemon (by hand, or by a cleaner of temp directories): its
 * commit log would be written to a deleted file, so a commit could be reported applied with no
 * record and nothing for recovery to read. Every commit is refused instead, saying why, with the
 * tree unchanged; a reopen of the workspace makes the state dir anew and patches apply and undo.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { PatchClient } from '../../client/index.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const change = (file: string, from: string, to: string): string => `--- a/${file}\n+++ b/${file}\n@@ -1,2 +1,2 @@\n hello\n-${from}\n+${to}\n`;
const REMOVED = /state directory .* was removed while the workspace was open; close and reopen the workspace/;

test('a state dir removed while the workspace is open: every commit refused and nothing written; a reopen makes it anew', async () => {
  using tree = createTempTree({ 'a.txt': 'hello\nworld\n', 'b.txt': 'hello\nworld\n' });
  const stateRoot = join(tree.outside, 'state');
  await using daemon = await PatchClient.spawn({ env: { ...process.env, PATCHD_STATE_DIR: stateRoot } });
  const workspace = await daemon.openWorkspace(tree.root);
  assert.equal((await workspace.apply(change('a.txt', 'world', 'there'))).status, 'applied');

  rmSync(stateRoot, { recursive: true, force: true });
  const refusals = [
    await workspace.apply(change('b.txt', 'world', 'one file')),
    await workspace.apply(change('a.txt', 'there', 'again') + change('b.txt', 'world', 'two files')),
    await workspace.apply(change('b.txt', 'world', 'later')),
  ];
  for (const receipt of refusals) {
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'io_error');
    assert.match(receipt.error?.message ?? '', REMOVED);
  }
  assert.equal(tree.text('a.txt'), 'hello\nthere\n');
  assert.equal(tree.text('b.txt'), 'hello\nworld\n');
  assert.deepEqual(readdirSync(tree.root).sort(), ['a.txt', 'b.txt'], 'no temp left');
  await workspace.close();

  const reopened = await daemon.openWorkspace(tree.root);
  const applied = await reopened.apply(change('b.txt', 'world', 'after reopen'));
  assert.equal(applied.status, 'applied', JSON.stringify(applied.error));
  assert.ok(existsSync(stateRoot), 'the state dir is made anew');
  const [latest] = await reopened.transactions();
  assert.equal(latest?.transactionId, applied.transactionId);
  assert.equal((await reopened.undo(applied.transactionId!)).status, 'applied');
  assert.equal(tree.text('b.txt'), 'hello\nworld\n');
  await reopened.close();
});
