import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import type { PlannedFile } from '../../daemon/engine/types.ts';
import { addFile, deleteFile, listTree, planOf, renameFile, snapshotAndCommit, updateFile, withSandbox } from './fixtures.ts';

const EXISTING = { 'e0.txt': 'zero\n', 'e1.txt': 'one\n', 'd/e2.txt': 'two\n', 'd/e3.txt': 'three\n' };
const FREE = ['n0.txt', 'new/n1.txt', 'new/deep/n2.txt', 'd/n3.txt'];

type Choice = { kind: 'none' | 'update' | 'delete' | 'rename' | 'add'; text: string };

const choiceFor = (kinds: Choice['kind'][]) => fc.record({ kind: fc.constantFrom(...kinds), text: fc.string({ maxLength: 12 }) });

/** Builds a plan from per-path choices and the tree it should produce. */
function buildPlan(existingChoices: Choice[], freeChoices: Choice[]): { files: PlannedFile[]; expected: Record<string, string> } {
  const files: PlannedFile[] = [];
  const expected: Record<string, string> = { ...EXISTING };
  const free = [...FREE];
  const unusedFree = new Set(FREE);
  Object.keys(EXISTING).forEach((path, index) => {
    const choice = existingChoices[index] ?? { kind: 'none', text: '' };
    if (choice.kind === 'update') {
      files.push(updateFile(path, choice.text));
      expected[path] = choice.text;
    } else if (choice.kind === 'delete') {
      files.push(deleteFile(path));
      delete expected[path];
    } else if (choice.kind === 'rename' && free.length > 0) {
      const target = free.shift() ?? '';
      unusedFree.delete(target);
      files.push(renameFile(path, target, choice.text));
      delete expected[path];
      expected[target] = choice.text;
    }
  });
  [...unusedFree].forEach((path, index) => {
    const choice = freeChoices[index];
    if (choice?.kind !== 'add') return;
    files.push(addFile(path, choice.text));
    expected[path] = choice.text;
  });
  return { files, expected };
}

function treeOf(files: Record<string, string>): Record<string, string> {
  const tree: Record<string, string> = {};
  for (const [path, text] of Object.entries(files)) {
    const parts = path.split('/');
    for (let depth = 1; depth < parts.length; depth++) tree[parts.slice(0, depth).join('/')] = 'dir';
    tree[path] = `file:${Buffer.from(text).toString('latin1')}`;
  }
  return tree;
}

test('a commit leaves exactly the post-image, or (failing at any rename) exactly the pre-image', async () => {
  const scenario = fc.record({
    existing: fc.array(choiceFor(['none', 'update', 'delete', 'rename']), { minLength: 4, maxLength: 4 }),
    free: fc.array(choiceFor(['none', 'add']), { minLength: 4, maxLength: 4 }),
    order: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
    failAt: fc.option(fc.nat(9), { nil: undefined }),
  });
  await fc.assert(fc.asyncProperty(scenario, async ({ existing, free, order, failAt }) => {
    const { files, expected } = buildPlan(existing, free);
    if (files.length === 0) return;
    const shuffled = files.map((file, index) => ({ file, key: order[index] ?? 0 })).sort((a, b) => a.key - b.key).map(({ file }) => file);
    const steps = shuffled.reduce((count, file) => count + (file.op === 'rename' ? 2 : 1), 0);
    await withSandbox(EXISTING, async (sandbox) => {
      const before = await listTree(sandbox.root);
      const workspace = await sandbox.open({
        hooks: { beforeRename: (index) => { if (index === failAt) throw new Error('injected'); } },
      });
      const outcome = await snapshotAndCommit(workspace, planOf(...shuffled));
      await workspace.close();
      const failed = failAt !== undefined && failAt < steps;
      assert.equal(outcome.status, failed ? 'rejected' : 'applied');
      const after = await listTree(sandbox.root);
      if (failed) assert.deepEqual(after, before);
      // Directories a commit empties go too (tidy trees, as `git apply` does).
      else assert.deepEqual(after, treeOf(expected));
    });
  }), { numRuns: 40 });
});
