import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { DirectorySyncer, isTempName, tempPathFor } from '../../daemon/workspace/durable.ts';
import { deleteFile, planOf, snapshotAndCommit, withSandbox } from './fixtures.ts';

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
