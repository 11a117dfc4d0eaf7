/**
 * A state dir the daemon cannot use is the daemon's own setup problem, told as such end to end:
 * -32000 with data.code state_dir_unusable, the directory and the reason in the message, and a
 * hint — never bad_root (the root is fine) and never an internal error. Nothing is written in
 * the workspace, and the same root opens once the state root is usable. A full filesystem is
 * told as such (Node's recursive mkdir says ENOENT for it), where this user may mount one.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { PatchClient, RpcError } from '../../client/index.ts';
import { stateDirFor } from '../../daemon/workspace/stateDir.ts';
import { createTempTree, type TempTree } from '../helpers/tempTree.ts';
import { mountFullFilesystem, tmpfsSkip } from '../helpers/tmpfs.ts';

interface Case {
  readonly name: string;
  /** Spoils the state root `stateRoot` for the workspace at `tree.root`; returns how to undo it. */
  readonly spoil: (stateRoot: string, tree: TempTree) => () => void;
  readonly reason: RegExp;
}

const CASES: readonly Case[] = [
  {
    name: 'a file where the state root should be',
    spoil: (stateRoot) => {
      writeFileSync(stateRoot, 'in the way\n');
      return () => rmSync(stateRoot);
    },
    reason: /ENOTDIR|EEXIST/,
  },
  {
    name: process.getuid?.() === 0 ? 'a state dir owned by another user' : 'a state root this user may not write',
    spoil: (stateRoot, tree) => {
      const own = stateDirFor(tree.root, stateRoot);
      if (process.getuid?.() === 0) {
        mkdirSync(own, { recursive: true });
        chownSync(own, 65534, 65534);
        return () => chownSync(own, 0, 0);
      }
      mkdirSync(stateRoot, { mode: 0o500 });
      return () => chmodSync(stateRoot, 0o700);
    },
    reason: process.getuid?.() === 0 ? /not a directory owned by this user/ : /EACCES/,
  },
];

describe('an unusable state dir', () => {
  for (const { name, spoil, reason } of CASES) {
    test(`${name}: -32000 state_dir_unusable with a hint, nothing written, and the root opens once it is fixed`, async () => {
      using tree = createTempTree({ 'a.txt': 'a\n' });
      const stateRoot = join(tree.outside, 'state');
      const restore = spoil(stateRoot, tree);
      const before = tree.fingerprint();
      await using client = await PatchClient.spawn({ env: { ...process.env, PATCHD_STATE_DIR: stateRoot } });
      await assert.rejects(client.openWorkspace(tree.root), (error: unknown) => {
        assert.ok(error instanceof RpcError, String(error));
        assert.equal(error.code, -32000);
        assert.equal(error.data?.code, 'state_dir_unusable');
        assert.match(error.message, /cannot use the state directory/);
        assert.match(error.message, reason);
        assert.match(error.data?.hint ?? '', /--state-dir DIR or PATCHD_STATE_DIR/);
        return true;
      });
      assert.equal(tree.fingerprint(), before, 'nothing was written');
      restore();
      const workspace = await client.openWorkspace(tree.root);
      assert.equal((await workspace.read('a.txt')).content, 'a\n');
    });
  }

  test('a state root on a full filesystem: ENOSPC, not "does not exist", and the root opens once there is room', { skip: tmpfsSkip() }, async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const stateRoot = join(tree.outside, 'full');
    using full = mountFullFilesystem(stateRoot, 'inodes');
    const before = tree.fingerprint();
    await using client = await PatchClient.spawn({ env: { ...process.env, PATCHD_STATE_DIR: join(stateRoot, 'state') } });
    await assert.rejects(client.openWorkspace(tree.root), (error: unknown) => {
      assert.ok(error instanceof RpcError, String(error));
      assert.equal(error.data?.code, 'state_dir_unusable');
      assert.match(error.message, /ENOSPC/);
      return true;
    });
    assert.equal(tree.fingerprint(), before, 'nothing was written');
    full.makeRoom();
    const workspace = await client.openWorkspace(tree.root);
    assert.equal((await workspace.read('a.txt')).content, 'a\n');
  });

  test('a state root reached through a symlink into the workspace is refused before anything is made there', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    symlinkSync(tree.root, join(tree.outside, 'link'));
    const before = tree.fingerprint();
    await using client = await PatchClient.spawn({ env: { ...process.env, PATCHD_STATE_DIR: join(tree.outside, 'link', 'state') } });
    await assert.rejects(client.openWorkspace(tree.root), (error: unknown) => {
      assert.ok(error instanceof RpcError);
      assert.equal(error.data?.code, 'state_dir_unusable');
      assert.match(error.message, /inside the workspace/);
      return true;
    });
    assert.equal(tree.fingerprint(), before, 'no state dir was made in the workspace');
  });

  test('a state dir inside the workspace is state_dir_unusable, and a missing root is still bad_root', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const before = tree.fingerprint();
    await using client = await PatchClient.spawn({ serveArgs: ['--state-dir', join(tree.root, '.patchd')] });
    await assert.rejects(client.openWorkspace(tree.root), (error: unknown) => {
      assert.ok(error instanceof RpcError);
      assert.equal(error.data?.code, 'state_dir_unusable');
      assert.match(error.message, /inside the workspace/);
      return true;
    });
    await assert.rejects(client.openWorkspace(join(tree.root, 'missing')), (error: unknown) => error instanceof RpcError && error.data?.code === 'bad_root');
    assert.equal(tree.fingerprint(), before, 'no state dir was made in the workspace');
  });
});
