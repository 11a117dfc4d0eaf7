/** patch/undo, session/diff and transaction/list end to end: a spawned daemon driven through client/. */
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, test } from 'node:test';
import { PatchClient, RpcError } from '../../client/index.ts';
import { stateDirFor } from '../../daemon/workspace/stateDir.ts';
import { treeWithModes } from '../helpers/modeTree.ts';
import { suiteClient } from '../helpers/suiteDaemon.ts';
import { createTempTree, sha256 } from '../helpers/tempTree.ts';

const EDIT = '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n';
const EDIT_AGAIN = '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-TWO\n+2\n';
const DELETE_TOOL = '*** Begin Patch\n*** Delete File: bin/tool.sh\n*** End Patch\n';
const MOVE = '*** Begin Patch\n*** Update File: src/old.ts\n*** Move to: lib/new.ts\n@@\n-x\n+y\n*** End Patch\n';

describe('undo over the wire', () => {
  const client = suiteClient();

  test('an undo reverts, lists as format undo, and undoing it redoes', async () => {
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const applied = await workspace.apply(EDIT);
    const preview = await workspace.undo(applied.transactionId, { dryRun: true });
    assert.equal(preview.status, 'dry_run');
    assert.match(preview.files[0]?.diff ?? '', /-TWO\n\+two/);
    assert.equal(tree.text('a.txt'), 'one\nTWO\n');
    const undone = await workspace.undo(applied.transactionId);
    assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
    assert.deepEqual(undone.files.map(({ op, path, sha256Before, sha256After }) => ({ op, path, sha256Before, sha256After })), [
      { op: 'update', path: 'a.txt', sha256Before: sha256('one\nTWO\n'), sha256After: sha256('one\ntwo\n') },
    ]);
    assert.equal(tree.text('a.txt'), 'one\ntwo\n');
    const [latest, earlier] = await workspace.transactions({ limit: 2 });
    assert.equal(latest?.transactionId, undone.transactionId);
    assert.equal(latest?.format, 'undo');
    assert.equal(latest?.undoOf, applied.transactionId);
    assert.deepEqual(earlier?.files, [{ path: 'a.txt', op: 'update' }]);
    assert.equal((await workspace.undo(undone.transactionId)).status, 'applied');
    assert.equal(tree.text('a.txt'), 'one\nTWO\n');
  });

  test('an undo is refused, writing nothing, once a file changed afterwards: by patchd or from outside', async () => {
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const first = await workspace.apply(EDIT);
    await workspace.apply(EDIT_AGAIN);
    const refused = await workspace.undo(first.transactionId);
    assert.equal(refused.status, 'rejected');
    assert.equal(refused.error?.code, 'stale_file');
    assert.equal(refused.error?.currentSha256, sha256('one\n2\n'));
    assert.equal(tree.text('a.txt'), 'one\n2\n');

    const [second] = await workspace.transactions({ limit: 1 });
    tree.write('a.txt', 'edited by hand\n');
    const outside = await workspace.undo(second!.transactionId);
    assert.equal(outside.error?.code, 'stale_file');
    assert.equal(tree.text('a.txt'), 'edited by hand\n');
  });

  test('undoing a delete brings the file back with its mode and its directory with its own; a move goes back, its directory too', async () => {
    using tree = createTempTree({ 'bin/tool.sh': '#!/bin/sh\necho hi\n', 'src/old.ts': 'x\n' });
    chmodSync(join(tree.root, 'bin/tool.sh'), 0o755);
    chmodSync(join(tree.root, 'bin'), 0o700);
    chmodSync(join(tree.root, 'src'), 0o2750);
    const before = treeWithModes(tree.root);
    await using workspace = await client().openWorkspace(tree.root);
    const deleted = await workspace.apply(DELETE_TOOL);
    const moved = await workspace.apply(MOVE);
    assert.equal(moved.status, 'applied', JSON.stringify(moved.error));
    assert.deepEqual(Object.keys(treeWithModes(tree.root)), ['lib', 'lib/new.ts'], 'emptied directories are removed');
    assert.equal((await workspace.undo(moved.transactionId)).status, 'applied');
    const restored = await workspace.undo(deleted.transactionId);
    assert.deepEqual(restored.files.map(({ op, path }) => [op, path]), [['add', 'bin/tool.sh']]);
    assert.deepEqual(treeWithModes(tree.root), before);
    assert.equal(statSync(join(tree.root, 'bin/tool.sh')).mode & 0o777, 0o755);
    assert.deepEqual(['bin', 'src'].map((dir) => statSync(join(tree.root, dir)).mode & 0o7777), [0o700, 0o2750]);
  });

  test('an undo reverts content, not a mode changed from outside since: updated files keep their current modes, undone and redone', async () => {
    using tree = createTempTree({ 'a.sh': 'echo a\n', 'b.sh': 'echo b\n' });
    chmodSync(join(tree.root, 'a.sh'), 0o644);
    chmodSync(join(tree.root, 'b.sh'), 0o755);
    await using workspace = await client().openWorkspace(tree.root);
    const applied = await workspace.apply('--- a/a.sh\n+++ b/a.sh\n@@ -1 +1 @@\n-echo a\n+echo A\n--- a/b.sh\n+++ b/b.sh\n@@ -1 +1 @@\n-echo b\n+echo B\n');
    assert.equal(applied.status, 'applied', JSON.stringify(applied.error));
    chmodSync(join(tree.root, 'a.sh'), 0o755);
    chmodSync(join(tree.root, 'b.sh'), 0o600);
    const modes = () => ['a.sh', 'b.sh'].map((name) => statSync(join(tree.root, name)).mode & 0o777);
    const undone = await workspace.undo(applied.transactionId);
    assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
    assert.deepEqual([tree.text('a.sh'), tree.text('b.sh')], ['echo a\n', 'echo b\n']);
    assert.deepEqual(modes(), [0o755, 0o600]);
    assert.equal((await workspace.undo(undone.transactionId)).status, 'applied');
    assert.deepEqual([tree.text('a.sh'), tree.text('b.sh')], ['echo A\n', 'echo B\n']);
    assert.deepEqual(modes(), [0o755, 0o600]);
  });

  test('a move goes back with the moved file\'s current mode, as the move carried the mode forward', async () => {
    using tree = createTempTree({ 'src/old.ts': 'x\n' });
    chmodSync(join(tree.root, 'src/old.ts'), 0o644);
    await using workspace = await client().openWorkspace(tree.root);
    const moved = await workspace.apply(MOVE);
    assert.equal(moved.status, 'applied', JSON.stringify(moved.error));
    assert.equal(statSync(join(tree.root, 'lib/new.ts')).mode & 0o777, 0o644);
    chmodSync(join(tree.root, 'lib/new.ts'), 0o755);
    assert.equal((await workspace.undo(moved.transactionId)).status, 'applied');
    assert.equal(tree.text('src/old.ts'), 'x\n');
    assert.equal(statSync(join(tree.root, 'src/old.ts')).mode & 0o777, 0o755);
  });

  test('a patch of mode lines only writes nothing and says so; its undo says there is nothing to undo', async () => {
    using tree = createTempTree({ 'run.sh': 'echo hi\n' });
    const before = treeWithModes(tree.root);
    await using workspace = await client().openWorkspace(tree.root);
    const modeOnly = await workspace.apply('diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n');
    assert.equal(modeOnly.status, 'applied', JSON.stringify(modeOnly.error));
    assert.deepEqual(modeOnly.files, []);
    const note = modeOnly.diagnostics.find((diagnostic) => diagnostic.code === 'mode_not_applied');
    assert.equal(note?.path, 'run.sh');
    assert.deepEqual(treeWithModes(tree.root), before);
    const undo = await workspace.undo(modeOnly.transactionId);
    assert.equal(undo.status, 'rejected');
    assert.equal(undo.error?.code, 'unknown_transaction');
    assert.match(undo.error?.message ?? '', /changed no file/);
    assert.deepEqual(treeWithModes(tree.root), before);
  });

  test('an unknown id is a rejected receipt; an unknown since is -32602 unknown_transaction', async () => {
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const receipt = await workspace.undo('no-such-transaction');
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'unknown_transaction');
    await assert.rejects(workspace.sessionDiff({ since: 'no-such-transaction' }), (error: unknown) => (
      error instanceof RpcError && error.code === -32602 && error.data?.code === 'unknown_transaction'
    ));
  });

  test('transaction/list tells a record with a flipped byte, one with no header (status unknown) and one copied from another workspace; none is undone', async () => {
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n', 'b.txt': 'b\n' });
    using other = createTempTree({ 'a.txt': 'one\nthree\n' });
    await using workspace = await client().openWorkspace(tree.root);
    await using elsewhere = await client().openWorkspace(other.root);
    const edited = await workspace.apply(EDIT);
    const garbled = await workspace.apply('--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n');
    const theirs = await elsewhere.apply('--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-three\n+TWO\n');
    await workspace.transactions(); // a history query waits until every record is written
    await elsewhere.transactions();
    const history = (root: string) => join(stateDirFor(root, TEST_STATE_ROOT), 'history');
    const recordOf = (root: string, id: string) => join(history(root), readdirSync(history(root)).find((name) => name.includes(id))!);
    const flipped = readFileSync(recordOf(tree.root, edited.transactionId));
    flipped[flipped.length - 2]! ^= 0x20; // inside a.txt's pre-image: "two" → "twO"
    writeFileSync(recordOf(tree.root, edited.transactionId), flipped);
    writeFileSync(recordOf(tree.root, garbled.transactionId), '\0\0\0');
    const copied = join(history(tree.root), basename(recordOf(other.root, theirs.transactionId)).replace(/^\d{13}/, String(Date.now() + 1000)));
    copyFileSync(recordOf(other.root, theirs.transactionId), copied);

    const listed = await workspace.transactions();
    assert.deepEqual(listed.map(({ transactionId, status, format, files }) => ({ transactionId, status, format, files })), [
      { transactionId: theirs.transactionId, status: 'unknown', format: 'unknown', files: [] },
      { transactionId: garbled.transactionId, status: 'unknown', format: 'unknown', files: [] },
      { transactionId: edited.transactionId, status: 'applied', format: 'unified', files: [{ path: 'a.txt', op: 'update' }] },
    ]);
    assert.match(listed[0]!.damaged ?? '', /was written for another workspace/);
    assert.match(listed[2]!.damaged ?? '', /holds a pre-image of a\.txt that no longer matches the sha256/);
    for (const { transactionId } of listed) assert.equal((await workspace.undo(transactionId)).error?.code, 'io_error');
    assert.equal(tree.text('a.txt'), 'one\nTWO\n', 'nothing written: not the damaged pre-image, nor the other workspace\'s');
    assert.equal(tree.text('b.txt'), 'B\n');
  });

  test('a record whose header still parses but has a byte changed (a deleted file\'s mode) fails its checksum: listed as damaged, undo and session/diff refused, nothing written', async () => {
    using tree = createTempTree({ 'bin/tool.sh': '#!/bin/sh\n', 'b.txt': 'b\n' });
    chmodSync(join(tree.root, 'bin/tool.sh'), 0o755);
    await using workspace = await client().openWorkspace(tree.root);
    const deleted = await workspace.apply(DELETE_TOOL);
    await workspace.transactions(); // a history query waits until every record is written
    const history = join(stateDirFor(tree.root, TEST_STATE_ROOT), 'history');
    const record = join(history, readdirSync(history).find((name) => name.includes(deleted.transactionId))!);
    const bytes = readFileSync(record);
    const at = bytes.indexOf('"mode":493'); // 0o755
    assert.ok(at >= 0 && at < bytes.indexOf(0x0a), 'the mode is in the header');
    bytes.write('"mode":511', at, 'latin1'); // 0o777: the file would come back writable by anyone
    writeFileSync(record, bytes);
    const before = treeWithModes(tree.root);

    const [listed] = await workspace.transactions({ limit: 1 });
    assert.equal(listed?.transactionId, deleted.transactionId);
    assert.match(listed?.damaged ?? '', /^undo record history\/\S+ has a header that fails its checksum/);
    assert.deepEqual({ status: listed?.status, files: listed?.files }, { status: 'unknown', files: [] }, 'nothing told from a header that cannot be trusted');
    const undone = await workspace.undo(deleted.transactionId);
    assert.equal(undone.status, 'rejected');
    assert.equal(undone.error?.code, 'io_error');
    assert.match(undone.error?.message ?? '', /fails its checksum/);
    await assert.rejects(workspace.sessionDiff(), (error: unknown) => error instanceof RpcError && error.data?.code === 'io_error');
    assert.deepEqual(treeWithModes(tree.root), before, 'nothing written');
  });

  test('session/diff: renames as renames, paths back where they began drop out, since is exclusive', async () => {
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n', 'src/old.ts': 'x\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const first = await workspace.apply(EDIT);
    await workspace.apply(MOVE);
    const all = await workspace.sessionDiff();
    assert.deepEqual(all.files, [{ path: 'a.txt', op: 'update' }, { path: 'lib/new.ts', fromPath: 'src/old.ts', op: 'rename' }]);
    assert.match(all.diff, /^diff --git a\/src\/old.ts b\/lib\/new.ts\nrename from src\/old.ts\nrename to lib\/new.ts\n/m);
    const sinceFirst = await workspace.sessionDiff({ since: first.transactionId });
    assert.deepEqual(sinceFirst.files.map((file) => file.path), ['lib/new.ts']);
    await workspace.apply(EDIT.replace('-two\n+TWO', '-TWO\n+two'));
    assert.deepEqual((await workspace.sessionDiff()).files.map((file) => file.path), ['lib/new.ts']);
  });

  test('session/diff: a path moved away, made again and moved again is the source of the first move only', async () => {
    using tree = createTempTree({ 'a.txt': 'x\n' });
    await using workspace = await client().openWorkspace(tree.root);
    for (const patch of ['*** Move File: a.txt -> b.txt\n', '*** Add File: a.txt\n+y\n', '*** Move File: a.txt -> c.txt\n']) {
      assert.equal((await workspace.apply(`*** Begin Patch\n${patch}*** End Patch\n`)).status, 'applied');
    }
    const { files, diff } = await workspace.sessionDiff();
    assert.deepEqual(files, [{ path: 'b.txt', fromPath: 'a.txt', op: 'rename' }, { path: 'c.txt', op: 'add' }]);
    assert.equal(diff.match(/^rename from /gm)?.length, 1, diff);
  });

  test('session/diff of files that are not UTF-8 text: git binary patches that real git apply turns into the exact bytes', async () => {
    const png = Buffer.from('\x89PNG\r\n\x1a\n\x00\xff', 'latin1');
    const blob = Buffer.from(Array.from({ length: 700 }, (_, index) => (index * 37) % 256));
    const initial = { 'logo.png': png, 'img/a.bin': blob, 'a.txt': 'cafe\n', 'b.txt': 'plain\n', 'keep.txt': 'kept\n' };
    using tree = createTempTree(initial);
    await using workspace = await client().openWorkspace(tree.root);
    const patches = [
      '*** Delete File: logo.png\n*** Update File: a.txt\n@@\n-cafe\n+cafe au lait\n*** Add File: new.txt\n+n\n',
      '*** Move File: img/a.bin -> img/b.bin\n*** Update File: b.txt\n@@\n-plain\n+plain text\n',
    ];
    for (const patch of patches) assert.equal((await workspace.apply(`*** Begin Patch\n${patch}*** End Patch\n`)).status, 'applied');
    // Written outside patchd, after: Latin-1 text, text that became binary, a moved binary file edited, binary content in an added file.
    tree.write('a.txt', Buffer.from('caf\xe9 au lait\n', 'latin1'));
    tree.write('b.txt', Buffer.from('plain\x00text\n', 'latin1'));
    tree.write('img/b.bin', Buffer.concat([blob.subarray(0, 300), Buffer.from([0, 1, 2]), blob.subarray(300)]));
    tree.write('new.txt', Buffer.from([0xfe, 0xff, 0x00, 0x41]));

    const { diff, files } = await workspace.sessionDiff();
    assert.deepEqual(files, [
      { path: 'a.txt', op: 'update', binary: true },
      { path: 'b.txt', op: 'update', binary: true },
      { path: 'img/b.bin', fromPath: 'img/a.bin', op: 'rename', binary: true },
      { path: 'logo.png', op: 'delete', binary: true },
      { path: 'new.txt', op: 'add', binary: true },
    ]);
    assert.doesNotMatch(diff, /\uFFFD/);
    using copy = createTempTree(initial);
    const patchFile = join(copy.base, 'session.diff');
    writeFileSync(patchFile, diff);
    execFileSync('git', ['apply', '--whitespace=nowarn', patchFile], { cwd: copy.root, stdio: ['ignore', 'ignore', 'pipe'] });
    assert.deepEqual(treeWithModes(copy.root), treeWithModes(tree.root), 'git apply reproduces the tree byte for byte');

    const deleted = (await workspace.transactions({ limit: 2 }))[1]!;
    tree.write('a.txt', 'cafe au lait\n');
    tree.write('new.txt', 'n\n');
    const undone = await workspace.undo(deleted.transactionId);
    assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
    assert.ok(readFileSync(join(tree.root, 'logo.png')).equals(png), 'undo restores the binary file exactly');
    assert.equal(undone.files.find((file) => file.path === 'logo.png')?.diff, '', 'no text diff of a binary file in the receipt, as for a patch');
    assert.match(undone.files.find((file) => file.path === 'a.txt')?.diff ?? '', /-cafe au lait\n\+cafe\n/);
  });
});


test('an undo works after the daemon restarts', async () => {
  using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
  const first = await PatchClient.spawn();
  let transactionId: string;
  try {
    const workspace = await first.openWorkspace(tree.root);
    transactionId = (await workspace.apply(EDIT)).transactionId;
  } finally {
    await first.close();
  }
  await using second = await PatchClient.spawn();
  const workspace = await second.openWorkspace(tree.root);
  assert.equal((await workspace.transactions())[0]?.transactionId, transactionId);
  assert.equal((await workspace.undo(transactionId)).status, 'applied');
  assert.equal(tree.text('a.txt'), 'one\ntwo\n');
});
