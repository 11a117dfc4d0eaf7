/** patch/apply end to end: a spawned daemon driven through client/. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FileReceipt } from '../../client/index.ts';
import { suiteClient } from '../helpers/suiteDaemon.ts';
import { createTempTree, sha256 } from '../helpers/tempTree.ts';

const UNIFIED = '--- a/greet.txt\n+++ b/greet.txt\n@@ -1,3 +1,3 @@\n hello\n-world\n+there\n end\n';
const CODEX = '*** Begin Patch\n*** Add File: notes/new.md\n+fresh\n*** Update File: greet.txt\n@@\n hello\n-world\n+codex\n*** Delete File: old.txt\n*** End Patch\n';

describe('patch/apply over the wire', () => {
  const client = suiteClient();

  test('applies a unified diff and reports hashes and hunks', async () => {
    using tree = createTempTree({ 'greet.txt': 'hello\nworld\nend\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const receipt = await workspace.apply(UNIFIED);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(receipt.format, 'unified');
    assert.equal(tree.text('greet.txt'), 'hello\nthere\nend\n');
    const [file] = receipt.files;
    assert.equal(file?.op, 'update');
    assert.equal(file?.sha256Before, sha256('hello\nworld\nend\n'));
    assert.equal(file?.sha256After, sha256('hello\nthere\nend\n'));
    assert.deepEqual(file?.hunks, [{ index: 0, line: 1, tier: 'exact', offset: 0 }]);
    assert.match(file?.diff ?? '', /\+there/);
  });

  test('applies a codex envelope: add (with a new directory), update, delete', async () => {
    using tree = createTempTree({ 'greet.txt': 'hello\nworld\n', 'old.txt': 'bye\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const receipt = await workspace.apply(CODEX);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(receipt.format, 'codex');
    assert.deepEqual(receipt.files.map((file) => [file.op, file.path]), [['add', 'notes/new.md'], ['update', 'greet.txt'], ['delete', 'old.txt']]);
    assert.deepEqual(receipt.files[0]?.createdDirs, ['notes']);
    assert.equal(tree.text('notes/new.md'), 'fresh\n');
    assert.equal(tree.text('greet.txt'), 'hello\ncodex\n');
    assert.equal(tree.text('old.txt'), undefined);
  });

  test('applies V4A operations', async () => {
    using tree = createTempTree({ 'main.py': 'from app import run\n\nrun()\n', 'old.py': 'x = 1\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const receipt = await workspace.apply([
      // V4A: a file's final newline is spelled as a last, empty `+` line.
      { type: 'create_file', path: 'app.py', diff: '+def run():\n+    print("hi")\n+' },
      { type: 'update_file', path: 'main.py', diff: ' from app import run\n \n-run()\n+run(1)\n' },
      { type: 'delete_file', path: 'old.py' },
    ]);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(receipt.format, 'v4a');
    assert.equal(tree.text('app.py'), 'def run():\n    print("hi")\n');
    assert.equal(tree.text('main.py'), 'from app import run\n\nrun(1)\n');
    assert.equal(tree.text('old.py'), undefined);
  });

  test('a dry run streams every file receipt and leaves the tree byte-identical', async () => {
    using tree = createTempTree({ 'greet.txt': 'hello\nworld\n', 'old.txt': 'bye\n' });
    const before = tree.fingerprint();
    await using workspace = await client().openWorkspace(tree.root);
    const streamed: FileReceipt[] = [];
    const receipt = await workspace.apply(CODEX, { dryRun: true, onFile: (file) => streamed.push(file) });
    assert.equal(receipt.status, 'dry_run');
    assert.equal(receipt.files.length, 3);
    assert.deepEqual(streamed, receipt.files);
    assert.equal(tree.fingerprint(), before);
  });

  test('applyStream yields the file receipts, then returns the receipt', async () => {
    using tree = createTempTree({ 'greet.txt': 'hello\nworld\n', 'old.txt': 'bye\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const stream = workspace.applyStream(CODEX);
    const paths: string[] = [];
    let step = await stream.next();
    for (; step.done !== true; step = await stream.next()) paths.push(step.value.path);
    assert.deepEqual(paths, ['notes/new.md', 'greet.txt', 'old.txt']);
    assert.equal(step.value.status, 'applied');
  });

  test('a rejected patch is a normal result with code and hint, and changes nothing', async () => {
    using tree = createTempTree({ 'greet.txt': 'hello\nplanet\nend\n' });
    const before = tree.fingerprint();
    await using workspace = await client().openWorkspace(tree.root);
    const streamed: FileReceipt[] = [];
    const receipt = await workspace.apply(UNIFIED, { onFile: (file) => streamed.push(file) });
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'context_not_found');
    assert.equal(receipt.error?.path, 'greet.txt');
    assert.match(receipt.error?.hint ?? '', /Re-read the file/);
    assert.ok(receipt.error?.nearest !== undefined);
    assert.deepEqual(receipt.files, []);
    assert.deepEqual(streamed, []);
    assert.equal(tree.fingerprint(), before);
  });

  test('a failure in the 3rd file of 5 leaves all five untouched and removes created directories', async () => {
    const files = Object.fromEntries([1, 2, 3, 4, 5].map((n) => [`f${n}.txt`, `line ${n}\n`]));
    using tree = createTempTree(files);
    const before = tree.fingerprint();
    await using workspace = await client().openWorkspace(tree.root);
    const sections = [1, 2, 3, 4, 5].map((n) => `*** Update File: f${n}.txt\n@@\n-${n === 3 ? 'missing' : `line ${n}`}\n+changed ${n}\n`);
    const patch = `*** Begin Patch\n*** Add File: deep/er/new.txt\n+x\n${sections.join('')}*** End Patch\n`;
    const receipt = await workspace.apply(patch);
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'context_not_found');
    assert.equal(receipt.error?.path, 'f3.txt');
    assert.equal(tree.fingerprint(), before);
  });

  test('expectedSha256ByPath: a stale pre-image is stale_file naming the path and its current sha256', async () => {
    using tree = createTempTree({ 'greet.txt': 'hello\nworld\nend\n' });
    const before = tree.fingerprint();
    await using workspace = await client().openWorkspace(tree.root);
    const receipt = await workspace.apply(UNIFIED, { expectedSha256ByPath: { 'greet.txt': sha256('something else') } });
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'stale_file');
    assert.equal(receipt.error?.path, 'greet.txt');
    assert.equal(receipt.error?.currentSha256, sha256('hello\nworld\nend\n'));
    assert.equal(tree.fingerprint(), before);
    const fresh = await workspace.apply(UNIFIED, { expectedSha256ByPath: { './greet.txt': sha256('hello\nworld\nend\n') } });
    assert.equal(fresh.status, 'applied', JSON.stringify(fresh.error));
  });

  test('expectedSha256ByPath "" means the file must not exist', async () => {
    using tree = createTempTree({ 'taken.txt': 'here\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const receipt = await workspace.apply(UNIFIED.replace(/greet/g, 'x'), { dryRun: true, expectedSha256ByPath: { 'taken.txt': '' } });
    assert.equal(receipt.error?.code, 'stale_file');
    assert.equal(receipt.error?.path, 'taken.txt');
  });

  test('baseVersions from read(): applies at that version, stale_file after a change', async () => {
    using tree = createTempTree({ 'greet.txt': 'hello\nworld\nend\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const read = await workspace.read('greet.txt');
    assert.equal(read.content, 'hello\nworld\nend\n');
    assert.equal(read.sha256, sha256(read.content));
    tree.write('greet.txt', 'hello\nworld\nend\nmore\n');
    const stale = await workspace.apply(UNIFIED, { baseVersions: { 'greet.txt': read.version } });
    assert.equal(stale.error?.code, 'stale_file');
    const current = await workspace.read('greet.txt');
    const applied = await workspace.apply(UNIFIED, { baseVersions: { 'greet.txt': current.version } });
    assert.equal(applied.status, 'applied', JSON.stringify(applied.error));
  });
});
