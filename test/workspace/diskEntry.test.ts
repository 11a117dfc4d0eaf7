/**
 * `readDiskEntry` reads small files in one synchronous turn and larger ones asynchronously:
 * both give the same entry (bytes, owner, stamp), and missing paths, directories and
 * non-regular files come out the same way whatever the size bound.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readDiskEntry } from '../../daemon/workspace/files.ts';

function withDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'patchd-entry-'));
  return run(dir).finally(() => rmSync(dir, { recursive: true, force: true }));
}

test('small and large files read to the same kind of entry: every byte, the owner and the stamp', async () => {
  await withDir(async (dir) => {
    // Either side of the synchronous-read bound (256 KiB).
    for (const size of [0, 5, 256 * 1024, 256 * 1024 + 1, 1024 * 1024]) {
      const file = path.join(dir, `f${size}`);
      const bytes = Buffer.alloc(size, 'x');
      if (size > 0) bytes[size - 1] = 0x0a;
      writeFileSync(file, bytes);
      chmodSync(file, 0o640);
      const entry = await readDiskEntry(file, `f${size}`);
      assert.ok(entry.ok && entry.value.kind === 'file', `${size}: ${entry.ok ? entry.value.kind : entry.error.message}`);
      assert.ok(Buffer.from(entry.value.bytes).equals(bytes), `${size}: bytes`);
      const stats = lstatSync(file, { bigint: true });
      assert.deepEqual(entry.value.owner, { mode: 0o640, uid: Number(stats.uid), gid: Number(stats.gid) });
      assert.equal(entry.value.stamp.ino, stats.ino);
      assert.equal(entry.value.stamp.size, BigInt(size));
      assert.equal(entry.value.stamp.mtimeNs, stats.mtimeNs);
    }
  });
});

test('missing, below a file, a directory and a FIFO', async () => {
  await withDir(async (dir) => {
    writeFileSync(path.join(dir, 'file'), 'x');
    mkdirSync(path.join(dir, 'sub'));
    assert.deepEqual(await readDiskEntry(path.join(dir, 'nope'), 'nope'), { ok: true, value: { kind: 'missing' } });
    assert.deepEqual(await readDiskEntry(path.join(dir, 'file', 'below'), 'file/below'), { ok: true, value: { kind: 'missing' } });
    assert.deepEqual(await readDiskEntry(path.join(dir, 'sub'), 'sub'), { ok: true, value: { kind: 'directory' } });
    if (spawnSync('mkfifo', [path.join(dir, 'pipe')]).status === 0) {
      const fifo = await readDiskEntry(path.join(dir, 'pipe'), 'pipe');
      assert.ok(!fifo.ok);
      assert.equal(fifo.error.code, 'permission_denied');
    }
  });
});
