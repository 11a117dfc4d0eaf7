/** Undo records in the workspace: partial transactions, and a SIGKILL during an undo (the tree wholly before or after it, the records agreeing). */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdir, truncate } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'node:test';
import { undoTransaction } from '../../daemon/server/undoPatch.ts';
import { CRASH_PLAN, CRASH_TREE, listTree, planOf, snapshotAndCommit, updateFile, withSandbox, type Sandbox } from './fixtures.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const undoCrashChild = fileURLToPath(new URL('./undoCrashChild.ts', import.meta.url));

function undoAndDie(sandbox: Sandbox, transactionId: string, killAt: number): void {
  const args = ['--import', 'tsx', undoCrashChild, sandbox.root, sandbox.state, transactionId, String(killAt)];
  const child = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(child.signal, 'SIGKILL', child.stderr);
}

const signal = new AbortController().signal;

for (const killAt of [0, 2, 4]) {
  test(`an undo killed before its rename ${killAt} of 5 leaves the applied tree, no record of the undo, and can run again`, async () => {
    await withSandbox(CRASH_TREE, async (sandbox) => {
      const before = await listTree(sandbox.root);
      const workspace = await sandbox.open();
      const applied = await snapshotAndCommit(workspace, CRASH_PLAN);
      assert.equal(applied.status, 'applied');
      assert.ok(applied.status === 'applied');
      const after = await listTree(sandbox.root);
      await workspace.close();

      undoAndDie(sandbox, applied.transactionId, killAt);
      const reopened = await sandbox.open();
      assert.deepEqual(await listTree(sandbox.root), after);
      assert.deepEqual((await reopened.transactions(10)).map((entry) => entry.transactionId), [applied.transactionId]);
      const undone = await undoTransaction({ workspaceId: 'ws', transactionId: applied.transactionId }, { workspace: reopened, signal });
      assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
      assert.deepEqual(await listTree(sandbox.root), before);
      await reopened.close();
    });
  });
}

test('an undo killed half-way is rolled back, though the commit it undoes started from the post-images of the paths it had yet to rename: that one began before it', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    const workspace = await sandbox.open();
    const applied = await snapshotAndCommit(workspace, planOf(updateFile('two.txt', '2\n'), updateFile('three.txt', '3\n')));
    assert.ok(applied.status === 'applied');
    const after = await listTree(sandbox.root);
    await workspace.close();

    undoAndDie(sandbox, applied.transactionId, 1);
    const reopened = await sandbox.open();
    assert.deepEqual(reopened.recovered.map(({ outcome, paths, conflicts }) => ({ outcome, count: paths.length, conflicts })), [{ outcome: 'rolled_back', count: 1, conflicts: [] }]);
    assert.deepEqual(await listTree(sandbox.root), after);
    assert.deepEqual((await reopened.transactions(10)).map((entry) => entry.transactionId), [applied.transactionId], 'no record of the undo');
    await reopened.close();
  });
});

test('a partial transaction lists as partial with its committed files, and its undo restores exactly those', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, async (sandbox) => {
    const workspace = await sandbox.open({ hooks: { beforeRename: (_index, path) => { if (path === 'b.txt') throw new Error('injected'); } } });
    const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A\n'), updateFile('b.txt', 'B\n')), false);
    assert.equal(outcome.status, 'partial');
    assert.ok(outcome.status === 'partial');
    const [listed] = await workspace.transactions(5);
    assert.deepEqual({ status: listed?.status, files: listed?.files }, { status: 'partial', files: [{ path: 'a.txt', op: 'update' }] });
    const undone = await undoTransaction({ workspaceId: 'ws', transactionId: outcome.transactionId }, { workspace, signal });
    assert.deepEqual(undone.files.map((file) => file.path), ['a.txt']);
    assert.deepEqual(await listTree(sandbox.root), { 'a.txt': 'file:a\n', 'b.txt': 'file:b\n' });
    await workspace.close();
  });
});

test('a transaction one of whose records is damaged is not undone in part: io_error naming the transaction and the record, nothing written', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A\n'), updateFile('b.txt', 'B\n')), false);
    assert.ok(outcome.status === 'applied');
    await workspace.settled(); // each one-file unit's record is written after the report
    const history = path.join(sandbox.state, 'history');
    const records = (await readdir(history)).filter((name) => name.includes(outcome.transactionId)).sort();
    assert.equal(records.length, 2, 'one record per file with atomic: false');
    await truncate(path.join(history, records[1]!), 20);
    const undone = await undoTransaction({ workspaceId: 'ws', transactionId: outcome.transactionId }, { workspace, signal });
    assert.equal(undone.error?.code, 'io_error');
    assert.ok(undone.error?.message.includes(outcome.transactionId), undone.error?.message);
    assert.ok(undone.error?.message.includes(`history/${records[1]} has no header line`), undone.error?.message);
    assert.deepEqual(await listTree(sandbox.root), { 'a.txt': 'file:A\n', 'b.txt': 'file:B\n' });
    await workspace.close();
  });
});
