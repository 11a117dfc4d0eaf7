import assert from 'node:assert/strict';
import { existsSync, statSync, symlinkSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { nodeDiskCalls, SYNC_IO_MAX_BYTES, writeAll, writeAllSync, type DiskCalls } from '../../daemon/workspace/diskCalls.ts';
import { DirectorySyncer, isTempName, tempPathFor } from '../../daemon/workspace/durable.ts';
import type { LockLease } from '../../daemon/workspace/workspace.ts';
import { deleteFile, planOf, recordingDisk, snapshotAndCommit, updateFile, withSandbox } from './fixtures.ts';

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
  assert.notEqual(tempPathFor('/w/a'), tempPathFor('/w/a'));
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

test('a 2-file commit: intent and temps durable before the renames, the record after the intent, directories before done, done durable before it is reported; no journal file', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'd/b.txt': 'b\n' }, async (sandbox) => {
    const { disk, calls } = recordingDisk();
    const workspace = await sandbox.open({ disk });
    calls.length = 0;
    const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A\n'), updateFile('d/b.txt', 'B\n')));
    assert.equal(outcome.status, 'applied');
    calls.push('reported');
    await workspace.close();
    const text = calls.join('\n');
    const at = (pattern: RegExp, from = 0) => calls.findIndex((call, index) => index >= from && pattern.test(call));
    const renames = calls.filter((call) => call.startsWith('rename ') && call.includes('.patchd.tmp'));
    assert.equal(renames.length, 2);
    for (const rename of renames) {
      const temp = rename.split(' ')[1]!;
      const synced = calls.indexOf(`fsync ${temp}`);
      assert.ok(synced >= 0 && synced < calls.indexOf(rename), `${temp} must be fsynced before it is renamed:\n${text}`);
    }
    const firstRename = calls.indexOf(renames[0]!);
    const lastRename = calls.indexOf(renames.at(-1)!);
    const intent = at(/^log intent /);
    const intentSynced = at(/^fdatasync .*\.log$/, intent);
    assert.ok(intent >= 0 && intentSynced < firstRename, `the intent is logged and fdatasynced before the first rename:\n${text}`);
    const recordOpened = at(/^open .*\.record$/);
    const recordWritten = at(/^closed .*\.record$/);
    const done = at(/^log done /);
    const doneSynced = at(/^fdatasync .*\.log$/, done);
    const reported = calls.indexOf('reported');
    for (const directory of [sandbox.root, path.join(sandbox.root, 'd')]) {
      const synced = calls.indexOf(`fsync ${directory}`, lastRename);
      assert.ok(synced > lastRename && synced < done, `${directory} is fsynced after the renames, before the commit is logged done:\n${text}`);
    }
    assert.ok(recordOpened > intentSynced && recordWritten < done, `the record is written once the intent is durable, before the commit is logged done:\n${text}`);
    assert.ok(!calls.some((call) => call.startsWith('rename ') && call.endsWith('.record')), `the record is written under its own name, not renamed there:\n${text}`);
    assert.ok(done < reported && doneSynced > done && doneSynced < reported, `done is written and fdatasynced before the commit is reported applied:\n${text}`);
    const record = calls[recordWritten]!.split(' ')[1]!;
    const recordSynced = calls.indexOf(`fsync ${record}`, reported);
    const logDropped = at(/^unlink .*\.log$/, reported);
    assert.ok(recordSynced > reported && recordSynced < logDropped, `the checkpoint fsyncs the record before the log segment goes:\n${text}`);
    const historySynced = calls.indexOf(`fsync ${path.join(sandbox.state, 'history')}`, recordSynced);
    assert.ok(historySynced > recordSynced && historySynced < logDropped, `and the history directory:\n${text}`);
    assert.ok(!calls.some((call) => call.includes('.journal')), `no journal file:\n${text}`);
  });
});

test('a one-file commit: its intent, post-image included, durable before the rename of an unsynced temp; reported once renamed, before its record is written, the file and its directory fsynced and it is logged done', { timeout: 120_000 }, async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    const { disk, calls } = recordingDisk();
    let releaseFsyncs!: () => void;
    const fsyncsReleased = new Promise<void>((resolve) => (releaseFsyncs = resolve));
    // Every fsync of a file in the tree waits until the commit has been reported: one awaited before the report would hang this test.
    const gated: DiskCalls = {
      ...disk,
      fsync: async (fd) => {
        if (calls.some((call) => call.startsWith('rename ') && call.includes('.patchd.tmp'))) await fsyncsReleased;
        return disk.fsync(fd);
      },
    };
    const workspace = await sandbox.open({ disk: gated });
    calls.length = 0;
    const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A\n')));
    assert.equal(outcome.status, 'applied');
    calls.push('reported');
    releaseFsyncs();
    await workspace.settled();
    calls.push('settled');
    await workspace.close();
    const text = calls.join('\n');
    const at = (pattern: RegExp, from = 0) => calls.findIndex((call, index) => index >= from && pattern.test(call));
    const rename = at(/^rename .*\.patchd\.tmp /);
    const temp = calls[rename]!.split(' ')[1]!;
    const intent = at(/^log intent /);
    const reported = calls.indexOf('reported');
    assert.ok(intent >= 0 && at(/^fdatasync .*\.log$/, intent) < rename, `the intent is logged and fdatasynced before the rename:\n${text}`);
    const fileSynced = calls.indexOf(`fsync ${temp}`);
    const directorySynced = calls.indexOf(`fsync ${sandbox.root}`, rename);
    const done = at(/^log done /);
    assert.ok(fileSynced > reported && directorySynced > reported, `the file and its directory are fsynced after the report:\n${text}`);
    const recordWritten = at(/^closed .*\.record$/);
    assert.ok(at(/^open .*\.record$/) > rename && recordWritten > rename, `the record is written after the rename:\n${text}`);
    assert.ok(done > fileSynced && done > directorySynced && done > recordWritten && done < calls.indexOf('settled'), `then it is logged done:\n${text}`);
    assert.ok(!calls.some((call) => call.includes('.journal')), `no journal file:\n${text}`);
    assert.deepEqual(await readdir(path.join(sandbox.state, 'log')), [], 'the log is checkpointed away on close');
  });
});

test('the path of a one-file commit reported before its fsyncs stays locked until it is logged done: the next commit of the file logs its intent after that', { timeout: 120_000 }, async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    const { disk, calls } = recordingDisk();
    let releaseFsyncs!: () => void;
    const fsyncsReleased = new Promise<void>((resolve) => (releaseFsyncs = resolve));
    const gated: DiskCalls = { ...disk, fsync: async (fd) => (await fsyncsReleased, disk.fsync(fd)) };
    const workspace = await sandbox.open({ disk: gated });
    const commitLocked = async (content: string) => {
      using _lease = await workspace.lock(['a.txt']);
      const snapshots = await workspace.snapshot(['a.txt'], { locked: true });
      assert.ok(snapshots.ok);
      return workspace.commit(planOf(updateFile('a.txt', content)), { atomic: true, snapshots: snapshots.value });
    };
    assert.equal((await commitLocked('A\n')).status, 'applied');
    const second = workspace.lock(['a.txt']);
    await new Promise<void>((resolve) => setImmediate(resolve));
    let granted = false;
    void second.then(() => (granted = true));
    await new Promise<void>((resolve) => setImmediate(resolve));
    assert.equal(granted, false, 'the path is still locked while the first commit is not durable');
    releaseFsyncs();
    (await second).release();
    assert.equal((await commitLocked('AA\n')).status, 'applied');
    await workspace.close();
    const text = calls.join('\n');
    const [firstIntent, secondIntent] = calls.filter((call) => call.startsWith('log intent '));
    const firstDone = calls.indexOf(`log done ${firstIntent!.split(' ')[2]}`);
    assert.ok(firstDone >= 0 && firstDone < calls.indexOf(secondIntent!), `the first commit is logged done before the second logs its intent:\n${text}`);
    assert.equal(await readFile(path.join(sandbox.root, 'a.txt'), 'utf8'), 'AA\n');
  });
});

test('a one-file commit named through a symlinked directory keeps the file locked until it is logged done: a request for its real path, waiting since before the commit, still waits', { timeout: 120_000 }, async () => {
  await withSandbox({ 'real/a.txt': 'a\n' }, async (sandbox) => {
    symlinkSync('real', path.join(sandbox.root, 'link'));
    let releaseFsyncs!: () => void;
    const fsyncsReleased = new Promise<void>((resolve) => (releaseFsyncs = resolve));
    const workspace = await sandbox.open({ disk: { ...nodeDiskCalls, fsync: async (fd) => (await fsyncsReleased, nodeDiskCalls.fsync(fd)) } });
    try {
      let granted = false;
      let other: Promise<LockLease> | undefined;
      {
        using _lease = await workspace.lock(['link/a.txt']);
        other = workspace.lock(['real/a.txt']).then((lease) => ((granted = true), lease));
        const snapshots = await workspace.snapshot(['link/a.txt'], { locked: true });
        assert.ok(snapshots.ok);
        const outcome = await workspace.commit(planOf(updateFile('link/a.txt', 'A\n')), { atomic: true, snapshots: snapshots.value });
        assert.equal(outcome.status, 'applied');
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
      assert.equal(granted, false, 'the real path waits while the commit through the link is not durable');
      releaseFsyncs();
      (await other).release();
    } finally {
      releaseFsyncs();
      await workspace.close();
    }
  });
});

test('a one-file commit whose done frame fails its fdatasync after the report logs done again in another segment, and the log still checkpoints', async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    let logSyncs = 0;
    // The first fdatasync of the log makes the intent durable; the second is the done frame's.
    const { disk, calls } = recordingDisk((file) => file.endsWith('.log') && ++logSyncs === 2);
    const workspace = await sandbox.open({ disk });
    const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A\n')));
    assert.equal(outcome.status, 'applied');
    await workspace.close();
    const text = calls.join('\n');
    const failed = calls.findIndex((call) => call.startsWith('failed fdatasync'));
    const dones = calls.filter((call) => call.startsWith('log done '));
    assert.ok(failed >= 0 && dones.length === 2, `done is written twice:\n${text}`);
    const firstSegment = calls[failed]!.split(' ')[2]!;
    const again = calls.indexOf(dones[1]!, failed);
    const synced = calls.findIndex((call, index) => index > again && call.startsWith('fdatasync ') && call.endsWith('.log'));
    assert.ok(again > failed && synced > again && calls[synced] !== `fdatasync ${firstSegment}`, `the second done is fdatasynced in another segment:\n${text}`);
    assert.deepEqual(await readdir(path.join(sandbox.state, 'log')), [], 'both segments are checkpointed and gone');
    assert.equal(await readFile(path.join(sandbox.root, 'a.txt'), 'utf8'), 'A\n');
    const reopened = await sandbox.open();
    assert.deepEqual(reopened.recovered, []);
    assert.equal((await reopened.transactions(5)).length, 1);
    await reopened.close();
  });
});

test('a commit whose writes come back short writes every byte: staged content and undo record', async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    let shortWrites = 0;
    // Each writev writes at most 3 bytes, as a write interrupted by a signal may.
    const disk: DiskCalls = {
      ...nodeDiskCalls,
      writevSync: (fd, chunks) => {
        shortWrites += 1;
        return nodeDiskCalls.writevSync(fd, [Buffer.concat(chunks).subarray(0, 3)]);
      },
      writev: async (fd, chunks) => {
        shortWrites += 1;
        return nodeDiskCalls.writev(fd, [Buffer.concat(chunks).subarray(0, 3)]);
      },
    };
    const workspace = await sandbox.open({ disk });
    const content = 'a longer line than three bytes\n'.repeat(20);
    const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', content)));
    assert.equal(outcome.status, 'applied');
    assert.ok(shortWrites > 200, `the temp and the record took many writes (${shortWrites})`);
    assert.equal(await readFile(path.join(sandbox.root, 'a.txt'), 'utf8'), content);
    const records = await workspace.recordsOf(outcome.transactionId);
    assert.ok(records.ok);
    const [record] = records.value;
    assert.equal(Buffer.from(record!.journal.preImages[0]!).toString('utf8'), 'a\n');
    await workspace.close();
  });
});

test('a large file is staged through a temp created on the main thread and written on the thread pool, every byte even when writes come back short', async () => {
  await withSandbox({ 'big.txt': 'small\n' }, async (sandbox) => {
    const createdSync: string[] = [];
    const openedAsync: string[] = [];
    const temps = new Set<number>();
    let writes = 0;
    const disk: DiskCalls = {
      ...nodeDiskCalls,
      openSync: (file, flags, mode) => {
        const fd = nodeDiskCalls.openSync(file, flags, mode);
        if (flags === 'wx') createdSync.push(file);
        if (flags === 'wx' && file.startsWith(sandbox.root + path.sep)) temps.add(fd);
        return fd;
      },
      closeSync: (fd) => {
        temps.delete(fd);
        nodeDiskCalls.closeSync(fd);
      },
      open: async (file, flags, mode) => {
        openedAsync.push(file);
        return nodeDiskCalls.open(file, flags, mode);
      },
      // Each write takes at most 100 KiB, as a write interrupted by a signal may.
      writev: async (fd, chunks) => {
        if (temps.has(fd)) writes += 1;
        return nodeDiskCalls.writev(fd, [Buffer.concat(chunks).subarray(0, 100 * 1024)]);
      },
    };
    const workspace = await sandbox.open({ disk });
    const content = 'a line of a file larger than the synchronous bound\n'.repeat(Math.ceil(SYNC_IO_MAX_BYTES / 40));
    const outcome = await snapshotAndCommit(workspace, planOf(updateFile('big.txt', content)));
    assert.equal(outcome.status, 'applied', JSON.stringify(outcome));
    assert.equal(await readFile(path.join(sandbox.root, 'big.txt'), 'utf8'), content);
    assert.equal(writes, Math.ceil(Buffer.byteLength(content) / (100 * 1024)));
    assert.deepEqual(createdSync.filter((file) => file.startsWith(sandbox.root + path.sep)).map((file) => isTempName(path.basename(file))), [true]);
    assert.deepEqual(openedAsync.filter((file) => file.startsWith(sandbox.root + path.sep)), []);
    await workspace.close();
  });
});

test('a write or writev that takes nothing is an EIO, not an endless loop', async () => {
  let calls = 0;
  const disk: DiskCalls = {
    ...nodeDiskCalls,
    writevSync: () => {
      // Without the check the loop would never end: stop it here, as a different error.
      if (++calls > 1000) throw new Error('writeAllSync kept calling writev');
      return 0;
    },
    writev: async () => {
      if (++calls > 1000) throw new Error('writeAll kept calling writev');
      return 0;
    },
  };
  assert.throws(() => writeAllSync(disk, -1, [Buffer.from('bytes')]), { code: 'EIO' });
  assert.equal(calls, 1);
  await assert.rejects(writeAll(disk, -1, [Buffer.from('bytes')]), { code: 'EIO' });
  assert.equal(calls, 2);
});

test('a new log segment counts only once its directory entry is durable: a failed fsync of log/ fails the commit that opened it, and the next commit lands', async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    const logDirectory = path.join(sandbox.state, 'log');
    let failures = 0;
    const disk: DiskCalls = {
      ...nodeDiskCalls,
      open: async (file, flags, mode) => {
        const handle = await nodeDiskCalls.open(file, flags, mode);
        if (file !== logDirectory) return handle;
        return new Proxy(handle, {
          get(target, key) {
            if (key === 'sync') {
              return async () => {
                if (failures++ === 0) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
                await target.sync();
              };
            }
            const value: unknown = Reflect.get(target, key);
            return typeof value === 'function' ? value.bind(target) : value;
          },
        });
      },
    };
    const workspace = await sandbox.open({ disk });
    const failed = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A\n')));
    assert.equal(failed.status, 'rejected');
    assert.ok(failed.status === 'rejected' && failed.error.code === 'io_error', JSON.stringify(failed));
    assert.equal(await readFile(path.join(sandbox.root, 'a.txt'), 'utf8'), 'a\n');
    const applied = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'B\n')));
    assert.equal(applied.status, 'applied', JSON.stringify(applied));
    await workspace.close();
    assert.equal(await readFile(path.join(sandbox.root, 'a.txt'), 'utf8'), 'B\n');
    const reopened = await sandbox.open();
    assert.deepEqual(reopened.recovered, []);
    assert.equal((await reopened.transactions(5)).length, 1);
    await reopened.close();
  });
});
