/**
 * Filesystems that refuse, for real (a small tmpfs): on a full disk a patch is rejected
 * `io_error` saying so in plain words, nothing in the tree changes and no temp is left, and once
 * there is room the same patch applies — where the workspace is full and where only the state
 * dir is. On a read-only workspace it is `permission_denied` saying so, and the rollback (of
 * nothing) does not fail on the read-only tree: nothing was written, and nothing is left to finish.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { PatchClient } from '../../client/index.ts';
import { mountFullFilesystem, mountReadOnlyFilesystem, tmpfsSkip } from '../helpers/tmpfs.ts';
import { suiteClient } from '../helpers/suiteDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const PATCH = '--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n';
const NO_SPACE = /: ENOSPC \(no space left on the device\)\.$/;

describe('a filesystem that refuses', { skip: tmpfsSkip() }, () => {
  const client = suiteClient();

  test('under the workspace: rejected io_error, nothing changed, no temp left; applied once there is room', async () => {
    using tree = createTempTree();
    const root = join(tree.outside, 'workspace');
    using full = mountFullFilesystem(root, 'blocks');
    full.makeRoom();
    writeFileSync(join(root, 'a.txt'), 'hello\nworld\n');
    full.fill();
    const before = readdirSync(root).sort();
    await using workspace = await client().openWorkspace(root);
    const rejected = await workspace.apply(PATCH);
    assert.equal(rejected.status, 'rejected');
    assert.equal(rejected.error?.code, 'io_error');
    assert.match(rejected.error?.message ?? '', NO_SPACE);
    assert.deepEqual(readdirSync(root).sort(), before, 'no temp left');
    assert.equal(readFileSync(join(root, 'a.txt'), 'utf8'), 'hello\nworld\n');
    full.makeRoom();
    assert.equal((await workspace.apply(PATCH)).status, 'applied');
    assert.equal(readFileSync(join(root, 'a.txt'), 'utf8'), 'hello\nthere\n');
    assert.deepEqual(readdirSync(root), ['a.txt']);
  });

  test('under the state dir only: rejected io_error (the commit could not be logged), nothing changed; applied and listed once there is room', async () => {
    using tree = createTempTree({ 'a.txt': 'hello\nworld\n' });
    const stateRoot = join(tree.outside, 'state');
    using full = mountFullFilesystem(stateRoot, 'blocks');
    await using daemon = await PatchClient.spawn({ env: { ...process.env, PATCHD_STATE_DIR: stateRoot } });
    await using workspace = await daemon.openWorkspace(tree.root);
    const rejected = await workspace.apply(PATCH);
    assert.equal(rejected.status, 'rejected');
    assert.equal(rejected.error?.code, 'io_error');
    assert.match(rejected.error?.message ?? '', NO_SPACE);
    assert.equal(tree.text('a.txt'), 'hello\nworld\n');
    assert.deepEqual(readdirSync(tree.root), ['a.txt'], 'no temp left');
    full.makeRoom();
    const applied = await workspace.apply(PATCH);
    assert.equal(applied.status, 'applied', JSON.stringify(applied.error));
    assert.equal(tree.text('a.txt'), 'hello\nthere\n');
    assert.deepEqual((await workspace.transactions()).map((transaction) => transaction.transactionId), [applied.transactionId]);
  });

  test('a read-only workspace: permission_denied saying so, nothing written, no rollback left to finish', async () => {
    using tree = createTempTree();
    const root = join(tree.outside, 'read-only');
    using _mounted = mountReadOnlyFilesystem(root, { 'a.txt': 'hello\nworld\n' });
    await using workspace = await client().openWorkspace(root);
    for (const patch of [PATCH, '*** Begin Patch\n*** Add File: new/dir/b.txt\n+b\n*** Update File: a.txt\n@@\n hello\n-world\n+there\n*** End Patch\n']) {
      const rejected = await workspace.apply(patch);
      assert.equal(rejected.status, 'rejected');
      assert.equal(rejected.error?.code, 'permission_denied', rejected.error?.message);
      assert.match(rejected.error?.message ?? '', /: EROFS \(read-only filesystem\)\.$/);
    }
    assert.deepEqual(readdirSync(root), ['a.txt']);
    assert.equal(readFileSync(join(root, 'a.txt'), 'utf8'), 'hello\nworld\n');
  });
});
