/**
 * What real producers emit, end to end: `diff -ruN`, `diff -u`, `git format-patch` and
 * `git diff --color=always` output made by the real tools in the test, applied by a spawned
 * daemon, and compared with what GNU patch, `git apply` and `git am` make of the same text.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PatchClient } from '../../client/index.ts';
import { createScratch, diffTrees, readTree, run } from '../helpers/producers.ts';

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
  let client: PatchClient;
  before(async () => {
    client = await PatchClient.spawn();
  });
  after(async () => {
    await client.close();
  });

  test('diff -ruN old/ new/: the strip level is found, reported, and the tree equals patch -p1\'s', async () => {
    using scratch = createScratch();
    scratch.write('old', OLD_TREE);
    scratch.write('new', NEW_TREE);
    const patch = run('diff', ['-ruN', 'old', 'new'], scratch.dir, { ok: [1] }).stdout;
    const byPatch = scratch.copy('old', 'by-patch');
    run('patch', ['-p1', '-s'], byPatch, { input: patch });
    const workspaceRoot = scratch.copy('old', 'ws');
    await using workspace = await client.openWorkspace(workspaceRoot);
    const receipt = await workspace.apply(patch);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.deepEqual(receipt.files.map((file) => `${file.op} ${file.path}`).sort(), ['add src/added.h', 'delete gone.txt', 'update src/main.c', 'update src/util.c']);
    assert.match(receipt.diagnostics.find((entry) => entry.code === 'strip_level')?.message ?? '', /strip level 1/);
    assert.equal(diffTrees(readTree(workspaceRoot), readTree(byPatch)), undefined);
  });

  test('a diff made one directory up applies at the level where its files exist, or at the caller\'s strip', async () => {
    using scratch = createScratch();
    scratch.write('proj/lib', { 'x.txt': 'one\ntwo\n' });
    scratch.write('proj2/lib', { 'x.txt': 'one\n2\n' });
    const patch = run('diff', ['-u', 'proj/lib/x.txt', 'proj2/lib/x.txt'], scratch.dir, { ok: [1] }).stdout;
    const workspaceRoot = scratch.write('ws/lib', { 'x.txt': 'one\ntwo\n' }).replace(/\/lib$/, '');
    await using workspace = await client.openWorkspace(workspaceRoot);
    const dry = await workspace.apply(patch, { dryRun: true });
    assert.equal(dry.status, 'dry_run', JSON.stringify(dry.error));
    assert.deepEqual(dry.files.map((file) => file.path), ['lib/x.txt']);
    const forced = await workspace.apply(patch, { strip: 2 });
    assert.equal(forced.status, 'rejected');
    assert.equal(forced.error?.code, 'not_found', 'x.txt does not exist at -p2');
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
    await using workspace = await client.openWorkspace(workspaceRoot);
    const receipt = await workspace.apply(patch);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(diffTrees(readTree(workspaceRoot), readTree(byPatch)), undefined);
  });
});
