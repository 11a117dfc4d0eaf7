/** A commit a killed process left unfinished is finished when a daemon opens the workspace, and the client is told how. */
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PatchClient } from '../../client/index.ts';
import { stateDirFor } from '../../daemon/workspace/workspace.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const crashChild = fileURLToPath(new URL('../workspace/crashChild.ts', import.meta.url));
const CRASH_TREE = { 'two.txt': 'two\n', 'three.txt': 'three\n', 'four.txt': 'four\n', 'keep.txt': 'untouched\n' };

function commitAndDie(root: string, when: string): void {
  const args = ['--import', 'tsx', crashChild, root, stateDirFor(root, TEST_STATE_ROOT), when];
  const child = spawnSync(process.execPath, args, { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(child.signal, 'SIGKILL', child.stderr);
}

for (const [when, outcome, paths] of [
  ['rename:3', 'rolled_back', ['a/one.txt', 'two.txt', 'three.txt']],
  ['drop', 'rolled_forward', ['a/one.txt', 'two.txt', 'three.txt', 'four.txt', 'b/c/five.txt']],
] as const) {
  test(`workspace/open reports a commit killed at ${when} as ${outcome}, to its first opener only`, async () => {
    using tree = createTempTree(CRASH_TREE);
    commitAndDie(tree.root, when);
    await using client = await PatchClient.spawn();
    const workspace = await client.openWorkspace(tree.root);
    assert.deepEqual(workspace.recovered.map((report) => ({ outcome: report.outcome, paths: report.paths, conflicts: report.conflicts })), [
      { outcome, paths: [...paths], conflicts: [] },
    ]);
    assert.equal(tree.text('two.txt'), outcome === 'rolled_back' ? 'two\n' : '2\n');
    assert.deepEqual((await client.openWorkspace(tree.root)).recovered, []);
  });
}
