/**
 * Runaway work: the per-task time limit ends a runaway match with a typed `timeout` and the
 * pool keeps serving; client-side time limits and aborts cancel on the daemon. The runaway is
 * the test's own pool worker (test/helpers/runawayWorker.ts), run by a daemon started through
 * test/helpers/runawayDaemon.ts, on a patch too long for the main thread.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PatchClient, RequestAbortedError, RequestTimeoutError, type Workspace } from '../../client/index.ts';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { RUNAWAY_DAEMON } from '../helpers/runawayDaemon.ts';
import { RUNAWAY_PATCH as RUNAWAY, runawayFile } from '../helpers/runawayWorker.ts';
import { createTempTree, type TempTree } from '../helpers/tempTree.ts';

const patchTo = (text: string) => `--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+${text}\n`;

describe('runaway tasks', () => {
  let client: PatchClient;
  let tree: TempTree;
  let workspace: Workspace;
  before(async () => {
    tree = createTempTree({ 'a.txt': 'a\n' });
    client = await PatchClient.spawn({ taskTimeoutMs: 3_000, daemonArgs: RUNAWAY_DAEMON });
    workspace = await client.openWorkspace(tree.root);
  });
  after(async () => {
    await client.close();
    tree[Symbol.dispose]();
  });

  test('a runaway task ends in a timeout receipt, then the next patch applies', async () => {
    const before = tree.fingerprint();
    const receipt = await workspace.apply(RUNAWAY);
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'timeout');
    assert.match(receipt.error?.hint ?? '', /took too long/);
    assert.equal(tree.fingerprint(), before);
    const next = await workspace.apply(patchTo('b'));
    assert.equal(next.status, 'applied', JSON.stringify(next.error));
    assert.equal(tree.text('a.txt'), 'b\n');
  });

  test('a plan that runs away on a worker (its file is too big for the main thread) ends in a timeout receipt', async () => {
    tree.write('spin.txt', runawayFile('line\n'));
    const receipt = await workspace.apply('--- a/spin.txt\n+++ b/spin.txt\n@@ -2 +2 @@\n-line\n+x\n');
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'timeout');
    assert.equal(tree.text('spin.txt'), runawayFile('line\n'));
  });

  test('a client-side time limit rejects with RequestTimeoutError and the daemon keeps serving', async () => {
    await assert.rejects(workspace.apply(RUNAWAY, { timeoutMs: 200 }), RequestTimeoutError);
    const next = await workspace.apply(patchTo('c').replace('-a', '-b'));
    assert.equal(next.status, 'applied', JSON.stringify(next.error));
  });

  test('an AbortSignal cancels the call', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    await assert.rejects(workspace.apply(RUNAWAY, { signal: controller.signal }), RequestAbortedError);
    assert.equal((await workspace.read('a.txt')).content, 'c\n');
  });
});

test('$/cancelRequest aborts the running task: -32800, not a timeout receipt', async () => {
  using tree = createTempTree({ 'a.txt': 'a\n' });
  const daemon = new RawDaemon({ PATCHD_TASK_TIMEOUT_MS: '60000' }, RUNAWAY_DAEMON);
  const opened = await daemon.request(1, 'workspace/open', { root: tree.root });
  const { workspaceId } = opened.result as { workspaceId: string };
  daemon.send({ jsonrpc: '2.0', id: 2, method: 'patch/apply', params: { workspaceId, patch: RUNAWAY } });
  setTimeout(() => daemon.send({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 2 } }), 300);
  const reply = await daemon.waitFor((frame) => frame.id === 2);
  assert.equal(reply.error?.code, -32800);
  const next = await daemon.request(3, 'patch/apply', { workspaceId, patch: patchTo('b') });
  assert.equal((next.result as { status: string }).status, 'applied');
  daemon.child.stdin.end();
  assert.equal((await daemon.exited).code, 0);
});
