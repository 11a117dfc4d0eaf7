/** A commit log segment found damaged when a workspace is opened is logged at error level, on stderr, naming it and the bytes lost. */
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DAMAGED_LOG_SEGMENT, stateDirFor } from '../../daemon/workspace/workspace.ts';
import { patchd } from '../helpers/cli.ts';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { createTempTree, type TempTree } from '../helpers/tempTree.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const crashChild = fileURLToPath(new URL('../workspace/crashChild.ts', import.meta.url));

/**
 * A one-file commit settles, then a five-file commit dies before its third rename; the first
 * frame of their log segment then gets a flipped byte. Returns the segment's name and where that frame ends.
 */
function damagedLog(tree: TempTree): { segment: string; frameEnd: number } {
  const stateDir = stateDirFor(tree.root, TEST_STATE_ROOT);
  const child = spawnSync(process.execPath, ['--import', 'tsx', crashChild, tree.root, stateDir, 'rename:2', 'settledFirst'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(child.signal, 'SIGKILL', child.stderr);
  const [segment] = readdirSync(join(stateDir, 'log'));
  assert.ok(segment !== undefined);
  const bytes = readFileSync(join(stateDir, 'log', segment));
  bytes[20]! ^= 0x01;
  writeFileSync(join(stateDir, 'log', segment), bytes);
  return { segment, frameEnd: 8 + bytes.readUInt32LE(0) };
}

/** Opens the workspace, returning what was written to stderr by then: `patchd serve` (workspace/open), or a one-shot command. */
const openers = {
  'the daemon': async (root: string): Promise<string> => {
    await using daemon = new RawDaemon();
    const opened = await daemon.request(1, 'workspace/open', { root });
    const { recovered } = opened.result as { recovered: { outcome: string; paths: string[] }[] };
    assert.deepEqual(recovered.map(({ outcome, paths }) => ({ outcome, paths })), [{ outcome: 'rolled_back', paths: ['a/one.txt', 'two.txt'] }]);
    daemon.child.stdin.end();
    assert.equal((await daemon.exited).code, 0, daemon.stderr);
    return daemon.stderr;
  },
  'patchd log': async (root: string): Promise<string> => {
    const run = patchd(['log', '-C', root]);
    assert.equal(run.code, 0, run.stderr);
    return run.stderr;
  },
};

for (const [opener, open] of Object.entries(openers)) {
  test(`${opener} recovers past a damaged frame of a killed process's log and logs the segment at error level`, async () => {
    using tree = createTempTree({ 'two.txt': 'two\n', 'three.txt': 'three\n', 'four.txt': 'four\n', 'keep.txt': 'untouched\n' });
    const { segment, frameEnd } = damagedLog(tree);
    const stderr = await open(tree.root);
    assert.equal(tree.text('two.txt'), 'two\n', 'the commit in flight is rolled back');
    const lines = stderr.split('\n').filter((line) => line.includes(DAMAGED_LOG_SEGMENT));
    assert.equal(lines.length, 1, stderr);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.equal(line.level, 'error');
    assert.equal(line.root, tree.root);
    assert.equal(line.segment, segment);
    assert.equal(line.keptAs, join(stateDirFor(tree.root, TEST_STATE_ROOT), 'log', `${segment}.damaged`));
    assert.deepEqual(line.damaged, [{ start: 0, end: frameEnd }]);
  });
}
