/**
 * Type changes end to end, against real `git apply`: `git diff` of a commit that replaces a file
 * by a directory, or a directory by a file (as real history holds them), applied by a spawned
 * daemon forward on the old tree and backward (`git diff` the other way) on the new one, leaves
 * the tree `git apply` leaves; a dry run writes nothing; undo brings back the pre-image (a replaced
 * directory with its own mode) and undoing the undo redoes; the session diff, given to `git apply`,
 * makes the same tree. What git refuses (a directory still holding an untracked file, a file
 * changed while a file is added inside it, a path through a link), patchd refuses, writing
 * nothing. The CLI, forward and `-R`, too.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { chmodSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Workspace } from '../../client/index.ts';
import { patchd } from '../helpers/cli.ts';
import { treeWithModes } from '../helpers/modeTree.ts';
import { createScratch, git, gitRepo, run, type Scratch } from '../helpers/producers.ts';
import { suiteClient } from '../helpers/suiteDaemon.ts';
import { createTempTree, sha256, writeFiles, type TreeFiles } from '../helpers/tempTree.ts';

interface History {
  readonly before: TreeFiles;
  readonly after: TreeFiles;
  /** `git diff` from `before` to `after`, and back. */
  readonly forward: string;
  readonly backward: string;
}

/** A repository holding `before`, then a commit that removes `remove` and writes `write`: `git diff` of that commit, both ways. */
function history(scratch: Scratch, before: TreeFiles, remove: readonly string[], write: TreeFiles, diffOptions: readonly string[]): History {
  const repo = join(scratch.dir, 'repo');
  gitRepo(repo, before);
  for (const path of remove) git(repo, 'rm', '-q', path);
  writeFiles(repo, write);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'type change');
  const after = Object.fromEntries(Object.entries(before).filter(([path]) => !remove.includes(path)).concat(Object.entries(write)));
  return { before, after, forward: git(repo, 'diff', ...diffOptions, 'HEAD~1', 'HEAD'), backward: git(repo, 'diff', ...diffOptions, 'HEAD', 'HEAD~1') };
}

/** The tree `git apply` leaves when given `patch` on `files`, as `treeWithModes` lists it; undefined when git refuses. */
function byGitApply(scratch: Scratch, name: string, files: TreeFiles, patch: string): Record<string, string> | undefined {
  const dir = scratch.write(name, files);
  return run('git', ['apply', '-'], dir, { input: patch, ok: [0, 1, 128] }).status === 0 ? treeWithModes(dir) : undefined;
}

const SCENARIOS = [
  {
    name: 'a file replaced by a directory',
    before: { foo: 'x\n', 'keep.txt': 'k\n' },
    remove: ['foo'],
    write: { 'foo/bar': 'y\n', 'foo/sub/baz': 'z\n' },
    diffOptions: ['--no-renames'],
    ops: ['delete foo', 'add foo/bar', 'add foo/sub/baz'],
  },
  {
    name: 'a directory replaced by a file',
    before: { 'lib/a.js': 'a\n', 'lib/deep/b.js': 'b\n', 'other.txt': 'o\n' },
    remove: ['lib/a.js', 'lib/deep/b.js'],
    write: { lib: 'module.exports = {};\n' },
    diffOptions: ['--no-renames'],
    ops: ['add lib', 'delete lib/a.js', 'delete lib/deep/b.js'],
  },
  {
    name: 'a file moved into a directory of its own name (git diff -M)',
    before: { tool: 'one\ntwo\nthree\nfour\n' },
    remove: ['tool'],
    write: { 'tool/tool': 'one\ntwo\nthree\nfour\n', 'tool/README': 'about the tool\n' },
    diffOptions: ['-M'],
    ops: ['add tool/README', 'rename tool -> tool/tool'],
  },
] as const;

const opsOf = (files: readonly { op: string; path: string; fromPath?: string | undefined }[]) => files.map(({ op, path, fromPath }) => `${op} ${fromPath === undefined ? '' : `${fromPath} -> `}${path}`);

describe('type changes against git apply', () => {
  const client = suiteClient();

  for (const scenario of SCENARIOS) {
    test(`${scenario.name}: forward and backward as git apply; dry run, receipt, session diff, undo and redo`, async () => {
      using scratch = createScratch();
      const { before, after, forward, backward } = history(scratch, scenario.before, scenario.remove, scenario.write, scenario.diffOptions);
      for (const [direction, from, patch] of [['forward', before, forward], ['backward', after, backward]] as const) {
        const expected = byGitApply(scratch, `git-${direction}`, from, patch);
        assert.ok(expected !== undefined, `git apply applies the ${direction} patch`);
        using tree = createTempTree(from);
        const start = treeWithModes(tree.root);
        await using workspace = await client().openWorkspace(tree.root);
        const preview = await workspace.apply(patch, { dryRun: true });
        assert.equal(preview.status, 'dry_run', JSON.stringify(preview.error));
        assert.deepEqual(treeWithModes(tree.root), start, 'a dry run writes nothing');
        const receipt = await workspace.apply(patch);
        assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
        assert.deepEqual(opsOf(receipt.files), opsOf(preview.files));
        assert.deepEqual(treeWithModes(tree.root), expected, `${direction}: the tree git apply leaves`);
        if (direction === 'forward') assert.deepEqual(opsOf(receipt.files), scenario.ops);
        for (const file of receipt.files) {
          const old = from[(file.fromPath ?? file.path) as keyof typeof from] as string | undefined;
          assert.equal(file.sha256Before, file.op === 'add' ? undefined : sha256(old ?? ''), `${file.path}: sha256Before`);
          assert.equal(file.sha256After, file.op === 'delete' ? undefined : sha256(tree.text(file.path) ?? ''), `${file.path}: sha256After`);
        }
        await assertSessionDiffMakes(workspace, scratch, `session-${direction}`, from, expected);
        const undone = await workspace.undo(receipt.transactionId);
        assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
        assert.deepEqual(treeWithModes(tree.root), start, 'undo brings back the pre-image');
        const redone = await workspace.undo(undone.transactionId);
        assert.equal(redone.status, 'applied', JSON.stringify(redone.error));
        assert.deepEqual(treeWithModes(tree.root), expected, 'undoing the undo redoes');
      }
    });
  }

  test('atomic: false applies a type change whole, as one unit, beside an unrelated file', async () => {
    using scratch = createScratch();
    const { before, forward } = history(scratch, { 'd/x': 'x\n', 'e.txt': 'e\n' }, ['d/x', 'e.txt'], { d: 'd\n', 'e.txt': 'E\n' }, ['--no-renames']);
    const expected = byGitApply(scratch, 'git', before, forward);
    using tree = createTempTree(before);
    await using workspace = await client().openWorkspace(tree.root);
    const receipt = await workspace.apply(forward, { atomic: false });
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.deepEqual(treeWithModes(tree.root), expected);
    const [listed] = await workspace.transactions({ limit: 1 });
    assert.equal(listed?.status, 'applied');
    assert.equal((await workspace.undo(receipt.transactionId)).status, 'applied');
    assert.deepEqual(treeWithModes(tree.root), treeWithModes(scratch.write('start', before)));
  });

  test('what git apply refuses, patchd refuses too, dry run or not, writing nothing', async () => {
    using scratch = createScratch();
    const toFile = history(scratch, { 'd/x': 'x\n' }, ['d/x'], { d: 'd\n' }, ['--no-renames']).forward;
    const changedAndInside = 'diff --git a/foo b/foo\n--- a/foo\n+++ b/foo\n@@ -1 +1 @@\n-x\n+x2\n'
      + 'diff --git a/foo/bar b/foo/bar\nnew file mode 100644\n--- /dev/null\n+++ b/foo/bar\n@@ -0,0 +1 @@\n+y\n';
    const throughLink = 'diff --git a/link/x b/link/x\ndeleted file mode 100644\n--- a/link/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n'
      + 'diff --git a/link b/link\nnew file mode 100644\n--- /dev/null\n+++ b/link\n@@ -0,0 +1 @@\n+l\n';
    const cases: readonly { name: string; files: TreeFiles; patch: string; code: string; link: boolean }[] = [
      { name: 'a directory holding an untracked file', files: { 'd/x': 'x\n', 'd/untracked': 'u\n' }, patch: toFile, code: 'already_exists', link: false },
      { name: 'a file changed while a file is added inside it', files: { foo: 'x\n' }, patch: changedAndInside, code: 'already_exists', link: false },
      { name: 'a directory that is a link', files: { 'real/x': 'x\n' }, patch: throughLink, code: 'permission_denied', link: true },
    ];
    for (const [index, { name, files, patch, code, link }] of cases.entries()) {
      const byGit = scratch.write(`git-${index}`, files);
      if (link) symlinkSync('real', join(byGit, 'link'));
      assert.notEqual(run('git', ['apply', '-'], byGit, { input: patch, ok: [0, 1, 128] }).status, 0, `git apply refuses ${name}`);
      using tree = createTempTree(files);
      if (link) symlinkSync('real', join(tree.root, 'link'));
      const fingerprint = tree.fingerprint();
      await using workspace = await client().openWorkspace(tree.root);
      for (const dryRun of [true, false]) {
        const receipt = await workspace.apply(patch, { dryRun });
        assert.equal(receipt.status, 'rejected', `${name}${dryRun ? ' (dry run)' : ''}`);
        assert.equal(receipt.error?.code, code, `${name}: ${receipt.error?.message}`);
      }
      assert.equal(tree.fingerprint(), fingerprint, `${name}: nothing written`);
    }
  });

  test('patchd apply (the CLI): forward, -R back, and --dry-run, as git apply', () => {
    using scratch = createScratch();
    const { before, forward } = history(scratch, { foo: 'x\n' }, ['foo'], { 'foo/bar': 'y\n' }, ['--no-renames']);
    const patchFile = join(scratch.dir, 'typechange.patch');
    writeFileSync(patchFile, forward);
    const expected = byGitApply(scratch, 'git', before, forward);
    using tree = createTempTree(before);
    const start = treeWithModes(tree.root);
    const dryRun = patchd(['apply', '--dry-run', patchFile, '-C', tree.root]);
    assert.equal(dryRun.code, 0, dryRun.stderr);
    assert.deepEqual(treeWithModes(tree.root), start);
    const applied = patchd(['apply', patchFile, '-C', tree.root]);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, /^applied 2 files/);
    assert.deepEqual(treeWithModes(tree.root), expected);
    const back = patchd(['apply', '-R', patchFile, '-C', tree.root]);
    assert.equal(back.code, 0, back.stderr);
    assert.deepEqual(treeWithModes(tree.root), start);
  });

  test('patch/undo brings a directory replaced by a file back with its own mode', async () => {
    using tree = createTempTree({ 'd/x': 'x\n', 'd/e/y': 'y\n' });
    chmodSync(join(tree.root, 'd'), 0o750);
    chmodSync(join(tree.root, 'd/e'), 0o700);
    await using workspace = await client().openWorkspace(tree.root);
    const patch = '--- a/d/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n--- a/d/e/y\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n--- /dev/null\n+++ b/d\n@@ -0,0 +1 @@\n+d\n';
    const receipt = await workspace.apply(patch);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(tree.text('d'), 'd\n');
    const undone = await workspace.undo(receipt.transactionId);
    assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
    assert.deepEqual(['d', 'd/e'].map((path) => statSync(join(tree.root, path)).mode & 0o7777), [0o750, 0o700]);
    assert.equal(tree.text('d/e/y'), 'y\n');
  });
});

/** The session diff since the workspace was opened, given to `git apply` on `from`, makes `expected`. */
async function assertSessionDiffMakes(workspace: Workspace, scratch: Scratch, name: string, from: TreeFiles, expected: Record<string, string>): Promise<void> {
  const { diff } = await workspace.sessionDiff();
  assert.deepEqual(byGitApply(scratch, name, from, diff), expected, `the session diff, by git apply:\n${diff}`);
}
