/**
 * Tidy trees under races and crashes: a directory emptied by one commit is removed only while it
 * is empty, a commit writing into it at that instant still lands, and a commit rolled forward
 * after a crash leaves no emptied directory behind.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmdirSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { nodeDiskCalls, type DiskCalls } from '../../daemon/workspace/diskCalls.ts';
import type { Workspace } from '../../daemon/workspace/workspace.ts';
import { addFile, deleteFile, listTree, planOf, snapshotAndCommit, updateFile, withSandbox } from './fixtures.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const crashChild = fileURLToPath(new URL('./crashChild.ts', import.meta.url));

test('a commit adding a file to a directory that another commit empties and tidies meanwhile still lands', async () => {
  await withSandbox({ 'dir/old.txt': 'old\n' }, async (sandbox) => {
    let raced = false;
    // Right before the adding commit creates its temp in dir/ (checked to exist), dir/ is emptied
    // and tidied away: what a concurrent commit deleting dir/old.txt leaves. Temps are created
    // synchronously, so the other commit's disk effects are made here, in that instant.
    const disk: DiskCalls = {
      ...nodeDiskCalls,
      openSync: (file, flags, mode) => {
        if (!raced && file.startsWith(path.join(sandbox.root, 'dir') + path.sep)) {
          raced = true;
          unlinkSync(path.join(sandbox.root, 'dir', 'old.txt'));
          rmdirSync(path.join(sandbox.root, 'dir'));
        }
        return nodeDiskCalls.openSync(file, flags, mode);
      },
    };
    const workspace = await sandbox.open({ disk });
    const added = await snapshotAndCommit(workspace, planOf(addFile('dir/new.txt', 'new\n')));
    assert.equal(raced, true);
    assert.equal(added.status, 'applied', JSON.stringify(added));
    assert.deepEqual(await listTree(sandbox.root), { dir: 'dir', 'dir/new.txt': 'file:new\n' });
    await workspace.close();
  });
});

test('a commit rolled back after another commit tidied away the directory it had emptied puts the directory back with its file', async () => {
  await withSandbox({ 'dir/a.txt': 'a\n', 'dir/other.txt': 'other\n', 'b.txt': 'b\n' }, async (sandbox) => {
    let workspace: Workspace | undefined;
    let raced = false;
    const beforeRename = async (index: number): Promise<void> => {
      if (raced || index !== 1) return;
      raced = true;
      // dir/a.txt is in the trash now; this commit empties dir/ and tidies it away.
      const deleted = await snapshotAndCommit(workspace!, planOf(deleteFile('dir/other.txt')));
      assert.equal(deleted.status, 'applied', JSON.stringify(deleted));
      throw new Error('injected failure');
    };
    workspace = await sandbox.open({ hooks: { beforeRename } });
    const failed = await snapshotAndCommit(workspace, planOf(deleteFile('dir/a.txt'), updateFile('b.txt', 'B\n')));
    assert.equal(raced, true);
    assert.equal(failed.status, 'rejected');
    assert.doesNotMatch(JSON.stringify(failed), /Rolling back also failed/);
    assert.deepEqual(await listTree(sandbox.root), { 'b.txt': 'file:b\n', dir: 'dir', 'dir/a.txt': 'file:a\n' });
    await workspace.close();
  });
});

test('a commit that emptied directories and was rolled forward after a crash leaves them removed', async () => {
  await withSandbox({ 'two.txt': 'two\n', 'd/e/last.txt': 'last\n', 'd/keep/k.txt': 'k\n' }, async (sandbox) => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', crashChild, sandbox.root, sandbox.state, 'drop', 'tidy'], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(child.signal, 'SIGKILL', child.stderr);
    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered.map((report) => report.outcome), ['rolled_forward']);
    assert.deepEqual(await listTree(sandbox.root), { d: 'dir', 'd/keep': 'dir', 'd/keep/k.txt': 'file:k\n', 'two.txt': 'file:2\n' });
    await workspace.close();
  });
});
