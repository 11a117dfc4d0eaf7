/**
 * A commit whose rollback fails too cannot promise "Nothing was written": its receipt is
 * rollback_incomplete, with a hint saying the rollback finishes at the next open — and the next
 * open does finish it.
 */
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { ERROR_HINTS } from '../../protocol/index.ts';
import { nodeDiskCalls, type DiskCalls } from '../../daemon/workspace/diskCalls.ts';
import { exhaustDescriptors } from '../helpers/descriptors.ts';
import { listTree, planOf, snapshotAndCommit, updateFile, withSandbox } from './fixtures.ts';

/** Disk calls on which every rename in the tree (not the state dir) fails with EIO from the first rename onto `target` on. */
function diskFailingFrom(target: string): DiskCalls {
  const tree = path.dirname(target);
  let failing = false;
  const check = (to: string): void => {
    failing ||= to === target;
    if (failing && path.dirname(to) === tree) throw Object.assign(new Error(`EIO: i/o error, rename '${to}'`), { code: 'EIO' });
  };
  return {
    ...nodeDiskCalls,
    rename: async (from, to) => {
      check(to);
      await nodeDiskCalls.rename(from, to);
    },
    renameSync: (from, to) => {
      check(to);
      nodeDiskCalls.renameSync(from, to);
    },
  };
}

test('a failed rollback is rollback_incomplete, never io_error\'s "Nothing was written"; the next open finishes it', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, async (sandbox) => {
    const before = await listTree(sandbox.root);
    const workspace = await sandbox.open({ disk: diskFailingFrom(path.join(sandbox.root, 'b.txt')) });
    const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A\n'), updateFile('b.txt', 'B\n')));
    await workspace.close();
    if (outcome.status === 'applied') assert.fail('the commit failed');
    assert.equal(outcome.error.code, 'rollback_incomplete');
    assert.equal(outcome.error.hint, ERROR_HINTS.rollback_incomplete);
    assert.doesNotMatch(outcome.error.hint, /Nothing was written/);
    assert.match(outcome.error.message, /Rolling back also failed .* next opened/);
    assert.equal((await listTree(sandbox.root))['a.txt'], 'file:A\n', 'the failed rollback left the first file patched');

    const reopened = await sandbox.open();
    assert.deepEqual(reopened.recovered.map((report) => report.outcome), ['rolled_back']);
    assert.deepEqual(await listTree(sandbox.root), before);
    await reopened.close();
  });
});

test('out of descriptors mid-commit: io_error and rollback_incomplete, not stale_file; no temp left, no journal set aside; the next open rolls it back', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n' }, async (sandbox) => {
    const before = await listTree(sandbox.root);
    let descriptors: { release(): void } | undefined;
    // After a.txt is renamed into place: b.txt's last look, and the rollback's reads, find no descriptor.
    const workspace = await sandbox.open({ hooks: { beforeRename: (index) => void (index === 1 && (descriptors = exhaustDescriptors())) } });
    let outcome;
    try {
      outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'A\n'), updateFile('b.txt', 'B\n')));
    } finally {
      descriptors?.release();
    }
    await workspace.close();
    if (outcome.status === 'applied') assert.fail('the commit failed');
    assert.equal(outcome.error.code, 'rollback_incomplete');
    assert.match(outcome.error.message, /^Could not rename new content onto b\.txt: EMFILE .*Rolling back also failed/);
    assert.deepEqual(await listTree(sandbox.root), { ...before, 'a.txt': 'file:A\n' }, 'no temp left in the tree');
    assert.deepEqual((await readdir(path.join(sandbox.state, 'journal'))).filter((name) => name.endsWith('.conflict')), [], 'nothing set aside as a conflict');

    const reopened = await sandbox.open();
    assert.deepEqual(reopened.recovered.map((report) => [report.outcome, report.conflicts]), [['rolled_back', []]]);
    assert.deepEqual(await listTree(sandbox.root), before);
    await reopened.close();
  });
});
