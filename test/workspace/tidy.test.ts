/**
 * Tidy trees under races and crashes: a directory emptied by one commit is removed only while it
 * is empty, a commit writing into it at that instant still lands, and a commit rolled forward
 * after a crash leaves no emptied directory behind. A directory tidied away comes back with its
 * own mode and owner however it is made again: by an undo, by a rollback or a recovery after
 * another commit tidied it away, by a commit whose directory was removed meanwhile.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmdirSync, symlinkSync, unlinkSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';
import { undoTransaction } from '../../daemon/server/undoPatch.ts';
import { nodeDiskCalls, type DiskCalls } from '../../daemon/workspace/diskCalls.ts';
import type { JournalRecord } from '../../daemon/workspace/journal.ts';
import type { Workspace } from '../../daemon/workspace/workspace.ts';
import {
  addFile, commitAndDie, deleteFile, listTree, ownDirectoryModes, ownersOf, planOf, snapshotAndCommit, updateFile, withSandbox, type Sandbox,
} from './fixtures.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const crashChild = fileURLToPath(new URL('./crashChild.ts', import.meta.url));
/** The tree of crashChild's tidy plans. */
const TIDY_TREE = { 'two.txt': 'two\n', 'd/e/last.txt': 'last\n', 'd/keep/k.txt': 'k\n' };

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

test('a commit rolled back after another commit tidied away the directory it had emptied puts the directory back with its file, its mode and owner', async () => {
  await withSandbox({ 'dir/a.txt': 'a\n', 'dir/other.txt': 'other\n', 'b.txt': 'b\n' }, async (sandbox) => {
    const owners = ownDirectoryModes(sandbox.root, { dir: 0o2750 }, 'dir');
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
    assert.deepEqual(ownersOf(sandbox.root, ['dir']), owners);
    await workspace.close();
  });
});

test('a commit killed after emptying a directory, which another commit tidied away before the kill, is rolled back with the directory made again with its mode and owner', async () => {
  await withSandbox(TIDY_TREE, async (sandbox) => {
    const owners = ownDirectoryModes(sandbox.root, { 'd/e': 0o700 }, 'd/e');
    const before = await listTree(sandbox.root);
    // Killed before its second rename: d/e/last.txt is in the trash, two.txt not yet updated.
    commitAndDie(sandbox, 1, 'tidyFirst');
    // What a commit deleting another file of d/e would have tidied away meanwhile.
    rmdirSync(path.join(sandbox.root, 'd/e'));
    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered.map(({ outcome, conflicts }) => ({ outcome, conflicts })), [{ outcome: 'rolled_back', conflicts: [] }]);
    assert.deepEqual(await listTree(sandbox.root), before);
    assert.deepEqual(ownersOf(sandbox.root, ['d/e']), owners);
    await workspace.close();
  });
});

/** The header of the undo record of `transactionId`'s commit. */
async function recordHeader(sandbox: Sandbox, transactionId: string): Promise<JournalRecord> {
  const history = path.join(sandbox.state, 'history');
  const [name] = (await readdir(history)).filter((file) => file.includes(transactionId));
  const bytes = await readFile(path.join(history, name!));
  return JSON.parse(bytes.subarray(0, bytes.indexOf(0x0a)).toString('utf8')) as JournalRecord;
}

test('a commit keeps the modes of the directories above the paths it takes away, not past a link, and none when it takes nothing away', async () => {
  await withSandbox({ 'a/b/gone.txt': 'g\n', 'real/x.txt': 'x\n', 'top.txt': 'top\n' }, async (sandbox) => {
    symlinkSync('../real', path.join(sandbox.root, 'a/link'));
    const owners = ownDirectoryModes(sandbox.root, { a: 0o750, 'a/b': 0o700 }, 'a/b');
    const workspace = await sandbox.open();
    const updated = await snapshotAndCommit(workspace, planOf(updateFile('top.txt', 'TOP\n')));
    assert.equal(updated.status, 'applied', JSON.stringify(updated));
    // A one-file update is recorded once settled.
    await workspace.settled();
    assert.equal((await recordHeader(sandbox, updated.transactionId)).directoryOwners, undefined);
    const deleted = await snapshotAndCommit(workspace, planOf(deleteFile('a/b/gone.txt'), deleteFile('a/link/x.txt')));
    assert.equal(deleted.status, 'applied', JSON.stringify(deleted));
    const kept = (await recordHeader(sandbox, deleted.transactionId)).directoryOwners;
    assert.deepEqual(kept, [{ path: 'a/b', owner: owners['a/b'] }, { path: 'a', owner: owners.a }]);
    await workspace.close();
  });
});

const signal = new AbortController().signal;
const PRIVATE_TREE = { 'private/deep/only.txt': 'only\n', 'b.txt': 'b\n' };
const PRIVATE = { private: 0o700, 'private/deep': 0o2750 };

test('directories a commit tidied away come back with their modes and owners when it is undone; redone and undone again, alike', async () => {
  await withSandbox(PRIVATE_TREE, async (sandbox) => {
    const owners = ownDirectoryModes(sandbox.root, PRIVATE, 'private/deep');
    const before = await listTree(sandbox.root);
    const workspace = await sandbox.open();
    const deleted = await snapshotAndCommit(workspace, planOf(deleteFile('private/deep/only.txt')));
    assert.equal(deleted.status, 'applied', JSON.stringify(deleted));
    assert.deepEqual(await listTree(sandbox.root), { 'b.txt': 'file:b\n' }, 'both directories tidied away');
    let transactionId = deleted.transactionId;
    for (const expected of [before, { 'b.txt': 'file:b\n' }, before]) {
      const undone = await undoTransaction({ workspaceId: 'ws', transactionId }, { workspace, signal });
      assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
      assert.deepEqual(await listTree(sandbox.root), expected);
      transactionId = undone.transactionId;
    }
    assert.deepEqual(ownersOf(sandbox.root, Object.keys(PRIVATE)), owners);
    await workspace.close();
  });
});

test('directories an undo makes again, removed before it writes into them (another commit rolled back, say), are made once more with their modes and owners', async () => {
  await withSandbox(PRIVATE_TREE, async (sandbox) => {
    const owners = ownDirectoryModes(sandbox.root, PRIVATE, 'private/deep');
    let armed = false;
    const deep = path.join(sandbox.root, 'private', 'deep');
    const disk: DiskCalls = {
      ...nodeDiskCalls,
      openSync: (file, flags, mode) => {
        if (armed && file.startsWith(deep + path.sep)) {
          armed = false;
          rmdirSync(deep);
          rmdirSync(path.dirname(deep));
        }
        return nodeDiskCalls.openSync(file, flags, mode);
      },
    };
    const workspace = await sandbox.open({ disk });
    const deleted = await snapshotAndCommit(workspace, planOf(deleteFile('private/deep/only.txt')));
    assert.equal(deleted.status, 'applied', JSON.stringify(deleted));
    armed = true;
    const undone = await undoTransaction({ workspaceId: 'ws', transactionId: deleted.transactionId }, { workspace, signal });
    assert.equal(armed, false, 'the directories were removed before the undo wrote into them');
    assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
    assert.deepEqual(await listTree(sandbox.root), { 'b.txt': 'file:b\n', private: 'dir', 'private/deep': 'dir', 'private/deep/only.txt': 'file:only\n' });
    assert.deepEqual(ownersOf(sandbox.root, Object.keys(PRIVATE)), owners);
    await workspace.close();
  });
});

test('a commit that emptied directories and was rolled forward after a crash leaves them removed', async () => {
  await withSandbox(TIDY_TREE, async (sandbox) => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', crashChild, sandbox.root, sandbox.state, 'drop', 'tidy'], { cwd: repoRoot, encoding: 'utf8' });
    assert.equal(child.signal, 'SIGKILL', child.stderr);
    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered.map((report) => report.outcome), ['rolled_forward']);
    assert.deepEqual(await listTree(sandbox.root), { d: 'dir', 'd/keep': 'dir', 'd/keep/k.txt': 'file:k\n', 'two.txt': 'file:2\n' });
    await workspace.close();
  });
});
