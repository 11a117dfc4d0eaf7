/**
 * The lazy watcher on its own, against real files: every kind of change to a watched file is
 * hinted, including after its inode was replaced (an editor's save, patchd's own commit) or
 * it was deleted and recreated, and an unwatched or closed watcher hints nothing. No clock:
 * each step waits for the hint it expects.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { LazyWatcher } from '../../daemon/workspace/watcher.ts';
import { sha256Hex, type FileChange } from '../../daemon/workspace/workspace.ts';
import { encode, planOf, snapshotAndCommit, updateFile, withSandbox } from './fixtures.ts';

/** A watcher over a fresh directory; `next(path)` resolves at the next hint for `path`. */
function watched(maxPaths = 100) {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'patchd-watch-')));
  const hints: string[] = [];
  const dropped: string[] = [];
  let wake: (() => void) | undefined;
  const watcher = new LazyWatcher({
    root, maxPaths,
    onHint: (relative) => {
      hints.push(relative);
      wake?.();
    },
    onDrop: (relative) => dropped.push(relative),
    onError: (error) => assert.fail(String(error)),
  });
  const next = async (relative: string): Promise<void> => {
    const from = hints.length;
    while (!hints.slice(from).includes(relative)) await new Promise<void>((resolve) => (wake = resolve));
  };
  const file = (relative: string) => path.join(root, ...relative.split('/'));
  // The watches never hold the process open (by design), so the test holds it while it waits.
  const alive = setInterval(() => {}, 1 << 30);
  const cleanup = async () => {
    clearInterval(alive);
    await watcher.close();
    rmSync(root, { recursive: true, force: true });
  };
  return { root, watcher, hints, dropped, next, file, cleanup };
}

test('an in-place write, a replace by rename and the writes after it are all hinted', async () => {
  const w = watched();
  try {
    writeFileSync(w.file('a.txt'), 'one\n');
    assert.equal(w.watcher.watch('a.txt'), true);
    assert.equal(w.watcher.watch('a.txt'), false);
    let seen = w.next('a.txt');
    writeFileSync(w.file('a.txt'), 'two\n');
    await seen;
    // The watch follows the new inode after a replace: a write to the new file right after it is hinted too.
    seen = w.next('a.txt');
    writeFileSync(w.file('.a.tmp'), 'three\n');
    renameSync(w.file('.a.tmp'), w.file('a.txt'));
    await seen;
    seen = w.next('a.txt');
    writeFileSync(w.file('a.txt'), 'four\n');
    await seen;
  } finally {
    await w.cleanup();
  }
});

test('a deleted file is hinted, and so is its recreation, even with its directory gone in between', async () => {
  const w = watched();
  try {
    mkdirSync(w.file('dir/sub'), { recursive: true });
    writeFileSync(w.file('dir/sub/a.txt'), 'one\n');
    w.watcher.watch('dir/sub/a.txt');
    let seen = w.next('dir/sub/a.txt');
    rmSync(w.file('dir'), { recursive: true });
    await seen;
    seen = w.next('dir/sub/a.txt');
    mkdirSync(w.file('dir/sub'), { recursive: true });
    writeFileSync(w.file('dir/sub/a.txt'), 'back\n');
    await seen;
    seen = w.next('dir/sub/a.txt');
    writeFileSync(w.file('dir/sub/a.txt'), 'again\n');
    await seen;
  } finally {
    await w.cleanup();
  }
});

test('a path watched while missing is hinted once it is created', async () => {
  const w = watched();
  try {
    w.watcher.watch('later.txt');
    const seen = w.next('later.txt');
    writeFileSync(w.file('later.txt'), 'now\n');
    await seen;
  } finally {
    await w.cleanup();
  }
});

test('unwatched and evicted paths are hinted no more; bounded by maxPaths, least recently used first', async () => {
  const w = watched(2);
  try {
    for (const name of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) writeFileSync(w.file(name), `${name}\n`);
    w.watcher.watch('a.txt');
    w.watcher.watch('b.txt');
    w.watcher.watch('a.txt');
    w.watcher.watch('c.txt');
    assert.deepEqual(w.dropped, ['b.txt']);
    assert.equal(w.watcher.size, 2);
    w.watcher.unwatch('a.txt');
    assert.equal(w.watcher.isWatching('a.txt'), false);
    w.watcher.watch('d.txt');
    writeFileSync(w.file('a.txt'), 'changed\n');
    writeFileSync(w.file('b.txt'), 'changed\n');
    // Hints arrive in order of the writes' events: once d's is seen, a's and b's would have been.
    const seen = w.next('d.txt');
    writeFileSync(w.file('d.txt'), 'changed\n');
    await seen;
    assert.ok(!w.hints.includes('a.txt') && !w.hints.includes('b.txt'), w.hints.join());
  } finally {
    await w.cleanup();
  }
});

test('maxPaths 0 watches nothing; a closed watcher watches nothing', async () => {
  const none = watched(0);
  const closed = watched();
  try {
    assert.equal(none.watcher.watch('a.txt'), false);
    assert.equal(none.watcher.size, 0);
    await closed.watcher.close();
    assert.equal(closed.watcher.watch('a.txt'), false);
  } finally {
    await none.cleanup();
    await closed.cleanup();
  }
});

test('an outside in-place write right after our own commit to the same file is reported; our commit is not', async () => {
  await withSandbox({ 'a.txt': 'one\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const seen: FileChange[] = [];
    let wake: (() => void) | undefined;
    workspace.onExternalChange((change) => {
      seen.push(change);
      wake?.();
    });
    try {
      assert.ok((await workspace.read('a.txt')).ok);
      const lease = await workspace.lock(['a.txt']);
      const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'ours\n')));
      lease.release();
      assert.equal(outcome.status, 'applied');
      // Same size as ours, in place, at once: only the content tells the two writes apart.
      writeFileSync(path.join(sandbox.root, 'a.txt'), 'them\n');
      const theirs = sha256Hex(encode('them\n'));
      while (!seen.some((change) => change.sha256 === theirs)) await new Promise<void>((resolve) => (wake = resolve));
      await workspace.changesSettled();
      assert.deepEqual(seen, [{ path: 'a.txt', sha256: theirs }]);
    } finally {
      await workspace.close();
    }
  });
});
