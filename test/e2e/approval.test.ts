/**
 * Approval end to end: a shared daemon asks the client that sent a patch (`patch/approve`)
 * before writing it, holding no lock while it waits.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ApproveParams } from '../../client/index.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const EDIT_A = '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n';
const EDIT_B = '--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-bee\n+BEE\n';
const ADD_SECRET = '*** Begin Patch\n*** Add File: secrets/key.txt\n+hunter2\n*** End Patch\n';

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
});
