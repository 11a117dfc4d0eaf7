/**
 * Type changes committed: a file replaced by a directory (delete `foo`, add `foo/bar`) and a
 * directory by a file (delete `d/x`, add `d`), in one transaction, in any plan order. Wholly
 * applied or not at all: a failure at any rename rolls back, and a daemon killed at any rename
 * leaves the exact pre-image (or, past its last rename, the post-image) after recovery. A
 * directory holding anything the plan does not take away (an untracked file, an empty directory,
 * a link), or that is a link itself, refuses the plan, nothing written. A replaced directory
 * comes back with its own mode and owner, however the commit is taken back (rolled back, recovered
 * after a crash, undone).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { mkdir, readFile, readdir, realpath, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import type { FileSnapshot, Plan } from '../../daemon/engine/types.ts';
import { undoTransaction } from '../../daemon/server/undoPatch.ts';
import { nodeDiskCalls, type DiskCalls } from '../../daemon/workspace/diskCalls.ts';
import { sha256Hex } from '../../daemon/workspace/files.ts';
import { encodeJournal } from '../../daemon/workspace/journal.ts';
import type { Workspace } from '../../daemon/workspace/workspace.ts';
import {
  addFile, commitAndDie, deleteFile, encode, listTree, ownDirectoryModes, ownersOf, pathsOf, planOf, renameFile, snapshotAndCommit, TYPE_CHANGE_PLANS, TYPE_CHANGE_TREES, updateFile,
  withSandbox,
} from './fixtures.ts';

const FILE_TO_DIRECTORY_AFTER = { foo: 'dir', 'foo/baz': 'file:baz\n', 'foo/sub': 'dir', 'foo/sub/bar': 'file:bar\n', 'keep.txt': 'file:kept\n' };
const DIRECTORY_TO_FILE_AFTER = { d: 'file:d\n', 'keep.txt': 'file:kept\n' };

/** The variants: tree, plan, and the tree the plan leaves. */
const VARIANTS = [
  { name: 'fileToDirectory', tree: TYPE_CHANGE_TREES.fileToDirectory, plan: TYPE_CHANGE_PLANS.fileToDirectory, after: FILE_TO_DIRECTORY_AFTER },
  { name: 'directoryToFile', tree: TYPE_CHANGE_TREES.directoryToFile, plan: TYPE_CHANGE_PLANS.directoryToFile, after: DIRECTORY_TO_FILE_AFTER },
] as const;

const signal = new AbortController().signal;
const reversed = (plan: Plan): Plan => ({ ...plan, files: [...plan.files].reverse() });

async function committed(workspace: Workspace, plan: Plan, atomic = true) {
  const outcome = await snapshotAndCommit(workspace, plan, atomic);
  assert.equal(outcome.status, 'applied', outcome.status === 'applied' ? '' : `${outcome.error.code}: ${outcome.error.message}`);
  return outcome;
}

for (const { name, tree, plan, after } of VARIANTS) {
  test(`${name}: committed in one transaction, in plan order or reversed`, async () => {
    for (const ordered of [plan, reversed(plan)]) {
      await withSandbox(tree, async (sandbox) => {
        const workspace = await sandbox.open();
        const outcome = await committed(workspace, ordered);
        assert.deepEqual(await listTree(sandbox.root), after);
        if (outcome.status === 'applied') assert.deepEqual(outcome.createdDirs, name === 'fileToDirectory' ? ['foo', 'foo/sub'] : []);
        assert.deepEqual((await workspace.transactions(5)).map((entry) => entry.files.length), [4]);
        await workspace.close();
      });
    }
  });

  test(`${name}: a failure before any rename rolls back to the exact pre-image`, async () => {
    await withSandbox(tree, async (sandbox) => {
      for (let failAt = 0; failAt < 4; failAt++) {
        const before = await listTree(sandbox.root);
        const workspace = await sandbox.open({ hooks: { beforeRename: (index) => { if (index === failAt) throw new Error('injected'); } } });
        const outcome = await snapshotAndCommit(workspace, plan);
        assert.equal(outcome.status, 'rejected');
        assert.deepEqual(await listTree(sandbox.root), before, `failing before rename ${failAt}`);
        assert.deepEqual(await workspace.transactions(5), []);
        await workspace.close();
      }
    });
  });

  test(`${name}: a daemon killed before any rename, recovered, leaves the exact pre-image; killed after the last, the post-image`, async () => {
    for (let killAt = 0; killAt < 4; killAt++) {
      await withSandbox(tree, async (sandbox) => {
        const before = await listTree(sandbox.root);
        commitAndDie(sandbox, killAt, name);
        assert.notDeepEqual(await listTree(sandbox.root), before, 'the crash should leave something half done');
        const workspace = await sandbox.open();
        assert.deepEqual(await listTree(sandbox.root), before, `killed before rename ${killAt}`);
        assert.deepEqual(workspace.recovered.map(({ outcome, conflicts }) => ({ outcome, conflicts })), [{ outcome: 'rolled_back', conflicts: [] }]);
        assert.deepEqual(await readdir(path.join(sandbox.state, 'journal')), []);
        assert.deepEqual(await workspace.transactions(5), []);
        await workspace.close();
      });
    }
    await withSandbox(tree, async (sandbox) => {
      commitAndDie(sandbox, 'drop', name);
      const workspace = await sandbox.open();
      assert.deepEqual(await listTree(sandbox.root), after);
      assert.deepEqual(workspace.recovered.map(({ outcome, conflicts }) => ({ outcome, conflicts })), [{ outcome: 'rolled_forward', conflicts: [] }]);
      assert.equal((await workspace.transactions(5)).length, 1, 'the commit stands, with its undo record');
      await workspace.close();
    });
  });

  test(`${name}: a recovery killed while it restores is finished by the next open`, async () => {
    await withSandbox(tree, async (sandbox) => {
      const before = await listTree(sandbox.root);
      commitAndDie(sandbox, 3, name);
      commitAndDie(sandbox, 'restore:0', name);
      const workspace = await sandbox.open();
      assert.deepEqual(await listTree(sandbox.root), before);
      assert.equal(workspace.recovered[0]?.outcome, 'rolled_back');
      await workspace.close();
    });
  });
}

test('atomic: false commits a type change as one unit, beside the files around it', async () => {
  await withSandbox({ ...TYPE_CHANGE_TREES.directoryToFile, 'other.txt': 'o\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const plan = planOf(addFile('d', 'd\n'), updateFile('other.txt', 'O\n'), deleteFile('d/e/x'), deleteFile('d/y'));
    const outcome = await committed(workspace, plan, false);
    assert.deepEqual(outcome.status === 'applied' && outcome.committed, ['d', 'd/e/x', 'd/y', 'other.txt']);
    assert.deepEqual(await listTree(sandbox.root), { d: 'file:d\n', 'keep.txt': 'file:keep\n', 'other.txt': 'file:O\n' });
    const [entry] = await workspace.transactions(5);
    assert.equal(entry?.status, 'applied', 'two units, both committed');
    await workspace.close();
  });
});

test('moves: a file into a directory of its own name, and back out of it', async () => {
  await withSandbox({ foo: 'foo\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    await committed(workspace, planOf(renameFile('foo', 'foo/foo', 'foo\n')));
    assert.deepEqual(await listTree(sandbox.root), { foo: 'dir', 'foo/foo': 'file:foo\n' });
    await committed(workspace, planOf(renameFile('foo/foo', 'foo', 'foo\n')));
    assert.deepEqual(await listTree(sandbox.root), { foo: 'file:foo\n' });
    await workspace.close();
  });
});

test('a directory holding anything the plan does not take away is not replaced: already_exists naming it, nothing written', async () => {
  const cases: readonly [string, (root: string) => Promise<void>, RegExp][] = [
    ['an untracked file', (root) => writeFile(path.join(root, 'd/e/untracked'), 'u\n'), /d holds d\/e\/untracked, which the patch does not delete/],
    ['an empty directory', (root) => mkdir(path.join(root, 'd/empty')), /d holds the directory d\/empty, which/],
    ['a link', (root) => symlink('y', path.join(root, 'd/link')), /d holds d\/link, which/],
  ];
  for (const [what, add, message] of cases) {
    await withSandbox(TYPE_CHANGE_TREES.directoryToFile, async (sandbox) => {
      await add(sandbox.root);
      const before = await listTree(sandbox.root);
      const workspace = await sandbox.open();
      const outcome = await snapshotAndCommit(workspace, TYPE_CHANGE_PLANS.directoryToFile);
      assert.equal(outcome.status, 'rejected', what);
      if (outcome.status === 'rejected') {
        assert.equal(outcome.error.code, 'already_exists');
        assert.equal(outcome.error.path, 'd');
        assert.match(outcome.error.message, message);
      }
      assert.deepEqual(await listTree(sandbox.root), before, what);
      await workspace.close();
    });
  }
});

test('a file put into the directory while the commit runs: stale_file, rolled back, the file kept', async () => {
  await withSandbox(TYPE_CHANGE_TREES.directoryToFile, async (sandbox) => {
    const before = await listTree(sandbox.root);
    const arrival = path.join(sandbox.root, 'd/arrived');
    const workspace = await sandbox.open({ hooks: { beforeRename: async (index) => { if (index === 1) await writeFile(arrival, 'a\n'); } } });
    const outcome = await snapshotAndCommit(workspace, TYPE_CHANGE_PLANS.directoryToFile);
    assert.equal(outcome.status === 'rejected' && outcome.error.code, 'stale_file');
    assert.deepEqual(await listTree(sandbox.root), { ...before, 'd/arrived': 'file:a\n' });
    await workspace.close();
  });
});

test('a directory that is a link is not replaced, nor a link replaced by a directory: permission_denied, nothing written through it', async () => {
  await withSandbox({ 'real/x': 'x\n', linked: 'linked\n' }, async (sandbox) => {
    await symlink('real', path.join(sandbox.root, 'link'));
    await symlink('linked', path.join(sandbox.root, 'file-link'));
    const before = await listTree(sandbox.root);
    const workspace = await sandbox.open();
    const cases = [
      { plan: planOf(deleteFile('link/x'), addFile('link', 'l\n')), seen: { 'link/x': 'x\n', link: 'directory' } },
      { plan: planOf(deleteFile('file-link'), addFile('file-link/x', 'x\n')), seen: { 'file-link': 'linked\n', 'file-link/x': undefined } },
    ];
    for (const { plan, seen } of cases) {
      const snapshots = await workspace.snapshot(pathsOf(plan));
      assert.equal(!snapshots.ok && snapshots.error.code, 'permission_denied');
      // Committed on what the link would show if it were followed, it is refused all the same.
      const followed = new Map(Object.entries(seen).map(([key, text]): [string, FileSnapshot] => [
        key, text === 'directory' ? { kind: 'directory' } : text === undefined ? { kind: 'missing' } : { kind: 'file', bytes: encode(text) },
      ]));
      const outcome = await workspace.commit(plan, { atomic: true, snapshots: followed });
      assert.equal(outcome.status === 'rejected' && outcome.error.code, 'permission_denied');
      assert.deepEqual(await listTree(sandbox.root), before);
    }
    await workspace.close();
  });
});

test('a link out of the tree put where the replaced file was, before its directory is made: path_escape, nothing made outside', async () => {
  await withSandbox(TYPE_CHANGE_TREES.fileToDirectory, async (sandbox) => {
    const outsideBefore = await listTree(sandbox.outside);
    const foo = path.join(sandbox.root, 'foo');
    const disk: DiskCalls = {
      ...nodeDiskCalls,
      renameSync: (from, to) => {
        nodeDiskCalls.renameSync(from, to);
        if (from === foo) symlinkSync(sandbox.outside, foo);
      },
    };
    const workspace = await sandbox.open({ disk });
    const outcome = await snapshotAndCommit(workspace, TYPE_CHANGE_PLANS.fileToDirectory);
    assert.equal(outcome.status === 'rejected' && outcome.error.code, 'path_escape');
    assert.deepEqual(await listTree(sandbox.outside), outsideBefore);
    await workspace.close();
  });
});

const REPLACED = ['d', 'd/e'];
/** Gives the directories the directoryToFile plan replaces modes of their own (and, as root, another owner): what every way back must bring back. */
const ownReplacedModes = (root: string) => ownDirectoryModes(root, { d: 0o2750, 'd/e': 0o700 }, 'd/e');

test('a directory replaced by a file comes back with its own mode and owner when the commit fails and is rolled back', async () => {
  for (const failAt of [1, 2, 3]) {
    await withSandbox(TYPE_CHANGE_TREES.directoryToFile, async (sandbox) => {
      const owners = ownReplacedModes(sandbox.root);
      const before = await listTree(sandbox.root);
      const workspace = await sandbox.open({ hooks: { beforeRename: (index) => { if (index === failAt) throw new Error('injected'); } } });
      const outcome = await snapshotAndCommit(workspace, TYPE_CHANGE_PLANS.directoryToFile);
      assert.equal(outcome.status, 'rejected');
      assert.deepEqual(await listTree(sandbox.root), before);
      assert.deepEqual(ownersOf(sandbox.root, REPLACED), owners, `failing before rename ${failAt}`);
      await workspace.close();
    });
  }
});

test('a directory replaced by a file comes back with its own mode and owner when a daemon killed mid-commit is recovered', async () => {
  for (const killAt of [2, 3]) {
    await withSandbox(TYPE_CHANGE_TREES.directoryToFile, async (sandbox) => {
      const owners = ownReplacedModes(sandbox.root);
      commitAndDie(sandbox, killAt, 'directoryToFile');
      assert.equal(ownersOf(sandbox.root, ['d/e'])['d/e'], undefined, 'the crash came after the directories were removed');
      const workspace = await sandbox.open();
      assert.equal(workspace.recovered[0]?.outcome, 'rolled_back');
      assert.deepEqual(ownersOf(sandbox.root, REPLACED), owners, `killed before rename ${killAt}`);
      await workspace.close();
    });
  }
});

test('a directory replaced by a file comes back with its own mode and owner when the commit is undone; undone again (redone), it is a file', async () => {
  await withSandbox(TYPE_CHANGE_TREES.directoryToFile, async (sandbox) => {
    const owners = ownReplacedModes(sandbox.root);
    const before = await listTree(sandbox.root);
    const workspace = await sandbox.open();
    const outcome = await committed(workspace, TYPE_CHANGE_PLANS.directoryToFile);
    const undone = await undoTransaction({ workspaceId: 'ws', transactionId: outcome.transactionId }, { workspace, signal });
    assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
    assert.deepEqual(await listTree(sandbox.root), before);
    assert.deepEqual(ownersOf(sandbox.root, REPLACED), owners);
    const redone = await undoTransaction({ workspaceId: 'ws', transactionId: undone.transactionId }, { workspace, signal });
    assert.equal(redone.status, 'applied', JSON.stringify(redone.error));
    assert.deepEqual(await listTree(sandbox.root), DIRECTORY_TO_FILE_AFTER);
    // The redo recorded the directories as the undo made them: undoing it brings them back alike.
    const again = await undoTransaction({ workspaceId: 'ws', transactionId: redone.transactionId }, { workspace, signal });
    assert.equal(again.status, 'applied', JSON.stringify(again.error));
    assert.deepEqual(ownersOf(sandbox.root, REPLACED), owners);
    await workspace.close();
  });
});

test('a journal written before directory modes were kept still rolls a type change back, its directories made with the default mode', async () => {
  await withSandbox({ 'keep.txt': 'keep\n' }, async (sandbox) => {
    await (await sandbox.open()).close();
    // Killed after d/e/x and d/y went to the trash and d/e and d were removed, before the file d was renamed in.
    const entries = [
      { path: 'd', tempName: null, trashed: false, before: null, afterSha256: sha256Hex(encode('d\n')) },
      ...[['d/e/x', 'x\n'], ['d/y', 'y\n']].map(([file, text]) => ({
        path: file!, tempName: null, trashed: true, before: { bytes: encode(text!), owner: { mode: 0o644, uid: 0, gid: 0 }, sha256: sha256Hex(encode(text!)) }, afterSha256: null,
      })),
    ];
    const owned = { mode: 0o700, uid: 0, gid: 0 };
    const { chunks } = encodeJournal('tx_old', await realpath(sandbox.root), entries, [], undefined, ['d/e', 'd'], [{ path: 'd/e', owner: owned }, { path: 'd', owner: owned }]);
    const header = JSON.parse(Buffer.from(chunks[0]!).toString('utf8')) as Record<string, unknown>;
    assert.ok('directoryOwners' in header, 'the journal of today keeps the modes');
    delete header.directoryOwners;
    // Written before headers were sealed too: no checksum.
    delete header.headerCrc32;
    const old = [Buffer.from(`${JSON.stringify(header)}\n`), ...chunks.slice(1)];
    await mkdir(path.join(sandbox.state, 'journal'), { recursive: true });
    await writeFile(path.join(sandbox.state, 'journal', `${spawnSync('true').pid}-0000-tx_old.journal`), Buffer.concat(old));
    const workspace = await sandbox.open();
    assert.deepEqual(workspace.recovered.map(({ outcome, paths, conflicts }) => ({ outcome, paths, conflicts })), [{ outcome: 'rolled_back', paths: ['d/e/x', 'd/y'], conflicts: [] }]);
    assert.deepEqual(await listTree(sandbox.root), { d: 'dir', 'd/e': 'dir', 'd/e/x': 'file:x\n', 'd/y': 'file:y\n', 'keep.txt': 'file:keep\n' });
    const defaultMode = 0o777 & ~process.umask();
    assert.deepEqual(Object.values(ownersOf(sandbox.root, REPLACED)).map((owner) => owner?.mode), [defaultMode, defaultMode]);
    await workspace.close();
  });
});

test('an undo record written before directory modes were kept is still undone, its directories made with the default mode', async () => {
  await withSandbox(TYPE_CHANGE_TREES.directoryToFile, async (sandbox) => {
    ownReplacedModes(sandbox.root);
    const before = await listTree(sandbox.root);
    const workspace = await sandbox.open();
    const { transactionId } = await committed(workspace, TYPE_CHANGE_PLANS.directoryToFile);
    const history = path.join(sandbox.state, 'history');
    const [name] = (await readdir(history)).filter((file) => file.includes(transactionId));
    const bytes = await readFile(path.join(history, name!));
    const newline = bytes.indexOf(0x0a);
    const header = JSON.parse(bytes.subarray(0, newline).toString('utf8')) as Record<string, unknown>;
    assert.ok('directoryOwners' in header, 'the record of today keeps the modes');
    delete header.directoryOwners;
    // Written before headers were sealed too: no checksum.
    delete header.headerCrc32;
    await writeFile(path.join(history, name!), Buffer.concat([Buffer.from(JSON.stringify(header)), bytes.subarray(newline)]));
    const undone = await undoTransaction({ workspaceId: 'ws', transactionId }, { workspace, signal });
    assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
    assert.deepEqual(await listTree(sandbox.root), before);
    const defaultMode = 0o777 & ~process.umask();
    assert.deepEqual(Object.values(ownersOf(sandbox.root, REPLACED)).map((owner) => owner?.mode), [defaultMode, defaultMode]);
    await workspace.close();
  });
});

test('an undo that would replace a directory holding something it does not delete is refused naming the undo, not a patch', async () => {
  await withSandbox(TYPE_CHANGE_TREES.fileToDirectory, async (sandbox) => {
    const workspace = await sandbox.open();
    const { transactionId } = await committed(workspace, TYPE_CHANGE_PLANS.fileToDirectory);
    await writeFile(path.join(sandbox.root, 'foo/untracked'), 'u\n');
    const before = await listTree(sandbox.root);
    const refusals = [];
    for (const dryRun of [true, false]) {
      const receipt = await undoTransaction({ workspaceId: 'ws', transactionId, dryRun }, { workspace, signal });
      assert.equal(receipt.error?.code, 'already_exists');
      refusals.push(receipt.error!);
    }
    // Found by the commit itself (the undo's plan passed, something arrived since).
    const undoPlan = planOf(deleteFile('foo/baz'), deleteFile('foo/sub/bar'), addFile('foo', 'foo\n'), updateFile('keep.txt', 'keep\n'));
    const snapshots = await workspace.snapshot(pathsOf(undoPlan));
    assert.ok(snapshots.ok);
    const outcome = await workspace.commit(undoPlan, { atomic: true, snapshots: snapshots.value, undoOf: transactionId, format: 'undo' });
    assert.ok(outcome.status === 'rejected');
    refusals.push(outcome.error);
    for (const { message, hint } of refusals) {
      assert.match(message, new RegExp(`^Undoing ${transactionId} replaces the directory foo by a file, but foo holds foo/untracked, which the undo does not delete`));
      assert.doesNotMatch(`${message} ${hint}`, /the patch|same patch/);
    }
    assert.deepEqual(await listTree(sandbox.root), before);
    await workspace.close();
  });
});
