/**
 * What real producers emit, end to end: `diff -ruN`, `diff -u`, `git format-patch` and
 * `git diff --color=always` output made by the real tools in the test, applied by a spawned
 * daemon, and compared with what GNU patch, `git apply` and `git am` make of the same text.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RpcError } from '../../client/index.ts';
import { commit, createScratch, diffTrees, git, gitRepo, readTree, run, workTree } from '../helpers/producers.ts';
import { suiteClient } from '../helpers/suiteDaemon.ts';

const OLD_TREE = {
  'src/main.c': 'int main(void)\n{\n    return 0;\n}\n',
  'src/util.c': 'int one(void) { return 1; }\n',
  'README': 'hello\n',
  'gone.txt': 'bye\n',
};
const NEW_TREE = {
  'src/main.c': 'int main(void)\n{\n    return one();\n}\n',
  'src/util.c': 'int one(void) { return 1; }\nint two(void) { return 2; }\n',
  'README': 'hello\n',
  'src/added.h': 'int one(void);\n',
};

describe('diff producers over the wire', () => {
  const client = suiteClient();

  test('diff -ruN old/ new/: the strip level is found, reported, and the tree equals patch -p1\'s', async () => {
    using scratch = createScratch();
    scratch.write('old', OLD_TREE);
    scratch.write('new', NEW_TREE);
    const patch = run('diff', ['-ruN', 'old', 'new'], scratch.dir, { ok: [1] }).stdout;
    const byPatch = scratch.copy('old', 'by-patch');
    run('patch', ['-p1', '-s'], byPatch, { input: patch });
    const workspaceRoot = scratch.copy('old', 'ws');
    await using workspace = await client().openWorkspace(workspaceRoot);
    const receipt = await workspace.apply(patch);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.deepEqual(receipt.files.map((file) => `${file.op} ${file.path}`).sort(), ['add src/added.h', 'delete gone.txt', 'update src/main.c', 'update src/util.c']);
    assert.match(receipt.diagnostics.find((entry) => entry.code === 'strip_level')?.message ?? '', /strip level 1/);
    assert.equal(diffTrees(readTree(workspaceRoot), readTree(byPatch)), undefined);
  });

  test('diff -ruN of names GNU diff quotes (a space, non-ASCII): the epoch date after the quote adds and deletes, forward and -R, as patch -p1 does', async () => {
    using scratch = createScratch();
    const before = { 'sub dir/gone one.txt': 'a\r\nb', 'é.txt': 'x\n', 'keep.txt': 'k\n' };
    const after = { 'sub dir/new one.txt': 'n\n', 'ü.txt': 'y\n', 'keep.txt': 'k\n' };
    const trees = { old: scratch.write('old', before), new: scratch.write('new', after) };
    const patch = run('diff', ['-ruN', 'old', 'new'], scratch.dir, { ok: [1] }).stdout;
    assert.match(patch, /^\+\+\+ "new\/sub dir\/gone one.txt"\t1970-01-01/m, 'GNU diff quotes the name and dates the missing side at the epoch');
    for (const [from, reverse] of [['old', false], ['new', true]] as const) {
      const byPatch = scratch.copy(from, `by-patch-${from}`);
      run('patch', ['-p1', '-s', ...(reverse ? ['-R'] : [])], byPatch, { input: patch });
      const workspaceRoot = scratch.copy(from, `ws-${from}`);
      await using workspace = await client().openWorkspace(workspaceRoot);
      const receipt = await workspace.apply(patch, { reverse });
      assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
      const ops = receipt.files.map((file) => `${file.op} ${file.path}`).sort();
      assert.deepEqual(ops, reverse
        ? ['add sub dir/gone one.txt', 'add é.txt', 'delete sub dir/new one.txt', 'delete ü.txt']
        : ['add sub dir/new one.txt', 'add ü.txt', 'delete sub dir/gone one.txt', 'delete é.txt']);
      assert.equal(diffTrees(readTree(workspaceRoot), readTree(byPatch)), undefined);
      assert.equal(diffTrees(readTree(workspaceRoot), readTree(trees[reverse ? 'old' : 'new'])), undefined);
    }
  });

  test('svn diff: a new file (`(nonexistent)`, `@@ -0,0`) is added, edits and emptied files are as GNU patch and git apply leave them', async () => {
    using scratch = createScratch();
    const start = { 'src/x.txt': 'a\nb\nc\n', 'src/gone.txt': 'gone\n' };
    const section = (path: string, oldLabel: string, newLabel: string, hunk: string) =>
      `Index: ${path}\n${'='.repeat(67)}\n--- ${path}\t(${oldLabel})\n+++ ${path}\t(${newLabel})\n${hunk}`;
    const patch = section('src/x.txt', 'revision 12', 'working copy', '@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n')
      + section('src/new.txt', 'nonexistent', 'working copy', '@@ -0,0 +1,2 @@\n+new\n+file\n')
      + section('src/gone.txt', 'revision 12', 'nonexistent', '@@ -1 +0,0 @@\n-gone\n');
    const byPatch = scratch.write('by-patch', start);
    run('patch', ['-p0', '-s'], byPatch, { input: patch });
    const byGit = scratch.write('by-git', start);
    run('git', ['apply', '-p0', '-'], byGit, { input: patch });
    assert.equal(diffTrees(readTree(byGit), readTree(byPatch)), undefined, 'git apply and GNU patch agree');
    const workspaceRoot = scratch.write('ws', start);
    await using workspace = await client().openWorkspace(workspaceRoot);
    const receipt = await workspace.apply(patch);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.deepEqual(receipt.files.map((file) => `${file.op} ${file.path}`), ['update src/x.txt', 'add src/new.txt', 'update src/gone.txt']);
    assert.ok(receipt.diagnostics.some((entry) => entry.code === 'missing_file_added' && entry.path === 'src/new.txt'));
    assert.equal(diffTrees(readTree(workspaceRoot), readTree(byPatch)), undefined);
  });

  test('a diff made one directory up applies at the level where its files exist, or at the caller\'s strip', async () => {
    using scratch = createScratch();
    scratch.write('proj/lib', { 'x.txt': 'one\ntwo\n' });
    scratch.write('proj2/lib', { 'x.txt': 'one\n2\n' });
    const patch = run('diff', ['-u', 'proj/lib/x.txt', 'proj2/lib/x.txt'], scratch.dir, { ok: [1] }).stdout;
    const workspaceRoot = scratch.write('ws/lib', { 'x.txt': 'one\ntwo\n' }).replace(/\/lib$/, '');
    await using workspace = await client().openWorkspace(workspaceRoot);
    const dry = await workspace.apply(patch, { dryRun: true });
    assert.equal(dry.status, 'dry_run', JSON.stringify(dry.error));
    assert.deepEqual(dry.files.map((file) => file.path), ['lib/x.txt']);
    const forced = await workspace.apply(patch, { strip: 2 });
    assert.equal(forced.status, 'rejected');
    assert.equal(forced.error?.code, 'not_found', 'x.txt does not exist at -p2');
    for (const strip of [-1, 1.5, 65]) {
      await assert.rejects(workspace.apply(patch, { strip }), (error: unknown) => error instanceof RpcError && error.code === -32602, `strip ${strip}`);
    }
    const receipt = await workspace.apply(patch, { strip: 1 });
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(Buffer.from(readTree(workspaceRoot).get('lib/x.txt')!).toString(), 'one\n2\n');
  });

  test('diff -u a.orig a patches a, as GNU patch does', async () => {
    using scratch = createScratch();
    scratch.write('made', { 'a.orig': 'x\ny\n', a: 'x\nY\n' });
    const patch = run('diff', ['-u', 'a.orig', 'a'], `${scratch.dir}/made`, { ok: [1] }).stdout;
    const byPatch = scratch.write('by-patch', { a: 'x\ny\n' });
    run('patch', ['-s'], byPatch, { input: patch });
    const workspaceRoot = scratch.write('ws', { a: 'x\ny\n' });
    await using workspace = await client().openWorkspace(workspaceRoot);
    const receipt = await workspace.apply(patch);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(diffTrees(readTree(workspaceRoot), readTree(byPatch)), undefined);
  });

  test('a git format-patch mailbox applies as one transaction, with the tree git am makes', async () => {
    using scratch = createScratch();
    const repo = `${scratch.dir}/repo`;
    gitRepo(repo, { 'src/app.js': 'const a = 1;\nconst b = 2;\nexport { a, b };\n', 'docs/old.md': '# Old\n\ntext\n', 'tmp.txt': 'scratch\n' });
    const base = git(repo, 'rev-parse', 'HEAD').trim();
    commit(repo, { 'src/app.js': 'const a = 10;\nconst b = 2;\nexport { a, b };\n' }, 'Raise a\n\nSigned-off-by: Patch Test <test@example.com>');
    commit(repo, { 'src/app.js': 'const a = 10;\nconst b = 20;\nexport { a, b };\n', 'src/new.js': 'export const c = 3;\n' }, 'Raise b, add c', ['tmp.txt']);
    git(repo, 'mv', 'docs/old.md', 'docs/new.md');
    commit(repo, { 'docs/new.md': '# New\n\ntext\n' }, 'Rename the doc');
    const mbox = git(repo, 'format-patch', '--stdout', '-M', `${base}..HEAD`);

    const byAm = `${scratch.dir}/by-am`;
    git(scratch.dir, 'clone', '-q', repo, byAm);
    git(byAm, 'checkout', '-q', base);
    run('git', ['am', '-q'], byAm, { input: mbox });

    const workspaceRoot = `${scratch.dir}/ws`;
    git(scratch.dir, 'clone', '-q', repo, workspaceRoot);
    git(workspaceRoot, 'checkout', '-q', base);
    await using workspace = await client().openWorkspace(workspaceRoot);
    const receipt = await workspace.apply(mbox);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.deepEqual(receipt.files.map((file) => `${file.op} ${file.fromPath ? `${file.fromPath} -> ` : ''}${file.path}`), [
      'update src/app.js', 'add src/new.js', 'delete tmp.txt', 'rename docs/old.md -> docs/new.md',
    ]);
    assert.equal(receipt.files[0]?.hunks.length, 2, 'both mails changed src/app.js');
    assert.ok(receipt.diagnostics.some((entry) => entry.code === 'mailbox'));
    assert.equal(diffTrees(workTree(workspaceRoot), workTree(byAm)), undefined);

    const before = workTree(workspaceRoot);
    const again = await workspace.apply(mbox);
    assert.equal(again.error?.code, 'already_applied');
    assert.equal(diffTrees(workTree(workspaceRoot), before), undefined, 'nothing written');
  });

  test('git diff with other prefixes than a/ b/ (diff.mnemonicPrefix, --src-prefix/--dst-prefix) applies as git apply applies it', async () => {
    using scratch = createScratch();
    const repo = `${scratch.dir}/repo`;
    const start = { 'src/main.c': 'int main(void)\n{\n    return 0;\n}\n', 'old name.txt': 'one\ntwo\nthree\nfour\n', 'gone.txt': 'bye\n' };
    gitRepo(repo, start);
    git(repo, 'mv', 'old name.txt', 'new name.txt');
    git(repo, 'rm', '-q', 'gone.txt');
    scratch.write('repo', { 'src/main.c': 'int main(void)\n{\n    return 1;\n}\n', 'new name.txt': 'one\ntwo\nthree\nfour\nfive\n', 'added.txt': 'new\n' });
    git(repo, 'add', '-A');
    const diffs = {
      'diff.mnemonicPrefix, --cached (c/ i/)': git(repo, '-c', 'diff.mnemonicPrefix=true', 'diff', '--cached', '-M'),
      'diff.mnemonicPrefix, HEAD (c/ w/)': git(repo, '-c', 'diff.mnemonicPrefix=true', 'diff', 'HEAD', '-M'),
      '--src-prefix=left/ --dst-prefix=right/': git(repo, 'diff', '--cached', '-M', '--src-prefix=left/', '--dst-prefix=right/'),
    };
    assert.match(diffs['diff.mnemonicPrefix, --cached (c/ i/)'], /^diff --git c\/src\/main\.c i\/src\/main\.c$/m);
    for (const [producer, patch] of Object.entries(diffs)) {
      const from = scratch.write(`from-${producer.length}`, start);
      const byGit = scratch.copy(`from-${producer.length}`, `by-git-${producer.length}`);
      run('git', ['apply'], byGit, { input: patch });
      await using workspace = await client().openWorkspace(from);
      const receipt = await workspace.apply(patch);
      assert.equal(receipt.status, 'applied', `${producer}: ${JSON.stringify(receipt.error)}`);
      assert.deepEqual(receipt.files.map((file) => `${file.op} ${file.path}`).sort(), ['add added.txt', 'delete gone.txt', 'rename new name.txt', 'update src/main.c'], producer);
      assert.equal(diffTrees(readTree(from), readTree(byGit)), undefined, producer);
    }
  });

  test('git diff --color=always applies as git apply applies the plain diff, with a diagnostic', async () => {
    using scratch = createScratch();
    const repo = `${scratch.dir}/repo`;
    gitRepo(repo, { 'f.py': 'def f():\n    return 1\n\n\ndef g():\n    return 2\n' });
    scratch.write('repo', { 'f.py': 'def f():\n    return 1  \n\n\ndef g():\n    return 3\n', 'n.py': 'x = 1\n' });
    git(repo, 'add', '-N', 'n.py');
    const coloured = git(repo, 'diff', '--color=always');
    const plain = git(repo, 'diff');
    assert.ok(coloured.includes('\x1b['), 'git wrote colour codes');
    git(repo, 'reset', '-q');
    git(repo, 'checkout', '-q', '--', '.');
    git(repo, 'clean', '-q', '-f');
    const byGit = scratch.copy('repo', 'by-git');
    run('git', ['apply'], byGit, { input: plain });
    const workspaceRoot = scratch.copy('repo', 'ws');
    await using workspace = await client().openWorkspace(workspaceRoot);
    const receipt = await workspace.apply(coloured);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.ok(receipt.diagnostics.some((entry) => entry.code === 'ansi_colors_stripped'));
    assert.equal(diffTrees(workTree(workspaceRoot), workTree(byGit)), undefined);
  });

  test('a reversed diff -u is already_applied, GNU patch calls it reversed too, and nothing is written', async () => {
    using scratch = createScratch();
    scratch.write('made', { 'x.txt': 'a\nb\n', 'y.txt': 'a\nB\n' });
    const reversed = run('diff', ['-u', 'y.txt', 'x.txt'], `${scratch.dir}/made`, { ok: [1] }).stdout.replaceAll('y.txt', 'x.txt');
    const byPatch = scratch.write('by-patch', { 'x.txt': 'a\nb\n' });
    const gnu = run('patch', ['--dry-run', '--batch', '--forward'], byPatch, { input: reversed, ok: [1] });
    assert.match(gnu.stdout, /Reversed \(or previously applied\) patch detected/);
    const workspaceRoot = scratch.write('ws', { 'x.txt': 'a\nb\n' });
    await using workspace = await client().openWorkspace(workspaceRoot);
    const receipt = await workspace.apply(reversed);
    assert.equal(receipt.error?.code, 'already_applied');
    assert.match(receipt.error?.hint ?? '', /reversed/);
    assert.equal(Buffer.from(readTree(workspaceRoot).get('x.txt')!).toString(), 'a\nb\n');
  });

  test('a path naming a directory is is_directory and nothing is created', async () => {
    using scratch = createScratch();
    const workspaceRoot = scratch.write('ws', { 'keep.txt': 'k\n' });
    await using workspace = await client().openWorkspace(workspaceRoot);
    const receipt = await workspace.apply('*** Begin Patch\n*** Add File: newdir/\n+x\n*** End Patch\n');
    assert.equal(receipt.error?.code, 'is_directory');
    assert.deepEqual([...readTree(workspaceRoot).keys()], ['keep.txt']);
  });
});
