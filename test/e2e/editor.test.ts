/** examples/editor-preview.ts: an editor's child daemon over vscode-jsonrpc, a previewed WorkspaceEdit, a pinned apply. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { applyTextEdits, PatchdChild, toWorkspaceEdit, type DocumentChange, type TextEdit } from '../../examples/editor-preview.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const FILES = {
  'src/app.ts': ['import { a } from "./a";', '', 'export function main() {', '  a();', '  return 1;', '}', '', 'export const name = "app";', ''].join('\n'),
  'old.md': 'title\nbody\n',
  'gone.txt': 'bye\n',
};

const PATCH = [
  '--- a/src/app.ts',
  '+++ b/src/app.ts',
  '@@ -1,4 +1,5 @@',
  ' import { a } from "./a";',
  '+import { b } from "./b";',
  ' ',
  ' export function main() {',
  '   a();',
  '@@ -5,4 +6,4 @@',
  '-  return 1;',
  '+  return b();',
  ' }',
  ' ',
  '-export const name = "app";',
  '+export const name = "editor";',
  '--- /dev/null',
  '+++ b/src/b.ts',
  '@@ -0,0 +1,2 @@',
  '+export const b = () => 2;',
  '+// added',
  '--- a/gone.txt',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  '-bye',
  'diff --git a/old.md b/docs/new.md',
  'rename from old.md',
  'rename to docs/new.md',
  '--- a/old.md',
  '+++ b/docs/new.md',
  '@@ -1,2 +1,2 @@',
  '-title',
  '+# title',
  ' body',
  '',
].join('\n');

function editsFor(changes: readonly DocumentChange[], uri: string): readonly TextEdit[] {
  const change = changes.find((entry) => 'textDocument' in entry && entry.textDocument.uri === uri);
  assert.ok(change !== undefined && 'edits' in change, `text edits for ${uri}`);
  return change.edits;
}

describe('the editor example', () => {
  let daemon: PatchdChild;
  before(async () => {
    daemon = await PatchdChild.start();
  });
  after(async () => {
    await daemon?.stop();
  });

  test('a dry run previews as LSP document changes whose text edits give what patchd then writes, pinned to the previewed bytes', async () => {
    using tree = createTempTree(FILES);
    const uri = (path: string) => pathToFileURL(join(tree.root, path)).href;
    const workspaceId = await daemon.openWorkspace(tree.root);
    const before = tree.fingerprint();

    const preview = await daemon.dryRun(workspaceId, PATCH);
    assert.equal(preview.status, 'dry_run', JSON.stringify(preview.error));
    assert.equal(tree.fingerprint(), before, 'the preview wrote nothing');

    const { documentChanges } = toWorkspaceEdit(tree.root, preview);
    const fileOperations = documentChanges.filter((change) => 'kind' in change).map((change) => JSON.stringify(change)).sort();
    assert.deepEqual(fileOperations, [
      { kind: 'create', uri: uri('src/b.ts') },
      { kind: 'delete', uri: uri('gone.txt') },
      { kind: 'rename', oldUri: uri('old.md'), newUri: uri('docs/new.md') },
    ].map((change) => JSON.stringify(change)).sort());
    const appEdits = editsFor(documentChanges, uri('src/app.ts'));
    assert.equal(appEdits.length, 3, 'one edit per run of changed lines');
    const previewed = {
      'src/app.ts': applyTextEdits(FILES['src/app.ts'], appEdits),
      'src/b.ts': applyTextEdits('', editsFor(documentChanges, uri('src/b.ts'))),
      'docs/new.md': applyTextEdits(FILES['old.md'], editsFor(documentChanges, uri('docs/new.md'))),
    };

    const applied = await daemon.applyPreviewed(workspaceId, PATCH, preview);
    assert.equal(applied.status, 'applied', JSON.stringify(applied.error));
    for (const [path, text] of Object.entries(previewed)) assert.equal(tree.text(path), text, `${path} is what the preview showed`);
    assert.equal(tree.text('gone.txt'), undefined);
    assert.equal(tree.text('old.md'), undefined);
  });

  test('a file changed after the preview: the pinned apply is stale_file and writes nothing', async () => {
    using tree = createTempTree(FILES);
    const workspaceId = await daemon.openWorkspace(tree.root);
    const preview = await daemon.dryRun(workspaceId, PATCH);
    writeFileSync(join(tree.root, 'gone.txt'), 'bye\nand more\n');
    const before = tree.fingerprint();
    const applied = await daemon.applyPreviewed(workspaceId, PATCH, preview);
    assert.equal(applied.status, 'rejected');
    assert.equal(applied.error?.code, 'stale_file');
    assert.equal(tree.fingerprint(), before);
  });
});

test('run as a script, the example previews and applies the example patch', () => {
  const script = fileURLToPath(new URL('../../examples/editor-preview.ts', import.meta.url));
  const result = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stdout, /^Preview \(LSP WorkspaceEdit\):\n/);
  assert.match(result.stdout, /"newText": "  return `Hello, \$\{name\}!`;\\n"/);
  assert.match(result.stdout, /Accepted: applied\n$/);
});
