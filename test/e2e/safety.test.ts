/** Path safety end to end: no patch writes outside the workspace, into .git/, or through a symlink. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { MAX_PATH_CHARS, ReceiptSchema } from '../../protocol/index.ts';
import { suiteClient } from '../helpers/suiteDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const add = (path: string) => `*** Begin Patch\n*** Add File: ${path}\n+pwned\n*** End Patch\n`;
const update = (path: string) => `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-secret\n+pwned\n`;

const ESCAPES: readonly { readonly name: string; readonly patch: string; readonly codes: readonly string[] }[] = [
  { name: '../x (add)', patch: add('../outside/new.txt'), codes: ['path_escape'] },
  { name: '../x (update)', patch: update('../outside/secret.txt'), codes: ['path_escape'] },
  { name: '/abs', patch: update('/etc/hostname'), codes: ['path_escape'] },
  { name: 'absolute path into the sibling dir', patch: add('OUTSIDE/new.txt'), codes: ['path_escape'] },
  { name: 'a/../../x', patch: add('a/../../outside/new.txt'), codes: ['path_escape'] },
  { name: '.git/config', patch: update('.git/config'), codes: ['permission_denied'] },
  { name: 'symlinked directory pointing outside', patch: add('linkdir/new.txt'), codes: ['path_escape', 'permission_denied'] },
  { name: 'symlink as the target file', patch: update('link.txt'), codes: ['path_escape', 'permission_denied'] },
  { name: 'backslash', patch: add('..\\outside\\new.txt'), codes: ['path_escape'] },
  { name: 'rename out of the tree', patch: '*** Begin Patch\n*** Update File: inside.txt\n*** Move to: ../outside/moved.txt\n@@\n-inside\n+moved\n*** End Patch\n', codes: ['path_escape'] },
];

describe('escapes never write outside the workspace', () => {
  const client = suiteClient();

  for (const escape of ESCAPES) {
    test(escape.name, async () => {
      using tree = createTempTree({ 'inside.txt': 'inside\n', '.git/config': 'secret\n' }, { 'secret.txt': 'secret\n' });
      symlinkSync(tree.outside, join(tree.root, 'linkdir'));
      symlinkSync(join(tree.outside, 'secret.txt'), join(tree.root, 'link.txt'));
      const before = tree.fingerprint();
      await using workspace = await client().openWorkspace(tree.root);
      const receipt = await workspace.apply(escape.patch.replace('OUTSIDE', tree.outside));
      assert.equal(receipt.status, 'rejected');
      assert.ok(escape.codes.includes(receipt.error?.code ?? ''), `got ${receipt.error?.code}: ${receipt.error?.message}`);
      assert.equal(tree.fingerprint(), before);
    });
  }

  test('a NUL byte in a path is refused', async () => {
    using tree = createTempTree({ 'inside.txt': 'inside\n' });
    const before = tree.fingerprint();
    await using workspace = await client().openWorkspace(tree.root);
    const receipt = await workspace.apply([{ type: 'create_file', path: 'evil\u0000.txt', diff: '+x\n' }]);
    assert.equal(receipt.status, 'rejected');
    assert.equal(tree.fingerprint(), before);
  });

  test(`a path over ${MAX_PATH_CHARS} characters is a limit_exceeded receipt that fits the protocol, in every text dialect; nothing is written`, async () => {
    using tree = createTempTree({ 'inside.txt': 'inside\n' });
    const before = tree.fingerprint();
    await using workspace = await client().openWorkspace(tree.root);
    const long = 'z'.repeat(5_000);
    const deep = `${'d/'.repeat(2_500)}x`;
    const patches = [
      `--- /dev/null\n+++ b/${long}\n@@ -0,0 +1 @@\n+x\n`,
      `--- /dev/null\n+++ b/${deep}\n@@ -0,0 +1 @@\n+x\n`,
      `diff --git a/inside.txt b/${long}\nsimilarity index 100%\nrename from inside.txt\nrename to ${long}\n`,
      '*** Begin Patch\n*** Update File: inside.txt\n*** Move to: DEEP\n@@\n-inside\n+moved\n*** End Patch\n'.replace('DEEP', deep),
      `${long}\n<<<<<<< SEARCH\ninside\n=======\nmoved\n>>>>>>> REPLACE\n`,
    ];
    for (const patch of patches) {
      // The client parses every receipt against the protocol; this says so outright.
      const receipt = ReceiptSchema.parse(await workspace.apply(patch));
      assert.equal(receipt.status, 'rejected');
      assert.equal(receipt.error?.code, 'limit_exceeded', receipt.error?.message.slice(0, 200));
      assert.deepEqual(receipt.error?.limit, { name: 'maxPathChars', max: MAX_PATH_CHARS, actual: patch.includes(deep) ? deep.length : long.length });
      assert.equal(receipt.error?.path, undefined);
    }
    assert.equal(tree.fingerprint(), before);
  });

  test('a symlink that stays inside the tree is followed', async () => {
    using tree = createTempTree({ 'real/file.txt': 'secret\n' });
    symlinkSync(join(tree.root, 'real'), join(tree.root, 'alias'));
    await using workspace = await client().openWorkspace(tree.root);
    const receipt = await workspace.apply(update('alias/file.txt'), { dryRun: true });
    assert.equal(receipt.status, 'dry_run', JSON.stringify(receipt.error));
  });
});
