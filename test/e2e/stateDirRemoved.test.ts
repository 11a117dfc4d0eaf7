/**
 * The state dir removed under a live daemon, by hand or by a cleaner of old files in a temp dir:
 * the commit log would be written to a deleted file, so a commit could be reported applied with
 * no record and nothing for recovery to read. The commit that finds it gone is refused instead,
 * saying why, with the tree unchanged; the state dir is made anew, and the next patches apply
 * and undo without reopening the workspace (which an MCP host cannot do). A log segment removed
 * alone is said to be that, and only replaced.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { PatchClient, type Workspace } from '../../client/index.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const change = (file: string, from: string, to: string): string => `--- a/${file}\n+++ b/${file}\n@@ -1,2 +1,2 @@\n hello\n-${from}\n+${to}\n`;
const REMADE = /patchd made the workspace's state directory anew \(the undo history before now is lost\); send the patch again\.$/;

/** A daemon with a workspace of a.txt, b.txt and c.txt open, a.txt and c.txt patched once (so its state dir holds a record). */
async function openedAndPatched() {
  const tree = createTempTree({ 'a.txt': 'hello\nworld\n', 'b.txt': 'hello\nworld\n', 'c.txt': 'hello\nworld\n' });
  const stateRoot = join(tree.outside, 'state');
  const daemon = await PatchClient.spawn({ env: { ...process.env, PATCHD_STATE_DIR: stateRoot } });
  const workspace = await daemon.openWorkspace(tree.root);
  // Two files: a commit of several is durable, its done frame included, before it is reported (a one-file commit's done
  // frame follows its report, and could land after the removals below and find them first).
  assert.equal((await workspace.apply(change('a.txt', 'world', 'there') + change('c.txt', 'world', 'there'))).status, 'applied');
  // The list waits for the commit's record, written after its report: the removals below must come after it.
  assert.equal((await workspace.transactions()).length, 1);
  return {
    tree, workspace, stateRoot,
    removeHistory: () => rmSync(join(stateRoot, readdirSync(stateRoot)[0]!, 'history'), { recursive: true, force: true }),
    removeLogSegments: () => {
      const log = join(stateRoot, readdirSync(stateRoot)[0]!, 'log');
      for (const segment of readdirSync(log)) rmSync(join(log, segment));
    },
    async [Symbol.asyncDispose]() {
      await daemon[Symbol.asyncDispose]();
      tree[Symbol.dispose]();
    },
  };
}

/** `patch` applies, is listed newest, and undoes: the state dir works again. */
async function appliesListsAndUndoes(workspace: Workspace, patch: string): Promise<void> {
  const applied = await workspace.apply(patch);
  assert.equal(applied.status, 'applied', JSON.stringify(applied.error));
  assert.equal((await workspace.transactions())[0]?.transactionId, applied.transactionId);
  assert.equal((await workspace.undo(applied.transactionId)).status, 'applied');
}

describe('a state dir removed while the workspace is open', () => {
  test('all of it: the commit that finds it gone is refused saying so, nothing written; later commits apply, list and undo', async () => {
    await using opened = await openedAndPatched();
    const { tree, workspace } = opened;
    rmSync(opened.stateRoot, { recursive: true, force: true });
    const refused = await workspace.apply(change('b.txt', 'world', 'one file'));
    assert.equal(refused.status, 'rejected');
    assert.equal(refused.error?.code, 'io_error');
    assert.match(refused.error?.message ?? '', /state directory .* was removed while the workspace was open/);
    assert.match(refused.error?.message ?? '', REMADE);
    assert.equal(tree.text('b.txt'), 'hello\nworld\n');
    assert.deepEqual(readdirSync(tree.root).sort(), ['a.txt', 'b.txt', 'c.txt'], 'no temp left');

    const one = await workspace.apply(change('b.txt', 'world', 'one file'));
    assert.equal(one.status, 'applied', JSON.stringify(one.error));
    const two = await workspace.apply(change('a.txt', 'there', 'again') + change('b.txt', 'one file', 'two files'));
    assert.equal(two.status, 'applied', JSON.stringify(two.error));
    assert.deepEqual((await workspace.transactions()).map((entry) => entry.transactionId), [two.transactionId, one.transactionId]);
    assert.equal((await workspace.undo(two.transactionId)).status, 'applied');
    assert.equal(tree.text('a.txt'), 'hello\nthere\n');
    assert.equal(tree.text('b.txt'), 'hello\none file\n');
  });

  test('its history only (a cleaner took the old records and their folder): the commit that needs it is refused, the next applies', async () => {
    await using opened = await openedAndPatched();
    const { tree, workspace } = opened;
    opened.removeHistory();

    // Two files: the record is written before the report, so its failure rolls the commit back.
    const both = change('a.txt', 'there', 'again') + change('b.txt', 'world', 'again');
    const refused = await workspace.apply(both);
    assert.equal(refused.status, 'rejected');
    assert.equal(refused.error?.code, 'io_error');
    assert.match(refused.error?.message ?? '', REMADE);
    assert.equal(tree.text('a.txt'), 'hello\nthere\n');
    assert.equal(tree.text('b.txt'), 'hello\nworld\n');

    await appliesListsAndUndoes(workspace, both);
    assert.equal(tree.text('b.txt'), 'hello\nworld\n');
  });

  test('its history only, found by a one-file commit after its report: that commit stands, and the folder is back, with its record, before the next', async () => {
    await using opened = await openedAndPatched();
    const { tree, workspace } = opened;
    opened.removeHistory();

    // Reported before its record is written (see transaction.ts): the record fails after the report.
    const reported = await workspace.apply(change('b.txt', 'world', 'reported'));
    assert.equal(reported.status, 'applied');
    assert.equal(tree.text('b.txt'), 'hello\nreported\n');
    assert.deepEqual((await workspace.transactions()).map((entry) => entry.transactionId), [reported.transactionId], 'its record written into the folder made anew');
    await appliesListsAndUndoes(workspace, change('a.txt', 'there', 'again') + change('b.txt', 'reported', 'again'));
    assert.equal(tree.text('a.txt'), 'hello\nthere\n');
  });

  test('its log segment only: the commit that finds it gone is refused naming it, with no remake; the next writes a new segment and applies', async () => {
    await using opened = await openedAndPatched();
    const { tree, workspace } = opened;
    opened.removeLogSegments();
    const refused = await workspace.apply(change('b.txt', 'world', 'again'));
    assert.equal(refused.status, 'rejected');
    assert.equal(refused.error?.code, 'io_error');
    assert.match(refused.error?.message ?? '', /commit log segment .*\.log was removed while the workspace was open; the next commit writes a new one/);
    assert.doesNotMatch(refused.error?.message ?? '', REMADE);
    assert.equal(tree.text('b.txt'), 'hello\nworld\n');

    const applied = await workspace.apply(change('b.txt', 'world', 'again'));
    assert.equal(applied.status, 'applied', JSON.stringify(applied.error));
    const [first] = (await workspace.transactions()).slice(-1);
    assert.equal((await workspace.undo(first!.transactionId)).status, 'applied', 'the history before the removal is kept');
    assert.equal(tree.text('a.txt'), 'hello\nworld\n');
  });
});
