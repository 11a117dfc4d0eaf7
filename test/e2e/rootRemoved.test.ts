/**
 * The workspace root removed or moved while a workspace is open (a checkout deleted, a folder
 * renamed): every call that reads a file says the root is gone, instead of "x does not exist"
 * with a hint to add it, and nothing is written anywhere — not even at the old root's path.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { PatchClient, RpcError } from '../../client/index.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const ROOT_GONE = /^The workspace root .+ no longer exists \(removed or moved while the workspace was open\); nothing was written\.$/;
const update = '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n';
const add = '--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+new\n';

function isRootGone(error: unknown): boolean {
  assert.ok(error instanceof RpcError);
  assert.equal(error.data?.code, 'not_found');
  assert.match(error.message, ROOT_GONE);
  return true;
}

describe('a workspace root removed or moved while open', () => {
  test('removed: patches, adds, reads and the session diff all say the root is gone; nothing is made at its path', async () => {
    using tree = createTempTree({ 'a.txt': 'hello\nworld\n' });
    await using daemon = await PatchClient.spawn({ env: { ...process.env, PATCHD_STATE_DIR: join(tree.outside, 'state') } });
    const workspace = await daemon.openWorkspace(tree.root);
    assert.equal((await workspace.apply(update)).status, 'applied');
    await workspace.transactions(); // waits for that commit to settle (its fsyncs follow its report)
    rmSync(tree.root, { recursive: true });

    for (const patch of [update.replace('world', 'there').replace('+there', '+again'), add]) {
      const receipt = await workspace.apply(patch);
      assert.equal(receipt.status, 'rejected');
      assert.equal(receipt.error?.code, 'not_found');
      assert.match(receipt.error?.message ?? '', ROOT_GONE);
      assert.match(receipt.error?.hint ?? '', /Open the workspace again/);
    }
    await assert.rejects(workspace.read('a.txt'), isRootGone);
    await assert.rejects(workspace.sessionDiff(), isRootGone);
    assert.equal(existsSync(tree.root), false, 'nothing recreated the root');
  });

  test('moved: the files at the new place are untouched, and the workspace opened there patches them', async () => {
    using tree = createTempTree({ 'a.txt': 'hello\nworld\n' });
    await using daemon = await PatchClient.spawn({ env: { ...process.env, PATCHD_STATE_DIR: join(tree.outside, 'state') } });
    const workspace = await daemon.openWorkspace(tree.root);
    const moved = join(tree.base, 'moved');
    renameSync(tree.root, moved);

    const receipt = await workspace.apply(update);
    assert.equal(receipt.status, 'rejected');
    assert.match(receipt.error?.message ?? '', ROOT_GONE);
    const before = tree.fingerprint();
    assert.equal((await workspace.apply(add)).status, 'rejected');
    assert.equal(tree.fingerprint(), before, 'nothing written anywhere');

    const reopened = await daemon.openWorkspace(moved);
    assert.equal((await reopened.apply(update)).status, 'applied');
    assert.equal((await reopened.read('a.txt')).content, 'hello\nthere\n');
  });
});
