/**
 * Outside changes, as the workspace reports them: in-place writes, editor-style saves (temp +
 * rename), deletes and recreations of files it read or wrote — never its own commits; and a
 * workspace that has touched nothing watches nothing.
 */
import assert from 'node:assert/strict';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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
  /**
   * Waits for the next report, which must be what was just written to `path` (`text`; null:
   * removed). A write truncates, then writes, and a replace unlinks, then creates: a re-check
   * may fall between the two, so an empty or a missing file told first is passed over.
   */
  const written = async (path: string, text: string | null, timeoutMs = 120_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    for (let from = seen.length; ; ) {
      for (; from < seen.length; from++) {
        const change = seen[from]!;
        if (change.path === path && (change.sha256 === sha('') || change.sha256 === null) && text !== null && text !== '') continue;
        return assert.deepEqual(change, { path, sha256: text === null ? null : sha(text) }, `the report of ${JSON.stringify(text)}`);
      }
      if (Date.now() > deadline) throw new Error(`no change reported for ${path} within ${timeoutMs} ms (saw ${JSON.stringify(seen)})`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  };
  return { seen, next, written };
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

/**
 * A file replaced rather than written in place (`rm f && echo … > f`, `git checkout`, an editor
 * saving by rename) ends its watch; on ext4 the new file even gets the old one's inode number,
 * so chokidar keeps the dead watch for live. Each replacement, and each edit after it, must
 * still be reported: every step waits for its own report (what it wrote), nothing is timed.
 */
test('a file replaced by unlink and recreate, again and again, and edited in place after, is reported every time', async () => {
  await withSandbox({ 'a.txt': 'one\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const changes = recordChanges(workspace);
    const file = path.join(sandbox.root, 'a.txt');
    try {
      assert.ok((await workspace.read('a.txt')).ok);
      for (let round = 1; round <= 4; round++) {
        rmSync(file);
        writeFileSync(file, `replaced ${round}\n`);
        await changes.written('a.txt', `replaced ${round}\n`);
      }
      for (let round = 1; round <= 3; round++) {
        writeFileSync(file, `edited ${round}\n`);
        await changes.written('a.txt', `edited ${round}\n`);
      }
    } finally {
      await workspace.close();
    }
  });
});

test('an editor-style save, then an unlink and recreate, then edits: each is reported', async () => {
  await withSandbox({ 'a.txt': 'one\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const changes = recordChanges(workspace);
    const file = path.join(sandbox.root, 'a.txt');
    try {
      assert.ok((await workspace.read('a.txt')).ok);
      writeFileSync(`${file}.tmp`, 'saved\n');
      renameSync(`${file}.tmp`, file);
      await changes.written('a.txt', 'saved\n');
      rmSync(file);
      writeFileSync(file, 'recreated\n');
      await changes.written('a.txt', 'recreated\n');
      for (const text of ['edit 1\n', 'edit 2\n']) {
        writeFileSync(file, text);
        await changes.written('a.txt', text);
      }
    } finally {
      await workspace.close();
    }
  });
});

test('a file whose directory is removed (rm -r) is reported gone, then back once the directory and the file are made again, then edited', async () => {
  await withSandbox({ 'sub/deeper/h.txt': 'h\n', 'sub/other.txt': 'other\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const changes = recordChanges(workspace);
    const sub = path.join(sandbox.root, 'sub');
    const file = path.join(sub, 'deeper', 'h.txt');
    try {
      assert.ok((await workspace.read('sub/deeper/h.txt')).ok);
      rmSync(sub, { recursive: true });
      await changes.written('sub/deeper/h.txt', null);
      mkdirSync(path.join(sub, 'deeper'), { recursive: true });
      writeFileSync(path.join(sub, 'other.txt'), 'not watched\n');
      writeFileSync(file, 'h again\n');
      await changes.written('sub/deeper/h.txt', 'h again\n');
      for (const text of ['h edit 1\n', 'h edit 2\n']) {
        writeFileSync(file, text);
        await changes.written('sub/deeper/h.txt', text);
      }
      assert.deepEqual(changes.seen.filter((change) => change.path !== 'sub/deeper/h.txt'), [], 'a file never read is never reported');
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

/**
 * Each commit renames a new file over the watched one, which ends its watch: the watcher sets it
 * again at once. An outside change made the moment the commit is reported must still be told,
 * whatever it is, and never the commit itself.
 */
test('a file patchd commits to is watched again after each commit: a save by rename, an unlink and recreate, or an edit right after it is reported', async () => {
  await withSandbox({ 'a.txt': 'one\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const changes = recordChanges(workspace);
    const file = path.join(sandbox.root, 'a.txt');
    const outside: [string, (text: string) => void][] = [
      ['saved by rename', (text) => (writeFileSync(`${file}.tmp`, text), renameSync(`${file}.tmp`, file))],
      ['replaced', (text) => (rmSync(file), writeFileSync(file, text))],
      ['edited', (text) => writeFileSync(file, text)],
    ];
    try {
      assert.ok((await workspace.read('a.txt')).ok);
      for (let round = 1; round <= 2; round++) {
        for (const [name, change] of outside) {
          const lease = await workspace.lock(['a.txt']);
          const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', `ours, before ${name} ${round}\n`)));
          lease.release();
          assert.equal(outcome.status, 'applied');
          change(`${name} ${round}\n`);
          await changes.written('a.txt', `${name} ${round}\n`);
        }
      }
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
