/** The content cache: served only while the file's stamp is unchanged and not racy; bounded; and what a workspace read gets from it. */
import assert from 'node:assert/strict';
import { lstatSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ContentCache } from '../../daemon/workspace/cache.ts';
import { readDiskEntry, type DiskEntry } from '../../daemon/workspace/files.ts';
import { RACY_NS, type FileStamp } from '../../daemon/workspace/stamp.ts';
import { withSandbox } from './fixtures.ts';

const OWNER = { mode: 0o644, uid: 0, gid: 0 };

/** A file entry whose stamp was taken well after its last change (not racy). */
function settledEntry(text: string, ino: bigint): Extract<DiskEntry, { kind: 'file' }> {
  const bytes = Buffer.from(text);
  const stamp: FileStamp = { ino, size: BigInt(bytes.length), mtimeNs: 1_000n, ctimeNs: 1_000n, birthtimeNs: 1_000n, takenAtNs: 1_000n + RACY_NS };
  return { kind: 'file', bytes, owner: OWNER, stamp };
}

/** What an lstat of that file would show now. */
function statsOf(entry: Extract<DiskEntry, { kind: 'file' }>, changes: Partial<FileStamp> = {}) {
  const stamp = { ...entry.stamp, ...changes };
  return { ino: stamp.ino, size: stamp.size, mtimeNs: stamp.mtimeNs, ctimeNs: stamp.ctimeNs, isFile: () => true } as unknown as import('node:fs').BigIntStats;
}

test('an entry is served while the stamp is unchanged, and dropped once any part of it differs', () => {
  const cache = new ContentCache();
  const entry = settledEntry('hello\n', 7n);
  cache.remember('a.txt', entry);
  assert.equal(cache.lookup('a.txt', statsOf(entry)), entry);
  for (const change of [{ ino: 8n }, { size: 99n }, { mtimeNs: 2_000n }, { ctimeNs: 2_000n }]) {
    cache.remember('a.txt', entry);
    assert.equal(cache.lookup('a.txt', statsOf(entry, change)), undefined, JSON.stringify(change, (_key, value) => (typeof value === 'bigint' ? String(value) : value)));
    assert.equal(cache.size, 0);
  }
});

test('a racy stamp (taken within a clock tick of the last change) is never kept', () => {
  const cache = new ContentCache();
  const entry = settledEntry('hello\n', 7n);
  cache.remember('a.txt', { ...entry, stamp: { ...entry.stamp, takenAtNs: entry.stamp.ctimeNs + RACY_NS - 1n } });
  assert.equal(cache.size, 0);
  cache.remember('a.txt', entry);
  assert.equal(cache.size, 1);
});

test('bounded: large entries are skipped, and the least recently used go first', () => {
  const cache = new ContentCache({ maxBytes: 10, maxEntryBytes: 6 });
  cache.remember('big', settledEntry('1234567', 1n));
  assert.equal(cache.size, 0);
  const a = settledEntry('aaaa', 2n);
  cache.remember('a', a);
  cache.remember('b', settledEntry('bbbb', 3n));
  assert.equal(cache.lookup('a', statsOf(a)), a, 'touching a makes b the oldest');
  cache.remember('c', settledEntry('cccc', 4n));
  assert.deepEqual([cache.size, cache.bytes], [2, 8]);
  assert.equal(cache.lookup('a', statsOf(a)), a);
  assert.equal(cache.lookup('b', statsOf(settledEntry('bbbb', 3n))), undefined);
});

/** Waits until a file written just now is out of the racy window, so a read of it is cacheable (there is no event for that). */
const outOfRacyWindow = () => new Promise((resolve) => setTimeout(resolve, Number(RACY_NS / 1_000_000n) + 5));

test('real files: a rewrite or an editor-style replace changes the stamp, so stale bytes are never served', async () => {
  await withSandbox({ 'a.txt': 'one\n' }, async (sandbox) => {
    const file = path.join(sandbox.root, 'a.txt');
    await outOfRacyWindow();
    const read = await readDiskEntry(file, 'a.txt');
    assert.ok(read.ok && read.value.kind === 'file');
    const cache = new ContentCache();
    const entry = read.value;
    cache.remember('a.txt', entry);
    assert.equal(cache.lookup('a.txt', lstatSync(file, { bigint: true })), entry);
    writeFileSync(file, 'two\n');
    assert.equal(cache.lookup('a.txt', lstatSync(file, { bigint: true })), undefined, 'same size, new content');
    cache.remember('a.txt', entry);
    writeFileSync(`${file}.tmp`, 'one\n');
    renameSync(`${file}.tmp`, file);
    assert.equal(cache.lookup('a.txt', lstatSync(file, { bigint: true })), undefined, 'same bytes, new inode');
  });
});

test('a workspace read is served from the cache, and an outside write is seen even before any watcher event', async () => {
  await withSandbox({ 'a.txt': 'one\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    try {
      await outOfRacyWindow();
      const first = await workspace.read('a.txt');
      assert.ok(first.ok);
      assert.equal(workspace.usage.cachedFiles, 1);
      const again = await workspace.read('a.txt');
      assert.deepEqual(again, first);
      writeFileSync(path.join(sandbox.root, 'a.txt'), 'two\n');
      const fresh = await workspace.read('a.txt');
      assert.ok(fresh.ok);
      assert.equal(fresh.value.content, 'two\n');
    } finally {
      await workspace.close();
    }
  });
});
