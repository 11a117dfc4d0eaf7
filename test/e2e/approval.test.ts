/**
 * Approval end to end: a shared daemon asks the client that sent a patch (`patch/approve`)
 * before writing it, holding no lock while it waits.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ApproveParams } from '../../client/index.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const EDIT_A = '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n';
const EDIT_B = '--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-bee\n+BEE\n';
const ADD_SECRET = '*** Begin Patch\n*** Add File: secrets/key.txt\n+hunter2\n*** End Patch\n';
const EDIT_KEY = '--- a/secrets/key\n+++ b/secrets/key\n@@ -1 +1 @@\n-old\n+new\n';

/** A promise with its resolve function, to hold an approval open while a test acts. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

describe('approval over the wire', () => {
  test('approved: the client sees the planned diff, then the patch is written', async () => {
    await using daemon = await SocketDaemon.start();
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
    const asked: ApproveParams[] = [];
    const client = await daemon.connect();
    const workspace = await client.openWorkspace(tree.root, { approval: 'always', onApprove: (request) => (asked.push(request), true) });
    const receipt = await workspace.apply(EDIT_A);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.transactionId, receipt.transactionId);
    assert.equal(asked[0]?.undoOf, undefined, 'a patch is not an undo');
    assert.match(asked[0]?.files[0]?.diff ?? '', /-two\n\+TWO/);
    assert.equal(tree.text('a.txt'), 'one\nTWO\n');
  });

  test('declined, or unanswered in time: rejected declined, nothing written', async () => {
    await using daemon = await SocketDaemon.start();
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
    const client = await daemon.connect();
    const declining = await client.openWorkspace(tree.root, { approval: { ask: ['*.txt'] }, onApprove: () => ({ approved: false, reason: 'not today' }) });
    const declined = await declining.apply(EDIT_A);
    assert.equal(declined.status, 'rejected');
    assert.equal(declined.error?.code, 'declined');
    assert.match(declined.error?.message ?? '', /not today/);
    const silent = await daemon.connect();
    const waiting = await silent.openWorkspace(tree.root, { approval: 'always', approvalTimeoutMs: 50, onApprove: () => new Promise<boolean>(() => {}) });
    assert.equal((await waiting.apply(EDIT_A)).error?.code, 'declined');
    assert.equal(tree.text('a.txt'), 'one\ntwo\n');
  });

  test('a deny glob is permission_denied without asking; paths outside ask globs are not asked about', async () => {
    await using daemon = await SocketDaemon.start();
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
    let asked = 0;
    const client = await daemon.connect();
    const workspace = await client.openWorkspace(tree.root, { approval: { ask: ['docs/**'], deny: ['secrets/**'] }, onApprove: () => (asked++, true) });
    const denied = await workspace.apply(ADD_SECRET);
    assert.equal(denied.error?.code, 'permission_denied');
    assert.equal(denied.error?.path, 'secrets/key.txt');
    assert.equal((await workspace.apply(EDIT_A)).status, 'applied');
    assert.equal(asked, 0);
    assert.equal(tree.text('secrets/key.txt'), undefined);
  });

  test('globs and a path built to make matching slow: checked within a bounded work, or refused limit_exceeded, never a stalled daemon', async () => {
    await using daemon = await SocketDaemon.start();
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
    // The report's policy: 100 deny globs of 998 characters (the most the schema allows), each `**/a*/` 166 times.
    const slow = `${'**/a*/'.repeat(166)}zz`;
    const same = await (await daemon.connect()).openWorkspace(tree.root, { approval: { deny: Array.from({ length: 100 }, () => slow) } });
    const matching = `${'a/'.repeat(166)}zz`;
    const denied = await same.apply([{ type: 'create_file', path: matching, diff: '+x\n' }]);
    assert.equal(denied.error?.code, 'permission_denied', JSON.stringify(denied.error));
    assert.equal((await same.apply(EDIT_A)).status, 'applied');
    const different = await (await daemon.connect()).openWorkspace(tree.root, {
      approval: { deny: Array.from({ length: 100 }, (_, index) => `${slow.slice(0, 990)}zz${index}`) },
    });
    const refused = await different.apply([{ type: 'create_file', path: `${'a/'.repeat(2047)}b`, diff: '+x\n' }]);
    assert.equal(refused.status, 'rejected');
    assert.equal(refused.error?.code, 'limit_exceeded', JSON.stringify(refused.error));
    assert.equal(refused.error?.limit?.name, 'approvalGlobSteps');
    assert.equal(existsSync(join(tree.root, 'a')), false, 'nothing written');
    const bystander = await (await daemon.connect()).openWorkspace(tree.root);
    assert.equal((await bystander.read('a.txt')).content, 'one\nTWO\n');
  });

  test('while a client decides, no lock is held: another client patches the same and other files', async () => {
    await using daemon = await SocketDaemon.start();
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n', 'b.txt': 'bee\n' });
    const asking = deferred<void>();
    const answer = deferred<boolean>();
    const careful = await (await daemon.connect()).openWorkspace(tree.root, {
      approval: 'always', onApprove: () => (asking.resolve(), answer.promise),
    });
    const other = await (await daemon.connect()).openWorkspace(tree.root);
    const pending = careful.apply(EDIT_A);
    await asking.promise;
    assert.equal((await other.apply(EDIT_B)).status, 'applied');
    assert.equal((await other.apply(EDIT_A.replace('+TWO', '+2'))).status, 'applied');
    answer.resolve(true);
    // The file changed under the approved plan: planned again, the patch no longer applies.
    const receipt = await pending;
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'context_not_found');
    assert.equal(tree.text('a.txt'), 'one\n2\n');
    assert.equal(tree.text('b.txt'), 'BEE\n');
  });

  test('a file changing while the client decides: planned again and asked again when the change differs', async () => {
    await using daemon = await SocketDaemon.start();
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
    const asked: string[] = [];
    const workspace = await (await daemon.connect()).openWorkspace(tree.root, {
      approval: 'always',
      onApprove: (request) => {
        asked.push(request.files[0]?.diff ?? '');
        if (asked.length === 1) writeFileSync(join(tree.root, 'a.txt'), 'zero\none\ntwo\n');
        return true;
      },
    });
    const receipt = await workspace.apply(EDIT_A);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(asked.length, 2);
    assert.notEqual(asked[0], asked[1]);
    assert.equal(tree.text('a.txt'), 'zero\none\nTWO\n');
  });

  test('the client going away mid-wait: nothing written, and the file is free for others', async () => {
    await using daemon = await SocketDaemon.start();
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
    const asking = deferred<void>();
    const leaving = await daemon.connect();
    const workspace = await leaving.openWorkspace(tree.root, { approval: 'always', onApprove: () => (asking.resolve(), new Promise<boolean>(() => {})) });
    const pending = workspace.apply(EDIT_A).catch((error: unknown) => error);
    await asking.promise;
    await leaving.close();
    await pending;
    const other = await (await daemon.connect()).openWorkspace(tree.root);
    assert.equal((await other.apply(EDIT_A.replace('+TWO', '+2'))).status, 'applied');
    assert.equal(tree.text('a.txt'), 'one\n2\n');
  });

  test('an undo is held to the undoing client\'s policy, whoever made the transaction: a deny path refuses it unasked, dry run too', async () => {
    await using daemon = await SocketDaemon.start();
    using tree = createTempTree({ 'secrets/key': 'old\n' });
    const free = await (await daemon.connect()).openWorkspace(tree.root);
    const changed = await free.apply(EDIT_KEY);
    assert.equal(changed.status, 'applied', JSON.stringify(changed.error));
    const undone = await free.undo(changed.transactionId);
    assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
    assert.equal(tree.text('secrets/key'), 'old\n');

    let asked = 0;
    const guarded = await (await daemon.connect()).openWorkspace(tree.root, {
      approval: { ask: ['**'], deny: ['secrets/**'] }, onApprove: () => (asked++, false),
    });
    assert.equal((await guarded.apply(EDIT_KEY)).error?.code, 'permission_denied');
    for (const dryRun of [false, true]) {
      const redo = await guarded.undo(undone.transactionId, { dryRun });
      assert.equal(redo.status, 'rejected', `dryRun ${dryRun}`);
      assert.equal(redo.error?.code, 'permission_denied');
      assert.equal(redo.error?.path, 'secrets/key');
      assert.deepEqual(redo.files, [], 'a refused dry run shows no diff of the denied file either');
    }
    assert.equal(asked, 0);
    assert.equal(tree.text('secrets/key'), 'old\n');
    assert.equal((await free.transactions({ limit: 1 }))[0]?.transactionId, undone.transactionId, 'nothing was committed');
  });

  test('an undo or redo that needs approval is asked about with its own files and diffs; declined writes nothing, a dry run is not asked', async () => {
    await using daemon = await SocketDaemon.start();
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
    const other = await (await daemon.connect()).openWorkspace(tree.root);
    const applied = await other.apply(EDIT_A);
    const asked: ApproveParams[] = [];
    const answers = [{ approved: false, reason: 'not today' }, { approved: true }, { approved: true }];
    const careful = await (await daemon.connect()).openWorkspace(tree.root, {
      approval: 'always', onApprove: (request) => (asked.push(request), answers.shift() ?? false),
    });

    const declined = await careful.undo(applied.transactionId);
    assert.equal(declined.status, 'rejected');
    assert.equal(declined.error?.code, 'declined');
    assert.match(declined.error?.message ?? '', /undo was not approved: not today/);
    assert.equal(asked[0]?.transactionId, declined.transactionId);
    assert.equal(asked[0]?.undoOf, applied.transactionId, 'the client is told it is asked about an undo, and of what');
    assert.deepEqual(asked[0]?.files.map(({ op, path }) => [op, path]), [['update', 'a.txt']]);
    assert.match(asked[0]?.files[0]?.diff ?? '', /-TWO\n\+two/);
    assert.equal(tree.text('a.txt'), 'one\nTWO\n');

    const preview = await careful.undo(applied.transactionId, { dryRun: true });
    assert.equal(preview.status, 'dry_run');
    assert.equal(asked.length, 1, 'a dry run is not asked about');

    const undone = await careful.undo(applied.transactionId);
    assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
    assert.equal(asked[1]?.transactionId, undone.transactionId);
    assert.equal(tree.text('a.txt'), 'one\ntwo\n');
    const redone = await careful.undo(undone.transactionId);
    assert.equal(redone.status, 'applied', JSON.stringify(redone.error));
    assert.match(asked[2]?.files[0]?.diff ?? '', /-two\n\+TWO/);
    assert.equal(asked[2]?.undoOf, undone.transactionId, 'a redo names the undo it undoes');
    assert.equal(tree.text('a.txt'), 'one\nTWO\n');
    assert.equal(asked.length, 3);

    let docsAsked = 0;
    const docsOnly = await (await daemon.connect()).openWorkspace(tree.root, { approval: { ask: ['docs/**'] }, onApprove: () => (docsAsked++, false) });
    assert.equal((await docsOnly.undo(redone.transactionId)).status, 'applied', 'paths outside the ask globs are not asked about');
    assert.equal(docsAsked, 0);
  });

  test('while a client decides about an undo, no lock is held; a file changed meanwhile makes it stale_file, nothing written', async () => {
    await using daemon = await SocketDaemon.start();
    using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
    const other = await (await daemon.connect()).openWorkspace(tree.root);
    const applied = await other.apply(EDIT_A);
    const careful = await (await daemon.connect()).openWorkspace(tree.root, {
      approval: 'always',
      // Patching the same file while asked only returns if the undo holds no lock on it.
      onApprove: async () => (await other.apply(EDIT_A.replace('-two\n+TWO', '-TWO\n+2'))).status === 'applied',
    });
    const receipt = await careful.undo(applied.transactionId);
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'stale_file');
    assert.equal(tree.text('a.txt'), 'one\n2\n');
  });
});
