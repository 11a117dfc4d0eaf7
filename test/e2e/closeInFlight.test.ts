/** Closing a workspace while patches on it are in flight: each ends as a receipt, unknown_workspace or cancelled — never an internal fault. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const PATCH = '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n';

test('20 patches in flight, then workspace/close: no -32603', async () => {
  using tree = createTempTree({ 'a.txt': 'a\n' });
  const daemon = new RawDaemon();
  const opened = await daemon.request(1, 'workspace/open', { root: tree.root });
  const { workspaceId } = opened.result as { workspaceId: string };
  const ids = Array.from({ length: 20 }, (_, index) => 100 + index);
  for (const id of ids) daemon.send({ jsonrpc: '2.0', id, method: 'patch/apply', params: { workspaceId, patch: PATCH, dryRun: id % 2 === 0 } });
  daemon.send({ jsonrpc: '2.0', id: 2, method: 'patch/applyBatch', params: { workspaceId, patches: [{ patch: PATCH, dryRun: true }, { patch: PATCH, dryRun: true }] } });
  assert.equal((await daemon.request(3, 'workspace/close', { workspaceId })).result, null);
  const replies = await Promise.all([...ids, 2].map((id) => daemon.waitFor((frame) => frame.id === id)));
  for (const reply of replies) {
    if (reply.error === undefined) continue;
    const { code, data } = reply.error as { code: number; data?: { code?: string } };
    assert.ok(code === -32800 || (code === -32602 && data?.code === 'unknown_workspace'), JSON.stringify(reply.error));
  }
  daemon.child.stdin.end();
  assert.equal((await daemon.exited).code, 0);
});

test('20 undos in flight, then workspace/close: each ends as a receipt or unknown_workspace', async () => {
  using tree = createTempTree({ 'a.txt': 'a\n' });
  const daemon = new RawDaemon();
  const opened = await daemon.request(1, 'workspace/open', { root: tree.root });
  const { workspaceId } = opened.result as { workspaceId: string };
  const applied = await daemon.request(2, 'patch/apply', { workspaceId, patch: PATCH });
  const { transactionId } = applied.result as { transactionId: string };
  const ids = Array.from({ length: 20 }, (_, index) => 100 + index);
  for (const id of ids) daemon.send({ jsonrpc: '2.0', id, method: 'patch/undo', params: { workspaceId, transactionId, dryRun: id % 2 === 0 } });
  assert.equal((await daemon.request(3, 'workspace/close', { workspaceId })).result, null);
  const replies = await Promise.all(ids.map((id) => daemon.waitFor((frame) => frame.id === id)));
  for (const reply of replies) {
    if (reply.error === undefined) continue;
    const { code, data } = reply.error as { code: number; data?: { code?: string } };
    assert.ok(code === -32800 || (code === -32602 && data?.code === 'unknown_workspace'), JSON.stringify(reply.error));
  }
  daemon.child.stdin.end();
  assert.equal((await daemon.exited).code, 0);
});
