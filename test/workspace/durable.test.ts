import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { nodeDiskCalls, type DiskCalls } from '../../daemon/workspace/diskCalls.ts';
import { DirectorySyncer, isTempName, tempPathFor } from '../../daemon/workspace/durable.ts';
import { deleteFile, planOf, snapshotAndCommit, updateFile, withSandbox } from './fixtures.ts';

test('concurrent directory fsyncs share runs and all settle; failures reach every waiter', async () => {
  await withSandbox({}, async ({ root }) => {
    const syncer = new DirectorySyncer();
    await Promise.all(Array.from({ length: 50 }, () => syncer.sync(root)));
    await syncer.sync(root); // after the burst the slot is free again
    const missing = path.join(root, 'missing');
    const results = await Promise.allSettled([syncer.sync(missing), syncer.sync(missing), syncer.sync(missing)]);
    assert.deepEqual(results.map((result) => result.status), ['rejected', 'rejected', 'rejected']);
    await syncer.pin(root);
    await Promise.all([syncer.sync(root), syncer.sync(root)]);
    await syncer.close();
  });
});

test('temp names sit beside the target, stay under the name limit and are recognised', () => {
  const temp = tempPathFor(path.join('/w', 'dir', 'x'.repeat(300)));
  assert.equal(path.dirname(temp), path.join('/w', 'dir'));
  assert.ok(path.basename(temp).length <= 255);
  assert.ok(isTempName(path.basename(temp)));
  assert.ok(!isTempName('a.patchd.tmp'));
  assert.ok(!isTempName('.x/../y.patchd.tmp'));
});

const shmIsOtherDevice = existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync(os.tmpdir()).dev;

test('a delete reaches a trash on another filesystem by copy', { skip: !shmIsOtherDevice }, async () => {
  const state = await mkdtemp('/dev/shm/patchd-state-test-');
  try {
    await withSandbox({ 'gone.txt': 'bytes to keep\n' }, async (sandbox) => {
      const workspace = await sandbox.open({ stateDir: state });
      const outcome = await snapshotAndCommit(workspace, planOf(deleteFile('gone.txt')));
      assert.ok(outcome.status === 'applied');
      assert.deepEqual(await readdir(sandbox.root), []);
      assert.equal(await readFile(path.join(state, 'trash', outcome.transactionId, 'gone.txt'), 'utf8'), 'bytes to keep\n');
      await workspace.close();
    });
  } finally {
    await rm(state, { recursive: true, force: true });
  }
});

/** Disk calls that record, in order, every fsync (by path), rename and unlink a workspace makes. */
function recordingDisk(): { disk: DiskCalls; calls: string[] } {
  const calls: string[] = [];
  const disk: DiskCalls = {
    open: async (file, flags, mode) => {
      const handle = await nodeDiskCalls.open(file, flags, mode);
      return new Proxy(handle, {
        get(target, key) {
          if (key === 'sync') return async () => { await target.sync(); calls.push(`fsync ${file}`); };
          const value: unknown = Reflect.get(target, key);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    },
    rename: async (from, to) => { await nodeDiskCalls.rename(from, to); calls.push(`rename ${from} ${to}`); },
    renameSync: (from, to) => { nodeDiskCalls.renameSync(from, to); calls.push(`rename ${from} ${to}`); },
    unlink: async (file) => { await nodeDiskCalls.unlink(file); calls.push(`unlink ${file}`); },
  };
  return { disk, calls };
}

test('a commit fsyncs each staged file and the journal before renaming, and the directories before dropping the journal', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'd/b.txt': 'b\n' }, async (sandbox) => {
    const { disk, calls } = recordingDisk();
    const workspace = await sandbox.open({ disk });
    calls.length = 0;
    const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A\n'), updateFile('d/b.txt', 'B\n')));
    assert.equal(outcome.status, 'applied');
    await workspace.close();
    const at = (pattern: RegExp) => calls.findIndex((call) => pattern.test(call));
    const renames = calls.filter((call) => call.startsWith('rename ') && !call.includes('.journal'));
    assert.equal(renames.length, 2);
    for (const rename of renames) {
      const temp = rename.split(' ')[1]!;
      const synced = calls.indexOf(`fsync ${temp}`);
      assert.ok(synced >= 0 && synced < calls.indexOf(rename), `${temp} must be fsynced before it is renamed: ${calls.join('\n')}`);
    }
    const firstRename = calls.indexOf(renames[0]!);
    const journalSynced = at(/^fsync .*\.journal$/);
    assert.ok(journalSynced >= 0 && journalSynced < firstRename, 'the journal is fsynced before the first rename');
    // The journal leaves journal/ as the commit's undo record.
    const dropped = at(/^rename .*\.journal .*\.record$/);
    const lastRename = calls.indexOf(renames[1]!);
    for (const directory of [sandbox.root, path.join(sandbox.root, 'd')]) {
      const synced = calls.indexOf(`fsync ${directory}`, lastRename);
      assert.ok(synced > lastRename && synced < dropped, `${directory} is fsynced after the renames, before the journal is dropped`);
    }
    assert.ok(calls.lastIndexOf(`fsync ${path.join(sandbox.state, 'journal')}`) > dropped, 'the journal drop is made durable');
  });
});
