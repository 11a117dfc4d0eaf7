/**
 * Closing a workspace while requests on it are in flight: each ends as a receipt of what really
 * happened to its patch, as `unknown_workspace` with a hint (it waited past the close), or as
 * cancelled — never an io_error receipt or an internal fault.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BatchSummary, Receipt } from '../../protocol/index.ts';
import { RawDaemon, type JsonRpcFrame } from '../helpers/rawDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const PATCH = '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n';

/** A receipt may only be one the patch would get without the close: applied, dry run, or `allowed`. */
function assertReceipt(receipt: Receipt, allowed: string): void {
  if (receipt.status === 'rejected') assert.equal(receipt.error?.code, allowed, JSON.stringify(receipt.error));
  else assert.ok(receipt.status === 'applied' || receipt.status === 'dry_run', receipt.status);
}

/** An error may only be cancellation or `unknown_workspace` with its hint. */
function assertClosedError(reply: JsonRpcFrame): void {
  const { code, data } = reply.error as { code: number; data?: { code?: string; hint?: string } };
  if (code === -32800) return;
  assert.equal(code, -32602, JSON.stringify(reply.error));
  assert.equal(data?.code, 'unknown_workspace');
  assert.match(data?.hint ?? '', /workspace\/open/);
}

test('20 patches and reads in flight, then workspace/close: each a true receipt or unknown_workspace', async () => {
  using tree = createTempTree({ 'a.txt': 'a\n' });
  await using daemon = new RawDaemon();
  const opened = await daemon.request(1, 'workspace/open', { root: tree.root });
  const { workspaceId } = opened.result as { workspaceId: string };
  const ids = Array.from({ length: 20 }, (_, index) => 100 + index);
  for (const id of ids) daemon.send({ jsonrpc: '2.0', id, method: 'patch/apply', params: { workspaceId, patch: PATCH, dryRun: id % 2 === 0 } });
  daemon.send({ jsonrpc: '2.0', id: 2, method: 'patch/applyBatch', params: { workspaceId, patches: [{ patch: PATCH, dryRun: true }, { patch: PATCH, dryRun: true }] } });
  const others = [['file/read', { path: 'a.txt' }], ['session/diff', {}], ['transaction/list', {}]] as const;
  others.forEach(([method, params], index) => daemon.send({ jsonrpc: '2.0', id: 200 + index, method, params: { workspaceId, ...params } }));
  assert.equal((await daemon.request(3, 'workspace/close', { workspaceId })).result, null);
  const replies = await Promise.all([...ids, 2, 200, 201, 202].map((id) => daemon.waitFor((frame) => frame.id === id)));
  for (const reply of replies) {
    if (reply.error !== undefined) assertClosedError(reply);
    else if (reply.id === 2) for (const receipt of (reply.result as BatchSummary).receipts ?? []) assertReceipt(receipt, 'already_applied');
    else if (typeof reply.id === 'number' && reply.id < 200) assertReceipt(reply.result as Receipt, 'already_applied');
  }
  daemon.child.stdin.end();
  assert.equal((await daemon.exited).code, 0);
});

test('20 undos in flight, then workspace/close: each a true receipt or unknown_workspace', async () => {
  using tree = createTempTree({ 'a.txt': 'a\n' });
  await using daemon = new RawDaemon();
  const opened = await daemon.request(1, 'workspace/open', { root: tree.root });
  const { workspaceId } = opened.result as { workspaceId: string };
  const applied = await daemon.request(2, 'patch/apply', { workspaceId, patch: PATCH });
  const { transactionId } = applied.result as { transactionId: string };
  const ids = Array.from({ length: 20 }, (_, index) => 100 + index);
  for (const id of ids) daemon.send({ jsonrpc: '2.0', id, method: 'patch/undo', params: { workspaceId, transactionId, dryRun: id % 2 === 0 } });
  assert.equal((await daemon.request(3, 'workspace/close', { workspaceId })).result, null);
  const replies = await Promise.all(ids.map((id) => daemon.waitFor((frame) => frame.id === id)));
  for (const reply of replies) {
    if (reply.error !== undefined) assertClosedError(reply);
    else assertReceipt(reply.result as Receipt, 'stale_file');
  }
  daemon.child.stdin.end();
  assert.equal((await daemon.exited).code, 0);
});
