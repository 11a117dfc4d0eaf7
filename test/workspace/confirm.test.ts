/**
 * The last look before a rename: a file that changed (or a link put in its place) is not
 * replaced; a look that fails for a reason that is not the file's is an error, not a change —
 * taken for one, a commit short of descriptors said stale_file and set journals aside as
 * conflicts over files nobody had touched.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { replaceIfUnchanged } from '../../daemon/workspace/confirm.ts';
import { readDiskEntry } from '../../daemon/workspace/files.ts';
import { exhaustDescriptors } from '../helpers/descriptors.ts';

async function fileEntry(absolute: string) {
  const entry = await readDiskEntry(absolute, path.basename(absolute));
  assert.ok(entry.ok && entry.value.kind === 'file');
  return entry.value;
}

test('the file as verified is replaced; changed, or a link in its place, it is not', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'patchd-confirm-'));
  try {
    const target = path.join(dir, 'a.txt');
    writeFileSync(target, 'one\n');
    const verified = await fileEntry(target);
    let replaced = 0;
    assert.equal(replaceIfUnchanged(target, verified, () => void replaced++), true);
    writeFileSync(target, 'two\n');
    assert.equal(replaceIfUnchanged(target, verified, () => void replaced++), false);
    rmSync(target);
    symlinkSync(path.join(dir, 'elsewhere'), target);
    assert.equal(replaceIfUnchanged(target, verified, () => void replaced++), false);
    assert.equal(replaced, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('out of descriptors, the look throws EMFILE instead of saying the file changed', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'patchd-confirm-'));
  try {
    const target = path.join(dir, 'a.txt');
    writeFileSync(target, 'one\n');
    const verified = await fileEntry(target);
    let replaced = false;
    const descriptors = exhaustDescriptors();
    try {
      assert.throws(() => replaceIfUnchanged(target, verified, () => (replaced = true)), { code: 'EMFILE' });
    } finally {
      descriptors.release();
    }
    assert.equal(replaced, false);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
