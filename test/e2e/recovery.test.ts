/** A commit a killed process left unfinished is finished when a daemon opens the workspace, and the client is told how. */
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PatchClient } from '../../client/index.ts';
import { encodeJournal } from '../../daemon/workspace/journal.ts';
import { sha256Hex, stateDirFor } from '../../daemon/workspace/workspace.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const crashChild = fileURLToPath(new URL('../workspace/crashChild.ts', import.meta.url));
const encode = (text: string) => new TextEncoder().encode(text);
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

/**
 * The journal of a commit killed after renaming two.txt and before three.txt (the tree holds
 * that), as it waited in the state dir, its bytes passed through `damage`.
 */
function leaveJournal(root: string, damage: (bytes: Buffer, headerBytes: number) => Buffer): void {
  const journals = join(stateDirFor(root, TEST_STATE_ROOT), 'journal');
  mkdirSync(journals, { recursive: true });
  const update = (path: string, before: string, after: string) => ({
    path, tempName: null, trashed: false, before: { bytes: encode(before), owner: { mode: 0o644, uid: 0, gid: 0 }, sha256: sha256Hex(encode(before)) }, afterSha256: sha256Hex(encode(after)),
  });
  const { chunks } = encodeJournal('tx_damaged', root, [update('two.txt', 'two\n', '2\n'), update('three.txt', 'three\n', '3\n')], []);
  writeFileSync(join(journals, `${spawnSync('true').pid}-0000-tx_damaged.journal`), damage(Buffer.concat(chunks), chunks[0]!.byteLength));
}

/** Where recovery kept the journal `leaveJournal` left: the one file in the journal dir, set aside as `.conflict`. */
function keptJournal(root: string): string {
  const journals = join(realpathSync(stateDirFor(root, TEST_STATE_ROOT)), 'journal');
  const kept = readdirSync(journals);
  assert.deepEqual(kept.map((name) => name.endsWith('-tx_damaged.journal.conflict')), [true]);
  return join(journals, kept[0]!);
}

test('workspace/open reports a path recovery left as found because the journal\'s copy of its pre-image fails its sha256', async () => {
  using tree = createTempTree({ ...CRASH_TREE, 'two.txt': '2\n' });
  leaveJournal(tree.root, (bytes, headerBytes) => {
    bytes[headerBytes + 2]! ^= 0x20; // "two" → "twO"
    return bytes;
  });

  await using client = await PatchClient.spawn();
  const workspace = await client.openWorkspace(tree.root);
  assert.deepEqual(workspace.recovered, [{ transactionId: 'tx_damaged', outcome: 'rolled_back', paths: [], conflicts: [], damaged: ['two.txt'], keptAside: keptJournal(tree.root) }]);
  assert.equal(tree.text('two.txt'), '2\n', 'not the damaged bytes');
  assert.equal(tree.text('three.txt'), 'three\n');
});

test('workspace/open reports a journal whose header fails its checksum as left_as_found: nothing it names is written', async () => {
  using tree = createTempTree({ ...CRASH_TREE, 'two.txt': '2\n' });
  leaveJournal(tree.root, (bytes) => Buffer.from(bytes.toString('latin1').replace('"mode":420', '"mode":511'), 'latin1')); // 0o644 → 0o777

  await using client = await PatchClient.spawn();
  const workspace = await client.openWorkspace(tree.root);
  assert.deepEqual(workspace.recovered, [
    { transactionId: 'tx_damaged', outcome: 'left_as_found', paths: [], conflicts: [], damaged: ['two.txt', 'three.txt'], keptAside: keptJournal(tree.root) },
  ]);
  assert.equal(tree.text('two.txt'), '2\n', 'not rolled back from a journal that cannot be trusted');
  assert.equal(tree.text('three.txt'), 'three\n');
});

test('workspace/open reports a journal that no longer decodes as left_as_found under its file\'s transaction, keeps it aside and logs where', async () => {
  using tree = createTempTree({ ...CRASH_TREE, 'two.txt': '2\n' });
  leaveJournal(tree.root, (bytes) => Buffer.concat([Buffer.from('['), bytes.subarray(1)])); // the header's `{`: no longer JSON

  let stderr = '';
  let onLogged: (line: string) => void = () => {};
  const logged = new Promise<string>((resolve) => { onLogged = resolve; });
  await using client = await PatchClient.spawn({
    stderr: (text) => {
      stderr += text;
      const line = stderr.split('\n').slice(0, -1).find((candidate) => candidate.includes('"msg":"recovered an unfinished commit"'));
      if (line !== undefined) onLogged(line);
    },
  });
  const workspace = await client.openWorkspace(tree.root);
  const keptAside = keptJournal(tree.root);
  assert.deepEqual(workspace.recovered, [{ transactionId: 'tx_damaged', outcome: 'left_as_found', paths: [], conflicts: [], keptAside }]);
  assert.equal(tree.text('two.txt'), '2\n');
  assert.equal(tree.text('three.txt'), 'three\n');
  const { time, ...fields } = JSON.parse(await logged) as Record<string, unknown>;
  assert.equal(typeof time, 'string');
  assert.deepEqual(fields, {
    level: 'warn', msg: 'recovered an unfinished commit', root: workspace.root, transactionId: 'tx_damaged', outcome: 'left_as_found',
    paths: [], conflicts: [], damaged: [], keptAside,
    summary: `not acted on, its journal is damaged and names no path that can be read; journal kept at ${keptAside}`,
  });
});
