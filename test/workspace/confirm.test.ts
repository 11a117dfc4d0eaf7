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
import { readDiskEntry, type DiskEntry } from '../../daemon/workspace/files.ts';
import { exhaustDescriptors } from '../helpers/descriptors.ts';

/** A scratch dir holding a.txt ("one"), and that file's entry as a commit verifies it. */
async function withVerifiedFile(body: (dir: string, target: string, verified: Extract<DiskEntry, { kind: 'file' }>) => Promise<void> | void): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'patchd-confirm-'));
  try {
    const target = path.join(dir, 'a.txt');
    writeFileSync(target, 'one\n');
    const entry = await readDiskEntry(target, 'a.txt');
    assert.ok(entry.ok && entry.value.kind === 'file');
    await body(dir, target, entry.value);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the file as verified is replaced; changed, or a link in its place, it is not', () => withVerifiedFile((dir, target, verified) => {
  let replaced = 0;
  assert.equal(replaceIfUnchanged(target, verified, () => void replaced++), true);
  writeFileSync(target, 'two\n');
  assert.equal(replaceIfUnchanged(target, verified, () => void replaced++), false);
  rmSync(target);
  symlinkSync(path.join(dir, 'elsewhere'), target);
  assert.equal(replaceIfUnchanged(target, verified, () => void replaced++), false);
  assert.equal(replaced, 1);
}));

test('out of descriptors, the look throws EMFILE instead of saying the file changed', () => withVerifiedFile((_dir, target, verified) => {
  let replaced = false;
  const descriptors = exhaustDescriptors();
  try {
    assert.throws(() => replaceIfUnchanged(target, verified, () => (replaced = true)), { code: 'EMFILE' });
  } finally {
    descriptors.release();
  }
  assert.equal(replaced, false);
}));
