import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { open, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { LIMITS } from '../../daemon/engine/limits.ts';
import { StateDirError, Workspace, WorkspaceClosedError, WorkspaceRootError, sha256Hex } from '../../daemon/workspace/workspace.ts';
import { encode, planOf, updateFile, withSandbox } from './fixtures.ts';

test('open realpaths the root and refuses a missing root or a file', async () => {
  await withSandbox({ 'file.txt': 'x\n' }, async (sandbox) => {
    const alias = path.join(sandbox.outside, 'alias');
    await symlink(sandbox.root, alias);
    const workspace = await Workspace.open(alias, { stateDir: sandbox.state });
    assert.equal(workspace.root, await realpath(sandbox.root));
    await workspace.close();
    await assert.rejects(Workspace.open(path.join(sandbox.root, 'nope')), WorkspaceRootError);
    await assert.rejects(Workspace.open(path.join(sandbox.root, 'file.txt')), (error: unknown) => error instanceof WorkspaceRootError && error.code === 'bad_root');
  });
});

test('the state dir must be outside the tree; the default lives under os.tmpdir()', async () => {
  await withSandbox({}, async (sandbox) => {
    await assert.rejects(Workspace.open(sandbox.root, { stateDir: path.join(sandbox.root, '.patchd') }), StateDirError);
    await symlink(path.join(sandbox.root), path.join(sandbox.outside, 'state-alias'));
    await assert.rejects(Workspace.open(sandbox.root, { stateDir: path.join(sandbox.outside, 'state-alias', 'state') }), StateDirError);
    const workspace = await Workspace.open(sandbox.root);
    try {
      assert.ok(workspace.stateDir.startsWith(path.join(await realpath(os.tmpdir()), 'patchd-state') + path.sep));
      assert.ok(!workspace.stateDir.startsWith(workspace.root + path.sep));
    } finally {
      await workspace.close();
      await rm(workspace.stateDir, { recursive: true, force: true });
    }
  });
});

test('snapshot gives bytes, missing and directory, keyed by normalised path', async () => {
  await withSandbox({ 'a.txt': 'alpha\n', 'dir/': '' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const result = await workspace.snapshot(['./a.txt', 'missing.txt', 'dir', 'a.txt/below']);
    assert.ok(result.ok);
    assert.deepEqual([...result.value.keys()], ['a.txt', 'missing.txt', 'dir', 'a.txt/below']);
    assert.deepEqual(result.value.get('a.txt'), { kind: 'file', bytes: Buffer.from('alpha\n') });
    assert.deepEqual(result.value.get('missing.txt'), { kind: 'missing' });
    assert.deepEqual(result.value.get('dir'), { kind: 'directory' });
    assert.deepEqual(result.value.get('a.txt/below'), { kind: 'missing' });
    await workspace.close();
  });
});

test('read returns content, sha256 and a version derived from it', async () => {
  const text = '\uFEFFhé\r\nllo\n';
  await withSandbox({ 'a.txt': text }, async (sandbox) => {
    const workspace = await sandbox.open();
    const result = await workspace.read('a.txt');
    assert.ok(result.ok);
    const sha = sha256Hex(encode(text));
    assert.deepEqual(result.value, { path: 'a.txt', content: text, sha256: sha, version: `sha256:${sha.slice(0, 16)}` });
    await workspace.close();
  });
});

test('read refuses missing, directories and binary files with typed errors', async () => {
  await withSandbox({ 'dir/': '' }, async (sandbox) => {
    await writeFile(path.join(sandbox.root, 'nul.bin'), Buffer.from([0x61, 0x00, 0x62]));
    await writeFile(path.join(sandbox.root, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9]));
    const workspace = await sandbox.open();
    const code = async (p: string) => {
      const result = await workspace.read(p);
      return result.ok ? 'ok' : result.error.code;
    };
    assert.equal(await code('missing.txt'), 'not_found');
    assert.equal(await code('dir'), 'is_directory');
    assert.equal(await code('nul.bin'), 'binary_file');
    assert.equal(await code('latin1.txt'), 'binary_file');
    await workspace.close();
  });
});

test('files over the size limit are limit_exceeded without being read', async () => {
  await withSandbox({}, async (sandbox) => {
    const handle = await open(path.join(sandbox.root, 'huge.txt'), 'w');
    await handle.truncate(LIMITS.maxFileBytes + 1); // sparse: costs no disk
    await handle.close();
    const workspace = await sandbox.open();
    const result = await workspace.snapshot(['huge.txt']);
    assert.ok(!result.ok);
    assert.equal(result.error.code, 'limit_exceeded');
    assert.equal(result.error.limit?.name, 'maxFileBytes');
    await workspace.close();
  });
});

test('a FIFO is refused instead of blocking the daemon', { skip: spawnSync('mkfifo', ['--version']).status !== 0 }, async () => {
  await withSandbox({}, async (sandbox) => {
    assert.equal(spawnSync('mkfifo', [path.join(sandbox.root, 'pipe')]).status, 0);
    const workspace = await sandbox.open();
    const result = await workspace.read('pipe');
    assert.ok(!result.ok);
    assert.equal(result.error.code, 'permission_denied');
    await workspace.close();
  });
});

test('a closed workspace refuses work', async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    await workspace.close();
    assert.equal(workspace.closed, true);
    await assert.rejects(workspace.read('a.txt'), WorkspaceClosedError);
    await assert.rejects(workspace.snapshot(['a.txt']), WorkspaceClosedError);
    await assert.rejects(workspace.commit(planOf(updateFile('a.txt', 'b\n')), { atomic: true, snapshots: new Map() }), WorkspaceClosedError);
    await assert.rejects(workspace.recordsOf('tx'), WorkspaceClosedError);
    await assert.rejects(workspace.transactions(1), WorkspaceClosedError);
    await assert.rejects(workspace.sessionChanges(null), WorkspaceClosedError);
    assert.throws(() => workspace.probePaths(['a.txt']), WorkspaceClosedError);
  });
});
