/** The later dialects end to end: SEARCH/REPLACE blocks, structured edits, whole-file writes, shell heredocs. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { FORMATS } from '../../client/index.ts';
import { suiteClient } from '../helpers/suiteDaemon.ts';
import { createTempTree, sha256 } from '../helpers/tempTree.ts';

const block = (path: string, search: string, replace: string) =>
  `${path}\n\`\`\`\n<<<<<<< SEARCH\n${search}=======\n${replace}>>>>>>> REPLACE\n\`\`\`\n`;

describe('later dialects over the wire', () => {
  const client = suiteClient();

  test('initialize lists every dialect as a format', () => {
    assert.deepEqual([...client().formats], [...FORMATS]);
    for (const name of ['search-replace', 'edits', 'shell']) assert.ok(client().formats.includes(name as never), name);
  });

  test('SEARCH/REPLACE blocks for two files apply, detected as search-replace', async () => {
    using tree = createTempTree({ 'a.py': 'def f():\n    return 1\n', 'b.py': 'x = 1\ny = 2\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const reply = `Here are the edits.\n\n${block('a.py', '    return 1\n', '    return 2\n')}\nAnd:\n\n${block('b.py', 'y = 2\n', 'y = 3\n')}`;
    const receipt = await workspace.apply(reply);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(receipt.format, 'search-replace');
    assert.equal(tree.text('a.py'), 'def f():\n    return 2\n');
    assert.equal(tree.text('b.py'), 'x = 1\ny = 3\n');
  });

  test('a failing block leaves every file untouched, earlier blocks and other files included', async () => {
    using tree = createTempTree({ 'a.py': 'one\ntwo\n', 'b.py': 'three\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const before = tree.fingerprint();
    const reply = block('a.py', 'one\n', 'ONE\n') + block('b.py', 'three\n', 'THREE\n') + block('a.py', 'missing\n', 'x\n');
    const receipt = await workspace.apply(reply);
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'context_not_found');
    assert.equal(receipt.error?.path, 'a.py');
    assert.equal(tree.fingerprint(), before);
  });

  test('str_replace edits and an insert apply in order; an ambiguous oldText is refused', async () => {
    using tree = createTempTree({ 'c.ts': 'let a = 1;\nlet b = 1;\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const ambiguous = await workspace.apply({ edits: [{ path: 'c.ts', oldText: '= 1', newText: '= 2' }] });
    assert.equal(ambiguous.status, 'rejected');
    assert.equal(ambiguous.error?.code, 'ambiguous_context');
    const receipt = await workspace.apply({
      edits: [
        { path: 'c.ts', oldText: '= 1', newText: '= 2', replaceAll: true },
        { path: 'c.ts', insertLine: 0, text: '// header\n' },
      ],
    });
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(receipt.format, 'edits');
    assert.equal(tree.text('c.ts'), '// header\nlet a = 2;\nlet b = 2;\n');
  });

  test('whole-file writes: create freely, replace only with the current sha256', async () => {
    using tree = createTempTree({ 'keep.txt': 'old\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const created = await workspace.apply({ edits: [{ path: 'new/file.txt', content: 'hello\n' }] });
    assert.equal(created.status, 'applied', JSON.stringify(created.error));
    assert.equal(tree.text('new/file.txt'), 'hello\n');
    const unpinned = await workspace.apply({ edits: [{ path: 'keep.txt', content: 'clobber\n' }] });
    assert.equal(unpinned.error?.code, 'precondition_required');
    const stale = await workspace.apply({ edits: [{ path: 'keep.txt', content: 'clobber\n', expectedSha256: sha256('older\n') }] });
    assert.equal(stale.error?.code, 'stale_file');
    assert.equal(tree.text('keep.txt'), 'old\n');
    const replaced = await workspace.apply({ edits: [{ path: 'keep.txt', content: 'new\n', expectedSha256: sha256('old\n') }] });
    assert.equal(replaced.status, 'applied', JSON.stringify(replaced.error));
    assert.equal(tree.text('keep.txt'), 'new\n');
  });

  test('a `cd dir && apply_patch` heredoc applies relative to dir; other commands are refused', async () => {
    using tree = createTempTree({ 'pkg/src/lib.rs': 'fn a() {}\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const command = "cd pkg && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: src/lib.rs\n@@\n-fn a() {}\n+fn b() {}\n*** End Patch\nEOF\n";
    const receipt = await workspace.apply(command);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(receipt.format, 'shell');
    assert.deepEqual(receipt.files.map((file) => file.path), ['pkg/src/lib.rs']);
    assert.equal(tree.text('pkg/src/lib.rs'), 'fn b() {}\n');
    const before = tree.fingerprint();
    const hostile = await workspace.apply("rm -rf pkg && apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: pkg/src/lib.rs\n*** End Patch\nEOF\n", { format: 'shell' });
    assert.equal(hostile.error?.code, 'unsupported_command');
    const escape = await workspace.apply("cd ../.. && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x\n+x\n*** End Patch\nEOF\n");
    assert.equal(escape.error?.code, 'path_escape');
    assert.equal(tree.fingerprint(), before);
  });

  test('git -C dir apply and patch -d dir after prose apply under dir, never to the same file at the root; a missing dir changes nothing', async () => {
    const same = 'a\nb\nc\n';
    using tree = createTempTree({ 'f.txt': same, 'sub/f.txt': same, 'pkg/lib/f.txt': same });
    await using workspace = await client().openWorkspace(tree.root);
    const diff = '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n';
    const gitC = await workspace.apply(`I'll apply it in sub:\n\ngit -C sub apply <<'EOF'\n${diff}EOF\n`);
    assert.equal(gitC.status, 'applied', JSON.stringify(gitC.error));
    assert.equal(gitC.format, 'shell');
    assert.deepEqual(gitC.files.map((file) => file.path), ['sub/f.txt']);
    const patchD = await workspace.apply(`Then:\n\`\`\`bash\npatch -d pkg -p1 <<'EOF'\n${diff.replaceAll('/f.txt', '/lib/f.txt')}EOF\n\`\`\`\n`);
    assert.equal(patchD.status, 'applied', JSON.stringify(patchD.error));
    assert.deepEqual(patchD.files.map((file) => file.path), ['pkg/lib/f.txt']);
    assert.equal(tree.text('sub/f.txt'), 'a\nB\nc\n');
    assert.equal(tree.text('pkg/lib/f.txt'), 'a\nB\nc\n');
    assert.equal(tree.text('f.txt'), same, 'the root file is untouched');
    const before = tree.fingerprint();
    const missing = await workspace.apply(`git -C nope apply <<'EOF'\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\nEOF\n`);
    assert.equal(missing.error?.code, 'not_found');
    assert.equal(missing.error?.path, 'nope');
    const escape = await workspace.apply(`patch -d .. -p1 <<'EOF'\n${diff}EOF\n`);
    assert.equal(escape.error?.code, 'path_escape');
    assert.equal(tree.fingerprint(), before);
  });

  test('prose naming `cd build` before a diff: applied at the root when build holds no such file, refused when it does', async () => {
    using tree = createTempTree({ 'f.txt': 'a\nb\nc\n', 'g.txt': 'a\nb\nc\n', 'build/g.txt': 'a\nb\nc\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const patch = (path: string) => `You may need to \`cd build\`.\n\n--- a/${path}\n+++ b/${path}\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n`;
    const rootOnly = await workspace.apply(patch('f.txt'));
    assert.equal(rootOnly.status, 'applied', JSON.stringify(rootOnly.error));
    assert.deepEqual(rootOnly.files.map((file) => file.path), ['f.txt']);
    assert.ok(rootOnly.diagnostics.some((diagnostic) => diagnostic.code === 'directory_named_in_text'));
    const before = tree.fingerprint();
    const both = await workspace.apply(patch('g.txt'));
    assert.equal(both.error?.code, 'unsupported_command');
    assert.match(both.error!.message, /both at the workspace root and under build/);
    assert.equal(tree.fingerprint(), before);
  });

  test('prose naming `cd <link>` before a diff: a link inside the workspace is followed, one leading outside is not looked behind; both refused, never the root reading', async () => {
    const same = 'a\nb\nc\n';
    using tree = createTempTree({ 'f.txt': same, 'sub/f.txt': same }, { 'f.txt': same });
    symlinkSync('sub', join(tree.root, 'inside'));
    symlinkSync(tree.outside, join(tree.root, 'elsewhere'));
    await using workspace = await client().openWorkspace(tree.root);
    const before = tree.fingerprint();
    for (const [link, says] of [['inside', /both at the workspace root and under inside/], ['elsewhere', /does not look at elsewhere\/f\.txt/]] as const) {
      const receipt = await workspace.apply(`You may need to \`cd ${link}\`.\n\n--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n`);
      assert.equal(receipt.error?.code, 'unsupported_command', link);
      assert.equal(receipt.error?.path, `${link}/f.txt`);
      assert.match(receipt.error!.message, says);
    }
    assert.equal(tree.fingerprint(), before);
  });

  test('a format given by the caller wins over detection', async () => {
    using tree = createTempTree({ 'a.txt': 'x\n' });
    await using workspace = await client().openWorkspace(tree.root);
    const receipt = await workspace.apply(block('a.txt', 'x\n', 'y\n'), { format: 'unified' });
    assert.equal(receipt.status, 'rejected');
    assert.equal(tree.text('a.txt'), 'x\n');
  });
});
