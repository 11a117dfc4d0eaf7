/** `patch/applyBatch` end to end: the client's `applyMany` stream, the summary, ordering, and the wire without a progress token. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BatchSummarySchema } from '../../protocol/index.ts';
import type { BatchReceipt, BatchSummary } from '../../client/index.ts';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { suiteClient } from '../helpers/suiteDaemon.ts';
import { createTempTree, sha256 } from '../helpers/tempTree.ts';

async function drain(stream: AsyncGenerator<BatchReceipt, BatchSummary>): Promise<{ receipts: BatchReceipt[]; summary: BatchSummary }> {
  const receipts: BatchReceipt[] = [];
  for (let step = await stream.next(); ; step = await stream.next()) {
    if (step.done === true) return { receipts, summary: step.value };
    receipts.push(step.value);
  }
}

describe('applyMany', () => {
  const client = suiteClient();

  test('streams one receipt per patch, each independent, then a summary that adds up', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const { receipts, summary } = await drain(workspace.applyMany([
      '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n',
      [{ type: 'update_file', path: 'b.txt', diff: '-b\n+B\n' }],
      { edits: [{ path: 'c.txt', oldText: 'c', newText: 'C' }] },
      '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-missing\n+x\n',
      { patch: '*** Begin Patch\n*** Add File: d.txt\n+d\n*** End Patch\n', dryRun: true },
      { patch: '--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-B\n+BB\n', expectedSha256ByPath: { 'b.txt': sha256('b\n') } },
    ], { concurrency: 3 }));
    assert.deepEqual(receipts.map((entry) => entry.index).sort(), [0, 1, 2, 3, 4, 5]);
    const byIndex = new Map(receipts.map((entry) => [entry.index, entry.receipt]));
    assert.deepEqual([0, 1, 2, 3, 4, 5].map((index) => byIndex.get(index)?.error?.code ?? byIndex.get(index)?.status),
      ['applied', 'applied', 'applied', 'context_not_found', 'dry_run', 'stale_file']);
    assert.deepEqual(summary, { total: 6, applied: 3, rejected: 2, partial: 0, dryRun: 1, replanned: 0 });
    assert.deepEqual([tree.text('a.txt'), tree.text('b.txt'), tree.text('c.txt'), tree.text('d.txt')], ['A\n', 'B\n', 'C\n', undefined]);
  });

  test('patches that share a file apply in index order, even many in flight', async () => {
    using tree = createTempTree({ 'chain.txt': 'step 0\n', 'side.txt': 'side 0\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const chain = Array.from({ length: 30 }, (_, n) => `--- a/chain.txt\n+++ b/chain.txt\n@@ -1 +1 @@\n-step ${n}\n+step ${n + 1}\n`);
    const side = Array.from({ length: 10 }, (_, n) => `--- a/side.txt\n+++ b/side.txt\n@@ -1 +1 @@\n-side ${n}\n+side ${n + 1}\n`);
    const { summary } = await drain(workspace.applyMany([...chain, ...side], { concurrency: 16 }));
    assert.equal(summary.applied, 40, JSON.stringify(summary));
    assert.equal(tree.text('chain.txt'), 'step 30\n');
    assert.equal(tree.text('side.txt'), 'side 10\n');
  });

  test('batch-wide options are defaults each patch may override', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const { summary } = await drain(workspace.applyMany([
      '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n',
      { patch: '--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n', dryRun: false },
    ], { dryRun: true }));
    assert.deepEqual([summary.dryRun, summary.applied], [1, 1]);
    assert.deepEqual([tree.text('a.txt'), tree.text('b.txt')], ['a\n', 'B\n']);
  });

  test('every per-patch option is a batch-wide default: reverse and strip too', async () => {
    using tree = createTempTree({ 'a.txt': 'A\n', 'b.txt': 'b\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const { summary } = await drain(workspace.applyMany([
      '--- x/y/a.txt\n+++ x/y/a.txt\n@@ -1 +1 @@\n-a\n+A\n',
      { patch: '--- x/y/b.txt\n+++ x/y/b.txt\n@@ -1 +1 @@\n-b\n+B\n', reverse: false },
    ], { reverse: true, strip: 2 }));
    assert.equal(summary.applied, 2, JSON.stringify(summary));
    assert.deepEqual([tree.text('a.txt'), tree.text('b.txt')], ['a\n', 'B\n']);
  });
});

test('on the wire without a progress token the summary carries every receipt, in index order', async () => {
  using tree = createTempTree({ 'a.txt': 'a\n' });
  const daemon = new RawDaemon();
  const opened = await daemon.request(1, 'workspace/open', { root: tree.root });
  const { workspaceId } = opened.result as { workspaceId: string };
  const patches = [{ patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n' }, { patch: 'not a patch' }];
  const reply = await daemon.request(2, 'patch/applyBatch', { workspaceId, patches });
  const summary = BatchSummarySchema.parse(reply.result);
  assert.deepEqual(summary.receipts?.map((receipt) => receipt.status), ['applied', 'rejected']);
  assert.ok(!daemon.frames.some((frame) => frame.method === '$/progress'));
  const invalid = await daemon.request(3, 'patch/applyBatch', { workspaceId, patches: [], concurrency: 0 });
  assert.equal(invalid.error?.code, -32602);
  daemon.child.stdin.end();
  assert.equal((await daemon.exited).code, 0);
});
