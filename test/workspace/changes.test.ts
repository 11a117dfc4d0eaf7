/**
 * Outside changes, as the workspace reports them: in-place writes, editor-style saves (temp +
 * rename), deletes and recreations of files it read or wrote — never its own commits; and a
 * workspace that has touched nothing watches nothing.
 */
import assert from 'node:assert/strict';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { sha256Hex, type FileChange, type Workspace } from '../../daemon/workspace/workspace.ts';
import { encode, planOf, snapshotAndCommit, updateFile, withSandbox } from './fixtures.ts';

/** Records every change the workspace reports; `next` waits for one on `path`. */
function recordChanges(workspace: Workspace) {
  const seen: FileChange[] = [];
  const waiters: (() => void)[] = [];
  workspace.onExternalChange((change) => {
    seen.push(change);
    waiters.splice(0).forEach((wake) => wake());
  });
  // The bound is a hang guard for a change that never comes, far beyond any machine's delay; nothing is timed.
  const next = async (path: string, timeoutMs = 120_000): Promise<FileChange> => {
    const deadline = Date.now() + timeoutMs;
    for (let from = seen.length; ; ) {
      const found = seen.slice(from).find((change) => change.path === path);
      if (found !== undefined) return found;
      if (Date.now() > deadline) throw new Error(`no change reported for ${path} within ${timeoutMs} ms (saw ${JSON.stringify(seen)})`);
      from = seen.length;
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  };
  return { seen, next };
}

const sha = (text: string) => sha256Hex(encode(text));

test('opening watches nothing; reading a file watches that file only', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    try {
      assert.equal(workspace.usage.watchedPaths, 0);
      assert.ok((await workspace.read('a.txt')).ok);
      assert.equal(workspace.usage.watchedPaths, 1);
    } finally {
      await workspace.close();
    }
    assert.equal(workspace.usage.watchedPaths, 0);
  });
});

test('an in-place write, an editor-style save and a delete of a read file are reported with the new sha256', async () => {
  await withSandbox({ 'a.txt': 'one\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const changes = recordChanges(workspace);
    const file = path.join(sandbox.root, 'a.txt');
    try {
      assert.ok((await workspace.read('a.txt')).ok);
      writeFileSync(file, 'two\n');
      assert.deepEqual(await changes.next('a.txt'), { path: 'a.txt', sha256: sha('two\n') });
      writeFileSync(`${file}.swp`, 'three\n');
      renameSync(`${file}.swp`, file);
      assert.deepEqual(await changes.next('a.txt'), { path: 'a.txt', sha256: sha('three\n') });
      rmSync(file);
      assert.deepEqual(await changes.next('a.txt'), { path: 'a.txt', sha256: null });
      writeFileSync(file, 'back\n');
      assert.deepEqual(await changes.next('a.txt'), { path: 'a.txt', sha256: sha('back\n') });
    } finally {
      await workspace.close();
    }
  });
});

test('a second write right after the first (inside chokidar\'s drop window) is still the one reported', async () => {
  await withSandbox({ 'a.txt': 'one\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const changes = recordChanges(workspace);
    try {
      assert.ok((await workspace.read('a.txt')).ok);
      writeFileSync(path.join(sandbox.root, 'a.txt'), 'two\n');
      writeFileSync(path.join(sandbox.root, 'a.txt'), 'three\n');
      await changes.next('a.txt');
      await workspace.changesSettled();
      assert.deepEqual(changes.seen.at(-1), { path: 'a.txt', sha256: sha('three\n') });
    } finally {
      await workspace.close();
    }
  });
});

test('a write made the moment a cached file is first read (before its watch is active) is reported by the re-check that covers the new watch', async () => {
  await withSandbox({ 'a.txt': 'one\n' }, async (sandbox) => {
    // Old enough that its stamp is not racy: the read below is cached, and the re-check starts from the cache.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const workspace = await sandbox.open();
    const changes = recordChanges(workspace);
    try {
      assert.ok((await workspace.read('a.txt')).ok);
      assert.equal(workspace.usage.cachedFiles, 1);
      writeFileSync(path.join(sandbox.root, 'a.txt'), 'two\n');
      assert.deepEqual(await changes.next('a.txt'), { path: 'a.txt', sha256: sha('two\n') });
      await workspace.changesSettled();
      assert.equal(changes.seen.length, 1);
    } finally {
      await workspace.close();
    }
  });
});

test('the workspace\'s own commits are never reported as outside changes', async () => {
  await withSandbox({ 'a.txt': 'one\n', 'b.txt': 'b\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const changes = recordChanges(workspace);
    try {
      assert.ok((await workspace.read('b.txt')).ok);
      // Under the path's lock, as the server commits: a re-check then waits for the commit, however slow the disk.
      const lease = await workspace.lock(['a.txt']);
      const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'ours\n')));
      lease.release();
      assert.equal(outcome.status, 'applied');
      // An outside write to b after our commit to a: once b is reported, a's own event has been re-checked too.
      writeFileSync(path.join(sandbox.root, 'b.txt'), 'theirs\n');
      await changes.next('b.txt');
      await workspace.changesSettled();
      assert.deepEqual(changes.seen, [{ path: 'b.txt', sha256: sha('theirs\n') }]);
    } finally {
      await workspace.close();
    }
  });
});

test('a locked snapshot that finds other bytes than patchd knew reports them, without waiting for the watcher', async () => {
  await withSandbox({ 'a.txt': 'one\n' }, async (sandbox) => {
    const workspace = await sandbox.open({ settleMs: 60_000 });
    const changes = recordChanges(workspace);
    try {
      assert.ok((await workspace.read('a.txt')).ok);
      writeFileSync(path.join(sandbox.root, 'a.txt'), 'two\n');
      using _lease = await workspace.lock(['a.txt']);
      assert.ok((await workspace.snapshot(['a.txt'], { locked: true, fresh: true })).ok);
      assert.deepEqual(changes.seen, [{ path: 'a.txt', sha256: sha('two\n') }]);
    } finally {
      await workspace.close();
    }
  });
});

test('watching is bounded: the least recently touched file is dropped first, and said to be', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' }, async (sandbox) => {
    const workspace = await sandbox.open({ maxWatchedPaths: 2 });
    const changes = recordChanges(workspace);
    try {
      const unwatched: string[] = [];
      workspace.onUnwatched((path) => unwatched.push(path));
      for (const name of ['a.txt', 'b.txt', 'c.txt']) assert.ok((await workspace.read(name)).ok);
      assert.equal(workspace.usage.watchedPaths, 2);
      assert.deepEqual(unwatched, ['a.txt']);
      writeFileSync(path.join(sandbox.root, 'a.txt'), 'dropped\n');
      writeFileSync(path.join(sandbox.root, 'c.txt'), 'kept\n');
      await changes.next('c.txt');
      await workspace.changesSettled();
      assert.deepEqual(changes.seen, [{ path: 'c.txt', sha256: sha('kept\n') }]);
    } finally {
      await workspace.close();
    }
  });
});
