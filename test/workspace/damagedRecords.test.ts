/**
 * Undo records that cannot be trusted — cut short, garbage, empty, NULs, a pre-image that no
 * longer matches its sha256, a header that fails its checksum, another workspace's, transaction's
 * or unit's — are never passed over in silence: the log lists their transaction as damaged, and
 * an undo or a session diff that needs them is refused naming it. A record still being written
 * (its commit in flight) is passed over, as before. Records written before headers had a checksum,
 * or pre-images a sha256, still load and undo.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chmod, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { undoTransaction } from '../../daemon/server/undoPatch.ts';
import type { Workspace } from '../../daemon/workspace/workspace.ts';
import { deleteFile, listTree, planOf, snapshotAndCommit, updateFile, withSandbox, type Sandbox } from './fixtures.ts';

const signal = new AbortController().signal;
const sha256 = (bytes: Uint8Array | string) => createHash('sha256').update(bytes).digest('hex');
const historyDir = (sandbox: Sandbox) => path.join(sandbox.state, 'history');

/** Commits `a.txt` → `A1`, then `b.txt` → `B1`; returns both ids and the record file of each. */
async function twoTransactions(sandbox: Sandbox, workspace: Workspace) {
  const first = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A1\n')));
  const second = await snapshotAndCommit(workspace, planOf(updateFile('b.txt', 'B1\n')));
  assert.ok(first.status === 'applied' && second.status === 'applied');
  await workspace.settled(); // a one-file commit's record is written after its report
  const names = await readdir(historyDir(sandbox));
  const recordOf = (id: string) => path.join(historyDir(sandbox), names.find((name) => name.includes(id))!);
  return { first: first.transactionId, second: second.transactionId, firstRecord: recordOf(first.transactionId), secondRecord: recordOf(second.transactionId) };
}

/** The record's header line and the bytes after it. */
async function splitRecord(file: string): Promise<{ header: Record<string, unknown> & { entries: { before: Record<string, unknown> | null }[] }; line: Buffer; body: Buffer }> {
  const bytes = await readFile(file);
  const newline = bytes.indexOf(0x0a);
  const line = bytes.subarray(0, newline);
  return { header: JSON.parse(line.toString('utf8')), line, body: bytes.subarray(newline + 1) };
}

/** Each kind of damage, and whether the record's header can still be read (then the log still says what the transaction was). */
const DAMAGE: Record<string, { damage: (bytes: Buffer) => Uint8Array; headerReadable: boolean }> = {
  'cut short inside its pre-image': { damage: (bytes) => bytes.subarray(0, bytes.length - 2), headerReadable: true },
  'cut short inside its header': { damage: (bytes) => bytes.subarray(0, 20), headerReadable: false },
  'garbage': { damage: () => Buffer.from('not a record at all\nreally not\n'), headerReadable: false },
  'empty': { damage: () => new Uint8Array(0), headerReadable: false },
  'NULs (a crash on a filesystem that zero-fills)': { damage: (bytes) => new Uint8Array(bytes.length), headerReadable: false },
};

for (const [kind, { damage, headerReadable }] of Object.entries(DAMAGE)) {
  test(`a record that is ${kind}: the log lists its transaction as damaged; its undo and a session diff over it are refused, naming it`, async () => {
    await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, async (sandbox) => {
      const workspace = await sandbox.open();
      const { first, second, firstRecord } = await twoTransactions(sandbox, workspace);
      await writeFile(firstRecord, damage(await readFile(firstRecord)));
      const recordName = path.basename(firstRecord);

      const listed = await workspace.transactions(10);
      assert.deepEqual(listed.map((entry) => entry.transactionId), [second, first], 'the damaged transaction is still listed');
      assert.equal(listed[0]!.damaged, undefined);
      assert.ok(listed[1]!.damaged?.includes(`history/${recordName}`), listed[1]!.damaged);
      assert.ok(!listed[1]!.damaged?.includes(sandbox.state), 'the state dir\'s path stays private');
      // Nothing claimed that cannot be read: with no header, neither whether all of it applied, nor what it was.
      const { status, format, files } = listed[1]!;
      assert.deepEqual({ status, format, files }, headerReadable
        ? { status: 'applied', format: 'unified', files: [{ path: 'a.txt', op: 'update' }] }
        : { status: 'unknown', format: 'unknown', files: [] });

      const changes = await workspace.sessionChanges(null);
      assert.ok(changes !== undefined && !changes.ok, 'no net change told without that transaction');
      assert.equal(changes.error.code, 'io_error');
      assert.ok(changes.error.message.includes(first) && changes.error.message.includes(recordName), changes.error.message);
      const later = await workspace.sessionChanges(first);
      assert.ok(later?.ok, 'a window after it is told');
      assert.deepEqual(later.value.map((change) => change.path), ['b.txt']);

      const undone = await undoTransaction({ workspaceId: 'ws', transactionId: first }, { workspace, signal });
      assert.equal(undone.status, 'rejected');
      assert.equal(undone.error?.code, 'io_error');
      assert.ok(undone.error?.message.includes(first), undone.error?.message);
      assert.deepEqual(await listTree(sandbox.root), { 'a.txt': 'file:A1\n', 'b.txt': 'file:B1\n' }, 'nothing written');
      assert.equal((await undoTransaction({ workspaceId: 'ws', transactionId: second }, { workspace, signal })).status, 'applied', 'the others still undo');
      await workspace.close();
    });
  });
}

test('new records keep each pre-image\'s sha256; a flipped byte in one makes its undo and the session diff refuse instead of writing wrong bytes', async () => {
  await withSandbox({ 'a.txt': 'alpha\n', 'b.txt': 'b\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const { first, second, firstRecord } = await twoTransactions(sandbox, workspace);
    const { header, body } = await splitRecord(firstRecord);
    assert.equal(header.entries[0]!.before?.sha256, sha256('alpha\n'));
    const bytes = await readFile(firstRecord);
    const at = bytes.length - body.length;
    bytes[at] = bytes[at]! ^ 0x20; // 'alpha' → 'Alpha'
    await writeFile(firstRecord, bytes);

    const undone = await undoTransaction({ workspaceId: 'ws', transactionId: first }, { workspace, signal });
    assert.equal(undone.error?.code, 'io_error');
    assert.match(undone.error?.message ?? '', /undo record history\/\S+ holds a pre-image of a\.txt that no longer matches the sha256/);
    assert.ok(undone.error?.message.includes(first));
    assert.equal((await readFile(path.join(sandbox.root, 'a.txt'), 'utf8')), 'A1\n', 'nothing written');

    const changes = await workspace.sessionChanges(null);
    assert.ok(changes !== undefined && !changes.ok);
    assert.equal(changes.error.code, 'io_error');
    assert.match(changes.error.message, /pre-image of a\.txt/);
    // The log checks each listed record's pre-images too, and says what it still knows of the transaction: its header is whole.
    const listed = await workspace.transactions(10);
    assert.deepEqual(listed.map((entry) => entry.transactionId), [second, first]);
    assert.equal(listed[0]!.damaged, undefined);
    assert.match(listed[1]!.damaged ?? '', /^undo record history\/\S+ holds a pre-image of a\.txt that no longer matches the sha256/);
    const { status, format, files } = listed[1]!;
    assert.deepEqual({ status, format, files }, { status: 'applied', format: 'unified', files: [{ path: 'a.txt', op: 'update' }] });
    await workspace.close();
  });
});

test('a record copied from another workspace\'s history is listed as damaged, and never drives an undo or a session diff here', async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (other) => {
    await withSandbox({ 'a.txt': 'mine\n' }, async (sandbox) => {
      // The same edit in both workspaces: this one's a.txt holds what the other's transaction left, but had other bytes before it.
      const elsewhere = await other.open();
      const theirs = await snapshotAndCommit(elsewhere, planOf(updateFile('a.txt', 'A1\n')));
      await elsewhere.close();
      const workspace = await sandbox.open();
      const mine = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A1\n')));
      assert.ok(theirs.status === 'applied' && mine.status === 'applied');
      await workspace.settled();
      const [theirRecord] = await readdir(historyDir(other));
      const copied = theirRecord!.replace(/^\d{13}/, String(Date.now() + 1000)); // newer than every record here
      await writeFile(path.join(historyDir(sandbox), copied), await readFile(path.join(historyDir(other), theirRecord!)));

      const listed = await workspace.transactions(10);
      assert.deepEqual(listed.map((entry) => entry.transactionId), [theirs.transactionId, mine.transactionId]);
      assert.match(listed[0]!.damaged ?? '', new RegExp(`^undo record history/${copied.replaceAll('.', '\\.')} was written for another workspace`));
      assert.ok(!listed[0]!.damaged?.includes(other.root), 'the other workspace\'s root is not told');
      assert.deepEqual({ status: listed[0]!.status, format: listed[0]!.format, files: listed[0]!.files }, { status: 'unknown', format: 'unknown', files: [] });
      assert.equal(listed[1]!.damaged, undefined);

      const undone = await undoTransaction({ workspaceId: 'ws', transactionId: theirs.transactionId }, { workspace, signal });
      assert.equal(undone.status, 'rejected');
      assert.equal(undone.error?.code, 'io_error');
      assert.ok(undone.error?.message.includes(copied), undone.error?.message);
      assert.equal(await readFile(path.join(sandbox.root, 'a.txt'), 'utf8'), 'A1\n', 'the other workspace\'s pre-image is not written here');
      const changes = await workspace.sessionChanges(null);
      assert.equal(changes?.ok === false && changes.error.code, 'io_error');
      assert.equal((await undoTransaction({ workspaceId: 'ws', transactionId: mine.transactionId }, { workspace, signal })).status, 'applied');
      assert.equal(await readFile(path.join(sandbox.root, 'a.txt'), 'utf8'), 'mine\n');
      await workspace.close();
    });
  });
});

test('a record under the name of another transaction (renamed, or copied under a new name) is damaged: it undoes nothing under that name', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const { first, firstRecord } = await twoTransactions(sandbox, workspace);
    const renamed = path.basename(firstRecord).replace(first, 'tx_renamed').replace(/^\d{13}/, String(Date.now() + 1000));
    await writeFile(path.join(historyDir(sandbox), renamed), await readFile(firstRecord));

    const [listed] = await workspace.transactions(1);
    assert.equal(listed?.transactionId, 'tx_renamed');
    assert.match(listed?.damaged ?? '', new RegExp(`history/${renamed} is named for transaction tx_renamed but holds another transaction's \\("${first}"\\)`));
    const undone = await undoTransaction({ workspaceId: 'ws', transactionId: 'tx_renamed' }, { workspace, signal });
    assert.equal(undone.error?.code, 'io_error');
    assert.equal(await readFile(path.join(sandbox.root, 'a.txt'), 'utf8'), 'A1\n');
    await workspace.close();
  });
});

test('a record copied under its transaction with another unit number is damaged: its unit\'s files are not counted, nor undone, twice', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const { first, firstRecord } = await twoTransactions(sandbox, workspace);
    const copied = path.basename(firstRecord).replace(/\.0\.record$/, '.1.record');
    await writeFile(path.join(historyDir(sandbox), copied), await readFile(firstRecord));

    const listed = (await workspace.transactions(10)).find((entry) => entry.transactionId === first);
    assert.equal(listed?.damaged, `undo record history/${copied} is named for unit 1 of its transaction but was written for another unit (0)`);
    assert.deepEqual(listed?.files, [{ path: 'a.txt', op: 'update' }], 'what its own record says');
    const undone = await undoTransaction({ workspaceId: 'ws', transactionId: first }, { workspace, signal });
    assert.equal(undone.error?.code, 'io_error');
    assert.equal(await readFile(path.join(sandbox.root, 'a.txt'), 'utf8'), 'A1\n');
    await workspace.close();
  });
});

/** Headers as earlier versions wrote them: without a checksum, and (older still) without the sha256 of each pre-image. */
const EARLIER_HEADERS: Record<string, (header: Awaited<ReturnType<typeof splitRecord>>['header']) => void> = {
  'before headers had a checksum': (header) => delete header.headerCrc32,
  'before pre-images had a sha256': (header) => {
    delete header.headerCrc32;
    for (const entry of header.entries) delete entry.before?.sha256;
  },
};

for (const [when, strip] of Object.entries(EARLIER_HEADERS)) {
  test(`a record written ${when} still lists, diffs and undoes`, async () => {
    await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, async (sandbox) => {
      const workspace = await sandbox.open();
      const { first, firstRecord } = await twoTransactions(sandbox, workspace);
      const { header, body } = await splitRecord(firstRecord);
      strip(header);
      await writeFile(firstRecord, Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body]));

      assert.equal((await workspace.transactions(10)).find((entry) => entry.transactionId === first)?.damaged, undefined);
      const changes = await workspace.sessionChanges(null);
      assert.ok(changes?.ok);
      assert.deepEqual(changes.value.map((change) => change.path), ['a.txt', 'b.txt']);
      const undone = await undoTransaction({ workspaceId: 'ws', transactionId: first }, { workspace, signal });
      assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
      assert.equal(await readFile(path.join(sandbox.root, 'a.txt'), 'utf8'), 'a\n');
      await workspace.close();
    });
  });
}

test('a record being written (its commit in flight, its intent unsettled in the commit log) is passed over, not called damaged', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' }, async (sandbox) => {
    let release!: () => void;
    let paused!: () => void;
    const atDone = new Promise<void>((resolve) => (paused = resolve));
    const hold = new Promise<void>((resolve) => (release = resolve));
    let pause = false;
    const workspace = await sandbox.open({ hooks: { beforeDone: async () => { if (pause) { paused(); await hold; } } } });
    const { first, second } = await twoTransactions(sandbox, workspace);
    pause = true;
    // Two files: logged done only once durable, after its record is written — held there.
    const committing = snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A2\n'), updateFile('c.txt', 'C2\n')));
    await atDone;
    pause = false;
    const names = (await readdir(historyDir(sandbox))).filter((name) => name.endsWith('.record') && !name.includes(first) && !name.includes(second));
    assert.equal(names.length, 1, 'its record is written before it is logged done');
    const inFlight = path.join(historyDir(sandbox), names[0]!);
    const whole = await readFile(inFlight);
    await writeFile(inFlight, whole.subarray(0, 30)); // as if caught half-written

    const listed = await workspace.transactions(10);
    assert.equal(listed.length, 2, 'the commit in flight is not listed yet');
    assert.ok(listed.every((entry) => entry.damaged === undefined));
    const changes = await workspace.sessionChanges(null);
    assert.ok(changes?.ok, 'the session diff is told without it, as before it is done');
    assert.deepEqual(changes.value.map((change) => change.path), ['a.txt', 'b.txt']);

    await writeFile(inFlight, whole);
    release();
    const outcome = await committing;
    assert.equal(outcome.status, 'applied');
    const now = await workspace.transactions(10);
    assert.equal(now.length, 3);
    assert.ok(now.every((entry) => entry.damaged === undefined));
    await workspace.close();
  });
});

/** The record `file` with its header line edited by `edit` (which must change it): a byte flipped on disk, or an edit by hand. */
async function editHeader(file: string, edit: (line: string) => string): Promise<void> {
  const { line, body } = await splitRecord(file);
  const edited = edit(line.toString('utf8'));
  assert.notEqual(edited, line.toString('utf8'), 'the edit changes the header');
  await writeFile(file, Buffer.concat([Buffer.from(`${edited}\n`), body]));
}

/** A digit other than `digit`. */
const otherDigit = (digit: string) => String((Number(digit) + 1) % 10);

/** Edits that leave a header JSON and a record's (each still parses) but change what it says, or its checksum. */
const HEADER_EDITS: Record<string, (line: string) => string> = {
  // 0o644 is 420, 0o744 484: one digit off gives another mode, and a file deleted by the transaction would come back with it.
  "a digit of a deleted file's mode": (line) => line.replace('"mode":420', '"mode":421'),
  'a character of a path': (line) => line.replace('"path":"gone.txt"', '"path":"gonE.txt"'),
  'the operation of a file': (line) => line.replace('"op":"delete"', '"op":"update"'),
  // Its last digit: a first digit turned 0 would leave no JSON number at all (a leading zero).
  'a digit of its checksum': (line) => line.replace(/("headerCrc32":\d*)(\d)\}/, (_, head: string, digit: string) => `${head}${otherDigit(digit)}}`),
  // Without its checksum's name, it would pass for a header written before headers had one.
  "a character of its checksum's name": (line) => line.replace('"headerCrc32"', '"headerCrc33"'),
};

for (const [kind, edit] of Object.entries(HEADER_EDITS)) {
  test(`a record whose header has ${kind} changed (still JSON) fails its checksum: listed as damaged, its undo and a session diff over it refused, nothing written`, async () => {
    await withSandbox({ 'gone.txt': 'kept bytes\n', 'b.txt': 'b\n' }, async (sandbox) => {
      await chmod(path.join(sandbox.root, 'gone.txt'), 0o644);
      const workspace = await sandbox.open();
      const deleted = await snapshotAndCommit(workspace, planOf(deleteFile('gone.txt')));
      const later = await snapshotAndCommit(workspace, planOf(updateFile('b.txt', 'B1\n')));
      assert.ok(deleted.status === 'applied' && later.status === 'applied');
      await workspace.settled();
      const recordName = (await readdir(historyDir(sandbox))).find((name) => name.includes(deleted.transactionId))!;
      await editHeader(path.join(historyDir(sandbox), recordName), edit);

      const listed = await workspace.transactions(10);
      assert.deepEqual(listed.map((entry) => entry.transactionId), [later.transactionId, deleted.transactionId]);
      assert.equal(listed[0]!.damaged, undefined);
      assert.equal(listed[1]!.damaged, `undo record history/${recordName} has a header that fails its checksum (changed since it was written: a disk fault, or an edit by hand), so nothing it says can be trusted`);
      // None of what the header says is told: it cannot be trusted.
      assert.deepEqual({ status: listed[1]!.status, format: listed[1]!.format, files: listed[1]!.files }, { status: 'unknown', format: 'unknown', files: [] });
      const undone = await undoTransaction({ workspaceId: 'ws', transactionId: deleted.transactionId }, { workspace, signal });
      assert.equal(undone.status, 'rejected');
      assert.equal(undone.error?.code, 'io_error');
      assert.ok(undone.error?.message.includes(recordName) && undone.error.message.includes(deleted.transactionId), undone.error?.message);
      const changes = await workspace.sessionChanges(null);
      assert.equal(changes?.ok === false && changes.error.code, 'io_error');
      assert.deepEqual(await listTree(sandbox.root), { 'b.txt': 'file:B1\n' }, 'nothing written');
      assert.equal((await undoTransaction({ workspaceId: 'ws', transactionId: later.transactionId }, { workspace, signal })).status, 'applied', 'the others still undo');
      await workspace.close();
    });
  });
}
