/**
 * An undo goes from its plan to disk as a patch does, asked or not: it holds its locks until
 * its commit ends, and a commit that finds a file changed under it (`stale_file`, nothing
 * written) is tried again on what is there now. The change is made inside the commit by the
 * daemon of `insideCommitDaemon.ts`, so no test depends on timing.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { ApproveParams, Receipt, Workspace } from '../../client/index.ts';
import { actInsideNextCommit, INSIDE_COMMIT_DAEMON, lockHeldInCommit } from '../helpers/insideCommitDaemon.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree, sha256, type TempTree } from '../helpers/tempTree.ts';

const EDIT_A = '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n';

/** A daemon acting inside commits as told in `tree.outside`. */
async function startOn(tree: TempTree): Promise<SocketDaemon> {
  return SocketDaemon.start({ env: { PATCHD_TEST_INSIDE_COMMIT: tree.outside }, entry: INSIDE_COMMIT_DAEMON });
}

/** The tree opened by a new client; with `asked`, under `approval: 'always'`, each request noted there and approved. */
async function open(daemon: SocketDaemon, tree: TempTree, asked?: ApproveParams[]): Promise<Workspace> {
  const client = await daemon.connect();
  if (asked === undefined) return client.openWorkspace(tree.root);
  return client.openWorkspace(tree.root, { approval: 'always', onApprove: (request) => (asked.push(request), true) });
}

function assertApplied(receipt: Receipt): void {
  assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
}

describe('an undo commits as a patch does', () => {
  for (const asking of [false, true]) {
    const how = asking ? 'asked' : 'unasked';

    test(`${how}: an undo holds its locks until its commit ends`, async () => {
      using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
      await using daemon = await startOn(tree);
      const workspace = await open(daemon, tree, asking ? [] : undefined);
      actInsideNextCommit(tree.outside, 'a.txt', { probeLock: true });
      const applied = await workspace.apply(EDIT_A);
      assertApplied(applied);
      assert.equal(lockHeldInCommit(tree.outside, 'a.txt'), true, 'a patch holds its lock through its commit');

      actInsideNextCommit(tree.outside, 'a.txt', { probeLock: true });
      assertApplied(await workspace.undo(applied.transactionId));
      assert.equal(lockHeldInCommit(tree.outside, 'a.txt'), true, 'so does an undo: no other patch of a.txt can commit meanwhile');
      assert.equal(tree.text('a.txt'), 'one\ntwo\n');
    });

    test(`${how}: a file that changes under an undo's commit and changes back: the undo is planned again and committed`, async () => {
      using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
      await using daemon = await startOn(tree);
      const asked: ApproveParams[] = [];
      const workspace = await open(daemon, tree, asking ? asked : undefined);
      actInsideNextCommit(tree.outside, 'a.txt', { write: 'one\nthree\n', putBack: true });
      const applied = await workspace.apply(EDIT_A);
      assertApplied(applied);
      assert.equal(tree.text('a.txt'), 'one\nTWO\n', 'a patch is planned again and committed');

      actInsideNextCommit(tree.outside, 'a.txt', { write: 'one\nthree\n', putBack: true });
      const undone = await workspace.undo(applied.transactionId);
      assertApplied(undone);
      assert.equal(tree.text('a.txt'), 'one\ntwo\n');
      // Asked: the plan made again is the change approved, so the client is not asked again. Unasked: the receipt says it was planned again.
      if (asking) assert.deepEqual(asked.map((request) => request.undoOf), [undefined, applied.transactionId]);
      else assert.equal(undone.replanned, true);
    });

    test(`${how}: a file that changes under an undo's commit and stays changed: stale_file naming its current sha256, nothing written`, async () => {
      using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
      await using daemon = await startOn(tree);
      const workspace = await open(daemon, tree, asking ? [] : undefined);
      const applied = await workspace.apply(EDIT_A);
      assertApplied(applied);

      actInsideNextCommit(tree.outside, 'a.txt', { write: 'one\nthree\n' });
      const refused = await workspace.undo(applied.transactionId);
      assert.equal(refused.status, 'rejected');
      assert.equal(refused.error?.code, 'stale_file');
      assert.equal(refused.error?.path, 'a.txt');
      assert.equal(refused.error?.currentSha256, sha256('one\nthree\n'), JSON.stringify(refused.error));
      assert.equal(tree.text('a.txt'), 'one\nthree\n');
    });
  }
});
