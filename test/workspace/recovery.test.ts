import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFile, readdir, realpath, rename, rm, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { crc32 } from 'node:zlib';
import { framesOf } from '../../daemon/workspace/logFrames.ts';
import { sha256Hex } from '../../daemon/workspace/files.ts';
import { decodeJournal, encodeJournal, encodeRedo, recordNameOfJournalName, transactionIdOfJournalName } from '../../daemon/workspace/journal.ts';
import { begunAfter, orderOfRecordName } from '../../daemon/workspace/records.ts';
import type { Workspace } from '../../daemon/workspace/workspace.ts';
import { commitAndDie, CRASH_PLAN, CRASH_TREE, diskRefusingRecords, encode, listTree, planOf, recordingDisk, snapshotAndCommit, updateFile, withSandbox, type Sandbox } from './fixtures.ts';

const journalDir = (sandbox: Sandbox) => path.join(sandbox.state, 'journal');
/** Where recovery keeps the journal file `name` aside, as it reports it (`keptAside`). */
const keptAsideAs = async (sandbox: Sandbox, name: string) => path.join(await realpath(journalDir(sandbox)), `${name}.conflict`);
/** The root as a workspace records it (its realpath). */
const realRoot = (sandbox: Sandbox) => realpath(sandbox.root);
const logDir = (sandbox: Sandbox) => path.join(sandbox.state, 'log');
const historyDir = (sandbox: Sandbox) => path.join(sandbox.state, 'history');

const OWNER = { mode: 0o644, uid: 0, gid: 0 };
/** A journal entry updating `path` from `before` to `after`, with both hashes (as a commit writes it). */
const updateEntry = (path: string, before: string, after: string) => ({
  path, tempName: null, trashed: false, before: { bytes: encode(before), owner: OWNER, sha256: sha256Hex(encode(before)) }, afterSha256: sha256Hex(encode(after)),
});
/** `bytes` with the letter before the newline ending at `end` turned to upper case: a disk fault inside a pre- or post-image. */
function flipBefore(bytes: Buffer, end: number): Buffer {
  const flipped = Buffer.from(bytes);
  flipped[end - 2] = flipped[end - 2]! ^ 0x20;
  return flipped;
}

/** `bytes` with its first byte's 0x20 bit flipped: a journal's `{` becomes `[`. */
function flipFirstByte(bytes: Buffer): Buffer {
  const flipped = Buffer.from(bytes);
  flipped[0] = flipped[0]! ^ 0x20;
  return flipped;
}

/** After recovery, the one-file crash commit stands: two.txt at its post-image, with its undo record; no temp, log segment or journal left. */
async function assertOneFileCommitStands(sandbox: Sandbox, workspace: Workspace): Promise<void> {
  assert.deepEqual(workspace.recovered.map(({ outcome, paths, conflicts }) => ({ outcome, paths, conflicts })), [
    { outcome: 'rolled_forward', paths: ['two.txt'], conflicts: [] },
  ]);
  assert.equal(await readFile(path.join(sandbox.root, 'two.txt'), 'utf8'), 'only\n');
  assert.equal((await workspace.transactions(5)).length, 1, 'the commit stands with its undo record');
  assert.deepEqual(Object.keys(await listTree(sandbox.root)).filter((name) => name.endsWith('.patchd.tmp')), []);
  assert.deepEqual(await readdir(logDir(sandbox)), []);
  assert.deepEqual(await readdir(journalDir(sandbox)), []);
}

/** A pid that belonged to a process which has exited. */
const deadPid = (): number => spawnSync('true').pid ?? 999_999;

for (const killAt of [0, 2, 4]) {
  test(`a daemon killed before rename ${killAt} of 5 leaves its intent in the log, which open rolls back to the exact pre-image`, async () => {
    await withSandbox(CRASH_TREE, async (sandbox) => {
      const before = await listTree(sandbox.root);
      commitAndDie(sandbox, killAt);
      assert.equal((await readdir(logDir(sandbox))).length, 1);
      assert.deepEqual(await readdir(journalDir(sandbox)), []);
      assert.notDeepEqual(await listTree(sandbox.root), before, 'the crash should leave temps or renamed files behind');
      const workspace = await sandbox.open();
      assert.deepEqual(await listTree(sandbox.root), before);
      assert.equal(workspace.recovered.length, 1);
      assert.equal(workspace.recovered[0]?.paths.length, killAt);
      assert.deepEqual(workspace.recovered[0]?.conflicts, []);
      assert.deepEqual(await readdir(journalDir(sandbox)), []);
      assert.deepEqual(await readdir(logDir(sandbox)), []);
      assert.deepEqual(await workspace.transactions(5), [], 'no undo record of a commit that did not apply');
      await workspace.close();
    });
  });
}

/** What the five-file crash plan leaves when it is done. */
const CRASH_POST_IMAGE = {
  a: 'dir', 'a/one.txt': 'file:1\n', b: 'dir', 'b/c': 'dir', 'b/c/five.txt': 'file:5\n', 'keep.txt': 'file:untouched\n', 'three.txt': 'file:3\n', 'two.txt': 'file:2\n',
};

test('a daemon killed after its last rename but before logging the commit done is rolled forward, and that is reported', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    commitAndDie(sandbox, 'drop');
    assert.equal((await readdir(logDir(sandbox))).length, 1);
    assert.deepEqual(await listTree(sandbox.root), CRASH_POST_IMAGE);
    const workspace = await sandbox.open();
    assert.deepEqual(await listTree(sandbox.root), CRASH_POST_IMAGE);
    assert.deepEqual(workspace.recovered.map(({ outcome, paths, conflicts }) => ({ outcome, paths, conflicts })), [
      { outcome: 'rolled_forward', paths: ['a/one.txt', 'two.txt', 'three.txt', 'four.txt', 'b/c/five.txt'], conflicts: [] },
    ]);
    assert.deepEqual(await readdir(journalDir(sandbox)), []);
    assert.deepEqual(await readdir(logDir(sandbox)), []);
    assert.deepEqual(await readdir(path.join(sandbox.state, 'trash', workspace.recovered[0]!.transactionId)), ['four.txt'], 'the deleted file stays in the trash');
    assert.deepEqual((await workspace.transactions(5)).map((entry) => entry.transactionId), [workspace.recovered[0]!.transactionId], 'the commit stands with its undo record');
    assert.equal((await readdir(historyDir(sandbox))).length, 1, 'one record: the one written before the kill was replaced, not doubled');
    await workspace.close();
  });
});

for (const [variant, later, how] of [
  ['thenChanged', { 'two.txt': 'file:changed later\n' }, 'to other bytes'],
  ['thenReverted', { 'two.txt': 'file:two\n' }, 'back to its pre-image'],
  ['thenRecreated', { 'four.txt': 'file:four again\n' }, 'one it deleted, made again'],
] as const) {
  test(`a commit reported applied whose done frame is damaged is rolled forward with its record, though a later commit changed one of its paths since (${how})`, async () => {
    await withSandbox(CRASH_TREE, async (sandbox) => {
      commitAndDie(sandbox, 'done', variant);
      const [segment] = await readdir(logDir(sandbox));
      assert.ok(segment !== undefined);
      const file = path.join(logDir(sandbox), segment);
      const bytes = await readFile(file);
      assert.deepEqual(framesOf(bytes).frames.map(({ head }) => head.kind), ['intent', 'done', 'intent', 'done']);
      // A disk fault in the five-file commit's done frame: its intent looks unsettled, as if it had never ended.
      bytes[8 + bytes.readUInt32LE(0) + 20]! ^= 0x01;
      await writeFile(file, bytes);

      const workspace = await sandbox.open();
      assert.deepEqual(workspace.recovered.map(({ outcome, paths, conflicts, damaged, keptAside }) => ({ outcome, paths, conflicts, damaged, keptAside })), [
        { outcome: 'rolled_forward', paths: ['a/one.txt', 'two.txt', 'three.txt', 'four.txt', 'b/c/five.txt'], conflicts: [], damaged: [], keptAside: undefined },
      ]);
      assert.deepEqual(await listTree(sandbox.root), { ...CRASH_POST_IMAGE, ...later }, 'nothing of either commit undone');
      assert.deepEqual(await readdir(journalDir(sandbox)), []);
      assert.equal((await workspace.transactions(5)).length, 2, 'both commits keep their undo records');
      await workspace.close();
    });
  });
}

test('a one-file commit killed before it is logged done is rolled forward with its record', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    commitAndDie(sandbox, 'drop', 'single');
    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered.map(({ outcome, paths }) => ({ outcome, paths })), [{ outcome: 'rolled_forward', paths: ['two.txt'] }]);
    assert.equal(await readFile(path.join(sandbox.root, 'two.txt'), 'utf8'), 'only\n');
    assert.equal((await readdir(historyDir(sandbox))).length, 1);
    assert.deepEqual(Object.keys(await listTree(sandbox.root)).filter((name) => name.endsWith('.patchd.tmp')), []);
    await workspace.close();
  });
});

test('a record a power loss dropped after the commit was reported is re-written from the log on open', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    commitAndDie(sandbox, 'done', 'single');
    const [record] = await readdir(historyDir(sandbox));
    assert.ok(record !== undefined);
    const bytes = await readFile(path.join(historyDir(sandbox), record));
    // Not fsynced before the checkpoint: a power loss may drop it (or leave it short).
    await writeFile(path.join(historyDir(sandbox), record), bytes.subarray(0, 10));
    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered, [], 'a commit logged done is not recovered');
    assert.deepEqual(await readdir(historyDir(sandbox)), [record]);
    assert.deepEqual(await readFile(path.join(historyDir(sandbox), record)), bytes);
    assert.equal((await workspace.transactions(5)).length, 1);
    assert.deepEqual(await readdir(logDir(sandbox)), []);
    await workspace.close();
  });
});

test('a one-file commit reported applied whose done frame a power loss dropped is rolled forward with its record', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    commitAndDie(sandbox, 'done', 'single');
    const [segment] = await readdir(logDir(sandbox));
    assert.ok(segment !== undefined);
    const file = path.join(logDir(sandbox), segment);
    const bytes = await readFile(file);
    assert.deepEqual(framesOf(bytes).frames.map(({ head }) => head.kind), ['intent', 'done']);
    // Reported once its done frame was written, before that frame's fdatasync: a power loss may drop it, and the unsynced record.
    await writeFile(file, bytes.subarray(0, 8 + bytes.readUInt32LE(0)));
    await rm(historyDir(sandbox), { recursive: true });
    const workspace = await sandbox.open();
    await assertOneFileCommitStands(sandbox, workspace);
    await workspace.close();
  });
});

test('a commit whose undo record cannot be written is rolled back and reported failed, never applied and undone later', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    const before = await listTree(sandbox.root);
    const workspace = await sandbox.open({ disk: diskRefusingRecords() });
    const outcome = await snapshotAndCommit(workspace, CRASH_PLAN);
    assert.equal(outcome.status, 'rejected');
    assert.ok(outcome.status === 'rejected');
    assert.equal(outcome.error.code, 'io_error');
    assert.match(outcome.error.message, /the undo record: EIO/);
    assert.deepEqual(await listTree(sandbox.root), before);
    assert.deepEqual(await readdir(historyDir(sandbox)), [], 'what was written of the record is gone');
    await workspace.close();
    // The undo record could not be written, so the commit was rolled back and cancelled in the log, which close dropped.
    assert.deepEqual(await readdir(journalDir(sandbox)), []);
    assert.deepEqual(await readdir(logDir(sandbox)), []);
    const reopened = await sandbox.open();
    assert.deepEqual(reopened.recovered, []);
    assert.deepEqual(await listTree(sandbox.root), before);
    assert.deepEqual(await reopened.transactions(5), [], 'no undo record of a commit that did not apply');
    await reopened.close();
  });
});

for (const restoreAt of [0, 1, 2]) {
  test(`a recovery killed before restore ${restoreAt} leaves nothing the next recovery does not clear`, async () => {
    await withSandbox(CRASH_TREE, async (sandbox) => {
      const before = await listTree(sandbox.root);
      const temps = async () => Object.keys(await listTree(sandbox.root)).filter((name) => name.endsWith('.patchd.tmp'));
      commitAndDie(sandbox, 4);
      const commitTemps = await temps();
      commitAndDie(sandbox, `restore:${restoreAt}`);
      assert.equal((await temps()).filter((name) => !commitTemps.includes(name)).length, 1, 'the killed recovery should leave its restore temp');
      const workspace = await sandbox.open();
      assert.deepEqual(await listTree(sandbox.root), before);
      assert.deepEqual(await readdir(journalDir(sandbox)), []);
      assert.equal(workspace.recovered[0]?.outcome, 'rolled_back');
      await workspace.close();
    });
  });
}

test('a one-file commit killed as soon as it is reported applied, before its fsyncs, stands with its record, and open makes it durable', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    commitAndDie(sandbox, 'reported', 'single');
    const [segment] = await readdir(logDir(sandbox));
    assert.ok(segment !== undefined);
    const { frames } = framesOf(await readFile(path.join(logDir(sandbox), segment)));
    assert.equal(frames[0]?.head.kind, 'intent');
    assert.ok(frames[0]?.head.kind === 'intent' && frames[0].head.redo !== undefined, 'its intent carries the post-image');
    const { disk, calls } = recordingDisk();
    const workspace = await sandbox.open({ disk });
    await assertOneFileCommitStands(sandbox, workspace);
    assert.ok(calls.includes(`fsync ${path.join(sandbox.root, 'two.txt')}`), `the file is fsynced:\n${calls.join('\n')}`);
    await workspace.close();
  });
});

for (const [ranIn, opensIn] of [['boot-before', 'boot-after'], ['unknown', null]] as const) {
  test(`after a reboot (boot ${opensIn ?? 'unknown'}), a one-file commit reported before its fsyncs whose rename a power loss dropped is written again from the log`, async () => {
    await withSandbox(CRASH_TREE, async (sandbox) => {
      commitAndDie(sandbox, 'reported', 'single', ranIn);
      await writeFile(path.join(sandbox.root, 'two.txt'), 'two\n');
      const workspace = await sandbox.open({ bootId: opensIn });
      await assertOneFileCommitStands(sandbox, workspace);
      await workspace.close();
    });
  });
}

for (const [record, sha256Kept, damaged] of [['its record', false, false], ['its record (with the sha256 of its pre-image)', true, false], ['its record, whose pre-image has a flipped byte', true, true]] as const) {
  test(`after a reboot, a one-file commit reported before its fsyncs is not written again over its pre-image when a later transaction started from its post-image: told by ${record}`, async () => {
    await withSandbox(CRASH_TREE, async (sandbox) => {
      commitAndDie(sandbox, 'reported', 'single', 'boot-before');
      // Another process reverted the file (its record starts from 'only'), and that reached the disk before the power loss.
      const meta = { format: 'unified', files: [{ path: 'two.txt', op: 'update' }], unit: 0, units: 1 };
      const entry = updateEntry('two.txt', 'only\n', 'two\n');
      if (!sha256Kept) delete (entry.before as { sha256?: string }).sha256;
      const bytes = Buffer.concat(encodeJournal('revert', await realRoot(sandbox), [entry], [], meta).chunks);
      // The damage lies in a copy of bytes the header already vouches for: the revert still started from 'only'.
      await writeFile(path.join(historyDir(sandbox), `${Date.now() + 1}-1-1-revert.0.record`), damaged ? flipBefore(bytes, bytes.byteLength) : bytes);
      await writeFile(path.join(sandbox.root, 'two.txt'), 'two\n');
      const workspace = await sandbox.open({ bootId: 'boot-after' });
      assert.deepEqual(workspace.recovered.map(({ outcome, conflicts }) => ({ outcome, conflicts })), [{ outcome: 'rolled_forward', conflicts: [] }]);
      assert.equal(await readFile(path.join(sandbox.root, 'two.txt'), 'utf8'), 'two\n', 'the revert stands');
      assert.equal((await workspace.transactions(5)).length, 2);
      await workspace.close();
    });
  });
}

test('after a reboot, a one-file commit reported before its fsyncs that reverts the commit its process made just before it is written again when a power loss dropped its rename: that commit, though it started from the revert\'s post-image, began before it', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    // two.txt: two -> only (settled), then back to two, killed once reported.
    commitAndDie(sandbox, 'reported', 'revertsEarlier', 'boot-before');
    // The power loss dropped the revert's rename: two.txt holds its pre-image, which the first commit left.
    await writeFile(path.join(sandbox.root, 'two.txt'), 'only\n');
    const workspace = await sandbox.open({ bootId: 'boot-after' });
    assert.deepEqual(workspace.recovered.map(({ outcome, paths, conflicts }) => ({ outcome, paths, conflicts })), [
      { outcome: 'rolled_forward', paths: ['two.txt'], conflicts: [] },
    ]);
    assert.equal(await readFile(path.join(sandbox.root, 'two.txt'), 'utf8'), 'two\n', 'the revert reported applied stands');
    assert.equal((await workspace.transactions(5)).length, 2);
    const changes = await workspace.sessionChanges(null);
    assert.ok(changes?.ok);
    assert.deepEqual(changes.value, [], 'back where it started');
    await workspace.close();
  });
});

test('after a reboot, a one-file undo reported before its fsyncs is written again when a power loss dropped its rename, though the transaction it undid was made by another process a moment before', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    const patching = await sandbox.open({ bootId: 'boot-before' });
    assert.equal((await snapshotAndCommit(patching, planOf(updateFile('two.txt', 'only\n')))).status, 'applied');
    await patching.close();
    // Another process (`patchd undo`) undoes it, killed once reported: its clock is no help within a minute.
    commitAndDie(sandbox, 'reported', 'undoesLatest', 'boot-before');
    await writeFile(path.join(sandbox.root, 'two.txt'), 'only\n');
    const workspace = await sandbox.open({ bootId: 'boot-after' });
    assert.deepEqual(workspace.recovered.map(({ outcome, paths, conflicts }) => ({ outcome, paths, conflicts })), [
      { outcome: 'rolled_forward', paths: ['two.txt'], conflicts: [] },
    ]);
    assert.equal(await readFile(path.join(sandbox.root, 'two.txt'), 'utf8'), 'two\n', 'the undo reported applied stands');
    await workspace.close();
  });
});

test('a commit rolled forward by recovery keeps its place in the history: before a commit another process made on top of it while it waited', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    const live = await sandbox.open();
    // Another daemon commits two.txt: two -> only, and is killed once that is reported.
    commitAndDie(sandbox, 'reported', 'single');
    // The live one (which does not recover what the other left until its next open) builds on it.
    assert.equal((await snapshotAndCommit(live, planOf(updateFile('two.txt', 'later\n')))).status, 'applied');
    await live.settled();
    const [later] = await live.transactions(1);
    await live.close();
    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered.map(({ outcome, paths }) => ({ outcome, paths })), [{ outcome: 'rolled_forward', paths: ['two.txt'] }]);
    const listed = (await workspace.transactions(5)).map((entry) => entry.transactionId);
    assert.equal(listed.length, 2);
    assert.equal(listed[0], later!.transactionId, 'the later commit is listed newest');
    const changes = await workspace.sessionChanges(null);
    assert.ok(changes?.ok);
    assert.deepEqual(changes.value.map((change) => [change.path, change.before === null ? null : Buffer.from(change.before.bytes).toString('utf8')]), [['two.txt', 'two\n']],
      'the net change starts from what two.txt held before the first commit');
    await workspace.close();
  });
});

for (const [ranIn, opensIn, when] of [['boot-before', 'boot-after', 'after a reboot'], ['boot-same', 'boot-same', 'in the boot it ran in']] as const) {
  test(`${when}, a file holding neither image of a one-file commit reported before its fsyncs is left as found, its journal (with the post-image) kept aside`, async () => {
    await withSandbox(CRASH_TREE, async (sandbox) => {
      commitAndDie(sandbox, 'reported', 'single', ranIn);
      await writeFile(path.join(sandbox.root, 'two.txt'), 'edited outside\n');
      const workspace = await sandbox.open({ bootId: opensIn });
      assert.deepEqual(workspace.recovered.map(({ conflicts }) => conflicts), [['two.txt']]);
      assert.equal(await readFile(path.join(sandbox.root, 'two.txt'), 'utf8'), 'edited outside\n');
      const [kept] = (await readdir(journalDir(sandbox))).filter((name) => name.endsWith('.conflict'));
      const journal = await decodeJournal(await readFile(path.join(journalDir(sandbox), kept!)));
      assert.equal(Buffer.from(journal!.redo!.postImages[0]!).toString('utf8'), 'only\n');
      await workspace.close();
    });
  });
}

test('after a reboot, a one-file commit killed before its rename is rolled forward from the log: it may have been reported', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    commitAndDie(sandbox, 0, 'single', 'boot-before');
    const workspace = await sandbox.open({ bootId: 'boot-after' });
    assert.deepEqual(workspace.recovered.map(({ outcome, paths }) => ({ outcome, paths })), [{ outcome: 'rolled_forward', paths: ['two.txt'] }]);
    assert.equal(await readFile(path.join(sandbox.root, 'two.txt'), 'utf8'), 'only\n');
    assert.deepEqual(Object.keys(await listTree(sandbox.root)).filter((name) => name.endsWith('.patchd.tmp')), []);
    await workspace.close();
  });
});

test('a one-file commit killed before its rename leaves only a temp, which open removes', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    const before = await listTree(sandbox.root);
    // In the boot it ran in (named, so that this holds where the machine's boot is unknown: then it would be rolled forward).
    commitAndDie(sandbox, 0, 'single', 'boot-same');
    const leftovers = Object.keys(await listTree(sandbox.root)).filter((name) => !(name in before));
    assert.equal(leftovers.length, 1);
    assert.ok(leftovers[0]?.endsWith('.patchd.tmp'));
    const workspace = await sandbox.open({ bootId: 'boot-same' });
    assert.deepEqual(await listTree(sandbox.root), before);
    assert.deepEqual(await readdir(journalDir(sandbox)), []);
    await workspace.close();
  });
});

/** A commit log segment holding an intent frame, with no done frame, for each record named: commits in flight (or left by a crash). */
function unsettledSegment(records: readonly string[]): Buffer {
  return Buffer.concat(records.map((record, index) => {
    const line = Buffer.from(`${JSON.stringify({ kind: 'intent', id: index + 1, journalId: record, record })}\n`);
    const prefix = Buffer.alloc(8);
    prefix.writeUInt32LE(line.byteLength, 0);
    prefix.writeUInt32LE(crc32(line), 4);
    return Buffer.concat([prefix, line]);
  }));
}

test('a record cut short whose commit is in flight (being written, or torn by a crash not yet recovered: its intent unsettled in the log) breaks no reader: the log, undo and the session diff pass it over', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    const workspace = await sandbox.open();
    assert.equal((await snapshotAndCommit(workspace, planOf(updateFile('two.txt', 'first\n')))).status, 'applied');
    await workspace.settled(); // its record is written after the report
    const [whole] = await readdir(historyDir(sandbox));
    assert.ok(whole !== undefined);
    const bytes = await readFile(path.join(historyDir(sandbox), whole));
    const newline = bytes.indexOf(0x0a);
    assert.ok(newline < bytes.length - 2, 'the pre-image follows the header line');
    const [, process, wholeId] = /^\d{13}-(\d+\.[0-9a-f]+-\d+)-(.+)\.0\.record$/.exec(whole)!;
    // Later records (written under their own names, as a commit writes them): one cut inside its header line, one after it.
    const later = (time: number, id: string) => `${time}-${process}-${id}.0.record`;
    const [inHeader, inBody] = [later(9_000_000_000_000, 'cut_header'), later(9_000_000_000_001, 'cut_body')];
    // Each its own transaction's record (a record under another transaction's name is damaged for that alone).
    const header = (id: string) => Buffer.from(`${bytes.subarray(0, newline).toString('utf8').replace(wholeId!, id)}\n`);
    await writeFile(path.join(historyDir(sandbox), inHeader), header('cut_header').subarray(0, -5));
    await writeFile(path.join(historyDir(sandbox), inBody), Buffer.concat([header('cut_body'), bytes.subarray(newline + 1, bytes.length - 2)]));
    // The process writing them (one that is gone, here) logged their intents, and neither done nor cancelled.
    const segment = path.join(logDir(sandbox), '999999999-0badc0de-1.log');
    await writeFile(segment, unsettledSegment([inHeader, inBody]));
    const listed = (await workspace.transactions(10)).map((entry) => entry.transactionId);
    assert.deepEqual(listed, [wholeId], 'the log lists the committed transactions');
    assert.deepEqual(await workspace.recordsOf('cut_body'), { ok: true, value: [] });
    const changes = await workspace.sessionChanges(null);
    assert.ok(changes?.ok);
    assert.deepEqual(changes.value.map((change) => change.path), ['two.txt']);

    // With no commit in flight to write them, the same records are damaged, and said to be.
    await rm(segment);
    const damaged = (await workspace.transactions(10)).map((entry) => [entry.transactionId, entry.damaged !== undefined]);
    assert.deepEqual(damaged, [['cut_body', true], ['cut_header', true], [wholeId, false]]);
    const refused = await workspace.sessionChanges(null);
    assert.equal(refused?.ok === false && refused.error.code, 'io_error');
    assert.equal((await workspace.recordsOf('cut_body')).ok, false);
    await workspace.close();
  });
});

test('recovery leaves a file someone changed after the crash alone, reports it, and keeps the journal', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    commitAndDie(sandbox, 2);
    await writeFile(path.join(sandbox.root, 'two.txt'), 'edited after the crash\n');
    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered[0]?.paths, ['a/one.txt']);
    assert.deepEqual(workspace.recovered[0]?.conflicts, ['two.txt']);
    assert.deepEqual(await listTree(sandbox.root), {
      'four.txt': 'file:four\n', 'keep.txt': 'file:untouched\n', 'three.txt': 'file:three\n', 'two.txt': 'file:edited after the crash\n',
    });
    const kept = await readdir(journalDir(sandbox));
    assert.equal(kept.length, 1);
    assert.ok(kept[0]?.endsWith('.journal.conflict'));
    await workspace.close();
  });
});

test('a log segment owned by a live process is left alone until that process is gone', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    commitAndDie(sandbox, 2);
    const [name] = await readdir(logDir(sandbox));
    assert.ok(name !== undefined);
    const rest = name.split('-').slice(2).join('-');
    const liveName = `${process.ppid}-0000-${rest}`;
    await rename(path.join(logDir(sandbox), name), path.join(logDir(sandbox), liveName));
    const halfApplied = await listTree(sandbox.root);
    const first = await sandbox.open();
    assert.deepEqual(first.recovered, []);
    assert.deepEqual(await listTree(sandbox.root), halfApplied);
    await first.close();
    await rename(path.join(logDir(sandbox), liveName), path.join(logDir(sandbox), `${deadPid()}-0000-${rest}`));
    const second = await sandbox.open();
    assert.equal(second.recovered.length, 1);
    assert.deepEqual(await listTree(sandbox.root), Object.fromEntries(Object.entries(CRASH_TREE).map(([file, text]) => [file, `file:${text}`])));
    await second.close();
  });
});

test('a journal whose pre-image fails its sha256 is not rolled back over the file: the file keeps what it holds, the report names it damaged, the journal is kept aside', async () => {
  await withSandbox({ ...CRASH_TREE, 'two.txt': '2\n', 'three.txt': '3\n' }, async (sandbox) => {
    await (await sandbox.open()).close();
    // two.txt and three.txt hold the post-image, four.txt its pre-image still (the commit died before renaming it).
    const { chunks } = encodeJournal('tx', await realRoot(sandbox), [
      updateEntry('two.txt', 'two\n', '2\n'), updateEntry('three.txt', 'three\n', '3\n'), updateEntry('four.txt', 'four\n', '4\n'),
    ], []);
    const bytes = Buffer.concat(chunks);
    // Damage the pre-images of two.txt and of four.txt ("two\n" and "four\n" are the first and the last).
    const header = chunks[0]!.byteLength;
    const damaged = flipBefore(flipBefore(bytes, header + 'two\n'.length), bytes.byteLength);
    const name = `${deadPid()}-0000-tx.journal`;
    await writeFile(path.join(journalDir(sandbox), name), damaged);

    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered, [{
      transactionId: 'tx', outcome: 'rolled_back', paths: ['three.txt'], conflicts: [], damaged: ['two.txt'], keptAside: await keptAsideAs(sandbox, name),
    }]);
    assert.equal(await readFile(path.join(sandbox.root, 'two.txt'), 'utf8'), '2\n', 'the wrong bytes are not written over it');
    assert.equal(await readFile(path.join(sandbox.root, 'three.txt'), 'utf8'), 'three\n');
    assert.equal(await readFile(path.join(sandbox.root, 'four.txt'), 'utf8'), 'four\n', 'a file at its pre-image is known by its sha256, not called changed');
    assert.deepEqual((await readdir(journalDir(sandbox))).map((name) => name.endsWith('.journal.conflict')), [true], 'kept aside');
    await workspace.close();
  });
});

test('after a reboot, a redo section whose post-image fails its sha256 is not written over the pre-image: left as found, reported damaged, the journal kept aside', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    await (await sandbox.open()).close();
    const meta = { format: 'unified', files: [{ path: 'two.txt', op: 'update' }], unit: 0, units: 1 };
    const { chunks } = encodeJournal('tx', await realRoot(sandbox), [updateEntry('two.txt', 'two\n', 'only\n')], [], meta);
    const bytes = Buffer.concat([...chunks, ...encodeRedo('boot-before', [encode('only\n')])]);
    const name = `${deadPid()}-0000-tx.journal`;
    await writeFile(path.join(journalDir(sandbox), name), flipBefore(bytes, bytes.byteLength));

    const workspace = await sandbox.open({ bootId: 'boot-after' });
    assert.deepEqual(workspace.recovered, [{
      transactionId: 'tx', outcome: 'rolled_forward', paths: [], conflicts: [], damaged: ['two.txt'], keptAside: await keptAsideAs(sandbox, name),
    }]);
    assert.equal(await readFile(path.join(sandbox.root, 'two.txt'), 'utf8'), 'two\n');
    assert.deepEqual((await readdir(journalDir(sandbox))).map((name) => name.endsWith('.journal.conflict')), [true]);
    assert.deepEqual(await workspace.transactions(5), [], 'no record of a commit whose post-image is not there');
    await workspace.close();
  });
});

/** `bytes` (a journal) with its header line edited by `edit`, which must change it. */
function editHeaderLine(bytes: Buffer, edit: (line: string) => string): Buffer {
  const newline = bytes.indexOf(0x0a);
  const line = bytes.subarray(0, newline).toString('utf8');
  assert.notEqual(edit(line), line);
  return Buffer.concat([Buffer.from(edit(line)), bytes.subarray(newline)]);
}

/** A journal of a commit that died after renaming two.txt and three.txt, before four.txt (the tree holds that). */
async function halfRenamedJournal(sandbox: Sandbox): Promise<Buffer> {
  await writeFile(path.join(sandbox.root, 'two.txt'), '2\n');
  await writeFile(path.join(sandbox.root, 'three.txt'), '3\n');
  const { chunks } = encodeJournal('tx', await realRoot(sandbox), [
    updateEntry('two.txt', 'two\n', '2\n'), updateEntry('three.txt', 'three\n', '3\n'), updateEntry('four.txt', 'four\n', '4\n'),
  ], []);
  return Buffer.concat(chunks);
}

for (const [how, recreated, undoOf] of [
  ['is deleted again', false, undefined],
  ['is not deleted again over a later transaction that made the file again with the same bytes (its record, of another process, dated within the clock\'s slack)', true, undefined],
  ['is deleted again when it is the undo of the transaction that made the file, though that one, of another process, is dated within the clock\'s slack', true, 'recreate'],
] as const) {
  test(`after a reboot, a redo section's delete whose unlink a power loss dropped ${how}`, async () => {
    await withSandbox(CRASH_TREE, async (sandbox) => {
      await (await sandbox.open()).close();
      // Commits log a redo section for a one-file write only; recovery still gets a delete in one right. four.txt holds its pre-image.
      const meta = { format: 'unified', files: [{ path: 'four.txt', op: 'delete' }], unit: 0, units: 1, ...(undoOf === undefined ? {} : { undoOf }) };
      const entry = { ...updateEntry('four.txt', 'four\n', ''), afterSha256: null };
      const { journal, chunks } = encodeJournal('tx', await realRoot(sandbox), [entry], [], meta);
      await writeFile(path.join(journalDir(sandbox), `${deadPid()}-0000-tx.journal`), Buffer.concat([...chunks, ...encodeRedo('boot-before', [null])]));
      if (recreated) {
        // Made the file from nothing: no pre-image there. A clock stepped back dates it a moment before the delete began.
        const addMeta = { format: 'unified', files: [{ path: 'four.txt', op: 'add' }], unit: 0, units: 1 };
        const added = { path: 'four.txt', tempName: null, trashed: false, before: null, afterSha256: sha256Hex(encode('four\n')) };
        const record = Buffer.concat(encodeJournal('recreate', await realRoot(sandbox), [added], [], addMeta).chunks);
        await writeFile(path.join(historyDir(sandbox), `${journal.record.startedAt - 1}-1-1-recreate.0.record`), record);
      }

      const workspace = await sandbox.open({ bootId: 'boot-after' });
      assert.deepEqual(workspace.recovered.map(({ outcome, paths, conflicts, damaged }) => ({ outcome, paths, conflicts, damaged })), [
        { outcome: 'rolled_forward', paths: ['four.txt'], conflicts: [], damaged: [] },
      ]);
      assert.equal((await listTree(sandbox.root))['four.txt'], recreated && undoOf === undefined ? 'file:four\n' : undefined);
      await workspace.close();
    });
  });
}

test('a journal whose header fails its checksum (a mode changed, still JSON) is not acted on: every path it names left as found and reported, the journal kept aside', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    await (await sandbox.open()).close();
    const bytes = editHeaderLine(await halfRenamedJournal(sandbox), (line) => line.replace('"mode":420', '"mode":2468'));
    const name = `${deadPid()}-0000-tx.journal`;
    await writeFile(path.join(journalDir(sandbox), name), bytes);

    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered, [{
      transactionId: 'tx', outcome: 'left_as_found', paths: [], conflicts: [], damaged: ['two.txt', 'three.txt', 'four.txt'], keptAside: await keptAsideAs(sandbox, name),
    }]);
    assert.deepEqual(await listTree(sandbox.root), { 'four.txt': 'file:four\n', 'keep.txt': 'file:untouched\n', 'three.txt': 'file:3\n', 'two.txt': 'file:2\n' });
    assert.deepEqual(await readdir(journalDir(sandbox)), [`${name}.conflict`]);
    assert.deepEqual(await readFile(path.join(journalDir(sandbox), `${name}.conflict`)), bytes, 'kept aside as it was');
    await workspace.close();
  });
});

test('a journal written before headers had a checksum is recovered as before', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    await (await sandbox.open()).close();
    const bytes = editHeaderLine(await halfRenamedJournal(sandbox), (line) => line.replace(/,"headerCrc32":\d+\}$/, '}'));
    await writeFile(path.join(journalDir(sandbox), `${deadPid()}-0000-tx.journal`), bytes);

    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered, [{ transactionId: 'tx', outcome: 'rolled_back', paths: ['two.txt', 'three.txt'], conflicts: [], damaged: [] }]);
    assert.deepEqual(await listTree(sandbox.root), { 'four.txt': 'file:four\n', 'keep.txt': 'file:untouched\n', 'three.txt': 'file:three\n', 'two.txt': 'file:two\n' });
    assert.deepEqual(await readdir(journalDir(sandbox)), []);
    await workspace.close();
  });
});

/**
 * The journal of the five-file crash commit, killed before its fifth rename, as a recovery left
 * it in journal/ when it was killed in turn (three.txt put back, two.txt not yet): its name and bytes.
 */
async function journalOfHalfRecoveredCommit(sandbox: Sandbox): Promise<{ name: string; bytes: Buffer }> {
  commitAndDie(sandbox, 4);
  commitAndDie(sandbox, 'restore:1');
  const [name, ...others] = await readdir(journalDir(sandbox));
  assert.ok(name !== undefined && others.length === 0 && name.startsWith('orphan-') && name.endsWith('.journal'), `one journal handed over by the log: ${name}`);
  return { name, bytes: await readFile(path.join(journalDir(sandbox), name)) };
}

for (const [damage, edit, paths] of [
  ['a byte of its header line changed, which is no longer JSON', flipFirstByte, false],
  ['cut short in the middle of a pre-image, its header sound', (bytes: Buffer) => bytes.subarray(0, bytes.indexOf(0x0a) + 3), true],
] as const) {
  test(`a journal that no longer decodes (${damage}) is kept aside untouched and reported left_as_found, not deleted`, async () => {
    await withSandbox(CRASH_TREE, async (sandbox) => {
      const { name, bytes } = await journalOfHalfRecoveredCommit(sandbox);
      const { record } = (await decodeJournal(bytes))!;
      const damaged = edit(bytes);
      await writeFile(path.join(journalDir(sandbox), name), damaged);
      const halfway = await listTree(sandbox.root);

      const workspace = await sandbox.open();
      const kept = await keptAsideAs(sandbox, name);
      assert.deepEqual(workspace.recovered, [{
        transactionId: record.transactionId, outcome: 'left_as_found', paths: [], conflicts: [],
        // Named when the header vouches for them (its checksum holds); else nothing tells which paths it named.
        damaged: paths ? record.entries.map((entry) => entry.path) : [], keptAside: kept,
      }]);
      assert.deepEqual(await listTree(sandbox.root), halfway, 'nothing acted on');
      assert.deepEqual(await readdir(journalDir(sandbox)), [path.basename(kept)]);
      assert.deepEqual(await readFile(kept), damaged, 'kept as it was');
      await workspace.close();

      const reopened = await sandbox.open();
      assert.deepEqual(reopened.recovered, [], 'reported once');
      assert.deepEqual(await readdir(journalDir(sandbox)), [path.basename(kept)]);
      await reopened.close();
    });
  });
}

test('a journal cut short inside its header line is kept aside, reported under the transaction its file name gives', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    const before = await listTree(sandbox.root);
    await (await sandbox.open()).close();
    const { chunks } = encodeJournal('tx', sandbox.root, [{ path: 'two.txt', tempName: null, trashed: true, before: { bytes: encode('x'), owner: { mode: 0o644, uid: 0, gid: 0 } }, afterSha256: null }], []);
    const name = `${deadPid()}-0000-tx.journal`;
    await writeFile(path.join(journalDir(sandbox), name), Buffer.concat(chunks).subarray(0, 20));
    const workspace = await sandbox.open();
    const kept = await keptAsideAs(sandbox, name);
    assert.deepEqual(workspace.recovered, [{ transactionId: 'tx', outcome: 'left_as_found', paths: [], conflicts: [], damaged: [], keptAside: kept }]);
    assert.deepEqual(await readdir(journalDir(sandbox)), [path.basename(kept)]);
    assert.deepEqual(await listTree(sandbox.root), before);
    await workspace.close();
  });
});

test('a journal kept aside is kept for the age retention keeps from when it was set aside, not from when it was written', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    await (await sandbox.open()).close();
    const name = `${deadPid()}-0000-tx.journal`;
    const file = path.join(journalDir(sandbox), name);
    await writeFile(file, flipFirstByte(await halfRenamedJournal(sandbox)));
    // It waited two hours for this open; conflicts are kept one.
    const written = new Date(Date.now() - 2 * 3_600_000);
    await utimes(file, written, written);
    const workspace = await sandbox.open({ retention: { maxTransactions: 1000, maxAgeMs: 3_600_000 } });
    assert.deepEqual(workspace.recovered.map(({ outcome, keptAside }) => ({ outcome, keptAside })), [{ outcome: 'left_as_found', keptAside: await keptAsideAs(sandbox, name) }]);
    assert.deepEqual(await readdir(journalDir(sandbox)), [`${name}.conflict`], 'not pruned by the open that reports it kept');
    await workspace.close();
  });
});

test('a journal of another root is left for it when its header vouches for that root, and kept aside here when its header cannot', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    await (await sandbox.open()).close();
    const before = await listTree(sandbox.root);
    const otherRoot = await realpath(sandbox.outside);
    const journalFor = (transactionId: string) => Buffer.concat(encodeJournal(transactionId, otherRoot, [updateEntry('secret.txt', 'outside bytes\n', 'x\n')], []).chunks);
    const leave = (transactionId: string, bytes: Buffer) => writeFile(path.join(journalDir(sandbox), `${deadPid()}-0000-${transactionId}.journal`), bytes);
    await leave('whole', journalFor('whole'));
    const cut = journalFor('cut');
    await leave('cut', cut.subarray(0, cut.indexOf(0x0a) + 3));
    await leave('fails_checksum', editHeaderLine(journalFor('fails_checksum'), (line) => line.replace('"mode":420', '"mode":2468')));
    await leave('no_json', flipFirstByte(journalFor('no_json')));

    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered.map(({ transactionId, outcome, damaged }) => ({ transactionId, outcome, damaged })).sort((a, b) => a.transactionId.localeCompare(b.transactionId)), [
      { transactionId: 'fails_checksum', outcome: 'left_as_found', damaged: ['secret.txt'] },
      { transactionId: 'no_json', outcome: 'left_as_found', damaged: [] },
    ]);
    assert.deepEqual((await readdir(journalDir(sandbox))).map((name) => name.replace(/^\d+-0000-/, '')).sort(), [
      'cut.journal', 'fails_checksum.journal.conflict', 'no_json.journal.conflict', 'whole.journal',
    ]);
    assert.deepEqual(await listTree(sandbox.root), before);
    assert.equal(await readFile(path.join(sandbox.outside, 'secret.txt'), 'utf8'), 'outside bytes\n');
    await workspace.close();
  });
});

test('a journal file\'s name gives the transaction it was written for, without the unit of a commit applied file by file', () => {
  const uuid = '0c8a3e52-4f7b-4f0e-9d55-2b1f6a7c9e10';
  for (const [name, transactionId] of [
    [`orphan-4242-0a1b2c3d-17-1764400000000-4242.0a1b2c3d-9-${uuid}.0.record.journal`, uuid], // handed over by the log, or by a rollback that could not finish, with its record name
    ['orphan-4242-0a1b2c3d-17-1764400000000-4242-9-tx_named-by-caller.2.record.journal', 'tx_named-by-caller'], // a record name from before it named the process nonce
    [`orphan-4242-0a1b2c3d-17-${uuid}.journal`, uuid], // handed over before the journal's name carried the record name
    [`orphan-4242-0a1b2c3d-17-${uuid}.3.journal`, uuid], // one unit of a commit applied file by file
    ['orphan-4242-0a1b2c3d-17-tx_named-by-caller.journal', 'tx_named-by-caller'],
    [`4242-0a1b2c3d-${uuid}.journal`, uuid], // written in place by a daemon before the commit log
    ['orphan-4242-0a1b2c3d-tx.2.journal', 'tx'],
    ['copied by hand.journal', 'copied by hand'],
  ]) assert.equal(transactionIdOfJournalName(name!), transactionId, name);
});

test('a handed-over journal\'s name gives the record name its commit logged, and that tells when the commit began: exactly against another of its process, by the clock against any other', () => {
  const recordName = '1764400000000-4242.0a1b2c3d-9-tx.0.record';
  assert.equal(recordNameOfJournalName(`orphan-4242-0a1b2c3d-17-${recordName}.journal`), recordName);
  assert.equal(recordNameOfJournalName('orphan-4242-0a1b2c3d-17-tx.0.journal'), undefined, 'an older name carries none');
  const order = orderOfRecordName(recordName)!;
  assert.deepEqual(order, { at: 1_764_400_000_000, process: '4242.0a1b2c3d', sequence: 9 });
  assert.deepEqual(orderOfRecordName('1764400000000-4242-9-tx.0.record'), { at: 1_764_400_000_000 }, 'a name from before the nonce tells the time alone');
  // The same process: its sequence decides, whatever the clock says.
  assert.equal(begunAfter({ at: order.at - 30_000, process: '4242.0a1b2c3d', sequence: 10 }, order, 60_000), true);
  assert.equal(begunAfter({ at: order.at + 30_000, process: '4242.0a1b2c3d', sequence: 8 }, order, 60_000), false);
  // The same pid after a restart (another nonce), or a name without one: the clock, with its slack.
  assert.equal(begunAfter({ at: order.at - 30_000, process: '4242.ffffffff', sequence: 8 }, order, 60_000), true);
  assert.equal(begunAfter({ at: order.at - 61_000, process: '4242.ffffffff', sequence: 80 }, order, 60_000), false);
  assert.equal(begunAfter({ at: order.at }, order, -1), false, 'with no slack, strictly later');
});

test('a journal file a recovery was killed writing, before renaming it into place, is left to that same hand-over on the next open', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    const before = await listTree(sandbox.root);
    commitAndDie(sandbox, 2);
    commitAndDie(sandbox, 'keep');
    const [temp, ...others] = await readdir(journalDir(sandbox));
    assert.ok(temp?.endsWith('.journal.tmp') && others.length === 0, `the killed hand-over leaves its temp: ${temp}`);
    assert.equal((await readdir(logDir(sandbox))).length, 1, 'and the log segment it was handing over');

    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered.map(({ outcome, paths, damaged }) => ({ outcome, paths, damaged })), [
      { outcome: 'rolled_back', paths: ['a/one.txt', 'two.txt'], damaged: [] },
    ]);
    assert.deepEqual(await listTree(sandbox.root), before);
    assert.deepEqual(await readdir(journalDir(sandbox)), [], 'the temp replaced by the journal, which is done with');
    await workspace.close();
  });
});

test('journals round-trip, and any truncation is detected', async () => {
  const before = { bytes: encode('pre-image bytes'), owner: { mode: 0o600, uid: 1, gid: 2 } };
  const { journal, chunks } = encodeJournal('tx', '/root', [
    { path: 'a.txt', tempName: '.a.txt.1234.patchd.tmp', trashed: false, before, afterSha256: 'ab' },
    { path: 'new.txt', tempName: '.new.txt.5678.patchd.tmp', trashed: false, before: null, afterSha256: 'cd' },
  ], ['dir']);
  const bytes = Buffer.concat(chunks);
  const decoded = await decodeJournal(bytes);
  assert.deepEqual(decoded?.record, journal.record);
  assert.deepEqual(decoded?.preImages.map((image) => image && Buffer.from(image).toString()), ['pre-image bytes', null]);
  for (let cut = 0; cut < bytes.length; cut++) assert.equal(await decodeJournal(bytes.subarray(0, cut)), undefined, `cut at ${cut}`);
});
