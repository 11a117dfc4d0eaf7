/**
 * Many requests, or many items of one batch, in flight at once: every one is answered, and the
 * daemon's stderr stays structured (one JSON object per line; no plain-text Node warning such
 * as `MaxListenersExceededWarning` from many listeners on one long-lived signal).
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const REQUESTS = 40;

test(`${REQUESTS} patches held in flight at once are all answered, and stderr carries only log records`, async () => {
  const files = Object.fromEntries(Array.from({ length: REQUESTS }, (_, index) => [`f${index}.txt`, `old ${index}\n`]));
  using tree = createTempTree(files);
  await using daemon = new RawDaemon();
  await daemon.request(1, 'initialize', {});
  // Approval holds each patch in flight until this test answers its `patch/approve`.
  const opened = await daemon.request(2, 'workspace/open', { root: tree.root, options: { approval: 'always' } });
  const { workspaceId } = opened.result as { workspaceId: string };
  for (let index = 0; index < REQUESTS; index++) {
    const patch = `--- a/f${index}.txt\n+++ b/f${index}.txt\n@@ -1 +1 @@\n-old ${index}\n+new ${index}\n`;
    daemon.send({ jsonrpc: '2.0', id: 100 + index, method: 'patch/apply', params: { workspaceId, patch } });
  }
  const asks = () => daemon.frames.filter((frame) => frame.method === 'patch/approve');
  await daemon.waitFor(() => asks().length === REQUESTS);
  for (const ask of asks()) daemon.send({ jsonrpc: '2.0', id: ask.id, result: { approved: true } });
  for (let index = 0; index < REQUESTS; index++) {
    const reply = await daemon.waitFor((frame) => frame.id === 100 + index && frame.method === undefined);
    assert.equal((reply.result as { status?: string } | undefined)?.status, 'applied', JSON.stringify(reply));
    assert.equal(tree.text(`f${index}.txt`), `new ${index}\n`);
  }
  daemon.child.stdin.end();
  assert.equal((await daemon.exited).code, 0, daemon.stderr);
  assertOnlyLogRecords(daemon.stderr);
});

test('a batch of 40 patches to one file, all in flight at once, applies in order with only log records on stderr', async () => {
  using tree = createTempTree({ 'a.txt': 'v0\n' });
  await using daemon = new RawDaemon();
  await daemon.request(1, 'initialize', {});
  const { workspaceId } = (await daemon.request(2, 'workspace/open', { root: tree.root })).result as { workspaceId: string };
  // Every item waits for the one file's lock while the items before it commit, each listening on the request's signal.
  const patches = Array.from({ length: REQUESTS }, (_, index) => ({ patch: `--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-v${index}\n+v${index + 1}\n` }));
  const reply = await daemon.request(3, 'patch/applyBatch', { workspaceId, patches, concurrency: REQUESTS });
  assert.equal((reply.result as { applied?: number } | undefined)?.applied, REQUESTS, JSON.stringify(reply));
  assert.equal(tree.text('a.txt'), `v${REQUESTS}\n`);
  daemon.child.stdin.end();
  assert.equal((await daemon.exited).code, 0, daemon.stderr);
  assertOnlyLogRecords(daemon.stderr);
});

function assertOnlyLogRecords(stderr: string): void {
  for (const line of stderr.split('\n').filter((text) => text !== '')) {
    assert.doesNotThrow(() => JSON.parse(line), `not a log record: ${line}`);
  }
  assert.doesNotMatch(stderr, /MaxListeners/);
}
