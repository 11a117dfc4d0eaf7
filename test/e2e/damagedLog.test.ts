/**
 * A commit log segment found damaged when a workspace is opened: the daemon logs it at error
 * level, naming it and the bytes lost, and tells the workspace's first opener in
 * `workspace/open`'s `damagedLog`; a one-shot command (in-process, or `apply --socket` when the
 * shared daemon tells it) says it on stderr in one line, whatever its output options.
 */
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DAMAGED_LOG_SEGMENT, stateDirFor } from '../../daemon/workspace/workspace.ts';
import { ListTransactionsResultSchema } from '../../protocol/index.ts';
import { patchd } from '../helpers/cli.ts';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree, type TempTree } from '../helpers/tempTree.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const crashChild = fileURLToPath(new URL('../workspace/crashChild.ts', import.meta.url));

const TREE = { 'two.txt': 'two\n', 'three.txt': 'three\n', 'four.txt': 'four\n', 'keep.txt': 'untouched\n' };
const TOUCH_KEEP = '--- a/keep.txt\n+++ b/keep.txt\n@@ -1 +1 @@\n-kept\n+touched\n';

interface Damage {
  readonly segment: string;
  readonly keptAside: string;
  /** Where the damaged first frame ends: the bytes lost. */
  readonly frameEnd: number;
}

/**
 * A one-file commit settles, then a five-file commit dies before its third rename; the first
 * frame of their log segment (under `stateRoot`) then gets a flipped byte.
 */
function damagedLog(tree: TempTree, stateRoot = TEST_STATE_ROOT): Damage {
  const stateDir = stateDirFor(tree.root, stateRoot);
  const child = spawnSync(process.execPath, ['--import', 'tsx', crashChild, tree.root, stateDir, 'rename:2', 'settledFirst'], { cwd: repoRoot, encoding: 'utf8' });
  assert.equal(child.signal, 'SIGKILL', child.stderr);
  const [segment] = readdirSync(join(stateDir, 'log'));
  assert.ok(segment !== undefined);
  const bytes = readFileSync(join(stateDir, 'log', segment));
  bytes[20]! ^= 0x01;
  writeFileSync(join(stateDir, 'log', segment), bytes);
  return { segment, keptAside: join(stateDir, 'log', `${segment}.damaged`), frameEnd: 8 + bytes.readUInt32LE(0) };
}

/** What `workspace/open` tells of the damage. */
const toldOpen = ({ segment, keptAside, frameEnd }: Damage) => [{ segment, keptAside, lostBytes: frameEnd }];

/** The line a one-shot command prints of the damage. */
const toldLine = ({ segment, keptAside, frameEnd }: Damage) =>
  `patchd: commit log segment damaged: ${frameEnd} bytes lost in ${segment}, what was logged there is gone; kept at ${keptAside}; `
  + 'a commit in flight there may be left half-applied: check the files the patch or undo killed with it was changing';

/** The damaged-segment error line of a daemon's stderr, checked against `damage`. */
function assertLoggedError(stderr: string, root: string, { segment, keptAside, frameEnd }: Damage): void {
  const lines = stderr.split('\n').filter((line) => line.includes(DAMAGED_LOG_SEGMENT));
  assert.equal(lines.length, 1, stderr);
  const line = JSON.parse(lines[0]!) as Record<string, unknown>;
  assert.equal(line.level, 'error');
  assert.equal(line.root, root);
  assert.equal(line.segment, segment);
  assert.equal(line.keptAs, keptAside);
  assert.deepEqual(line.damaged, [{ start: 0, end: frameEnd }]);
}

/** The stderr of a one-shot command that was first to open: the damage, then the rollback of the commit in flight, nothing else. */
function assertToldOnStderr(stderr: string, damage: Damage): void {
  const [damaged, recovered, ...rest] = stderr.split('\n');
  assert.equal(damaged, toldLine(damage), stderr);
  assert.match(recovered!, /^patchd: recovered an unfinished commit [^\s:]+: rolled back, put back as before it: a\/one\.txt, two\.txt$/);
  assert.deepEqual(rest, ['']);
}

test('patchd serve recovers past a damaged frame of a killed process\'s log, logs the segment at error level and tells the first workspace/open of it, once', async () => {
  using tree = createTempTree(TREE);
  const damage = damagedLog(tree);
  await using daemon = new RawDaemon();
  const opened = (await daemon.request(1, 'workspace/open', { root: tree.root })).result as { recovered: { outcome: string; paths: string[] }[]; damagedLog: unknown };
  assert.deepEqual(opened.recovered.map(({ outcome, paths }) => ({ outcome, paths })), [{ outcome: 'rolled_back', paths: ['a/one.txt', 'two.txt'] }]);
  assert.deepEqual(opened.damagedLog, toldOpen(damage));
  const again = (await daemon.request(2, 'workspace/open', { root: tree.root })).result as Record<string, unknown>;
  assert.deepEqual(Object.keys(again).sort(), ['root', 'workspaceId']);
  daemon.child.stdin.end();
  assert.equal((await daemon.exited).code, 0, daemon.stderr);
  assert.equal(tree.text('two.txt'), 'two\n', 'the commit in flight is rolled back');
  assertLoggedError(daemon.stderr, tree.root, damage);
});

test('patchd log --json says on stderr which segment was damaged, the bytes lost and where it is kept, in words; stdout stays JSON; the next command says nothing', () => {
  using tree = createTempTree(TREE);
  const damage = damagedLog(tree);
  const log = patchd(['log', '--json', '-C', tree.root]);
  assert.equal(log.code, 0, log.stderr);
  assertToldOnStderr(log.stderr, damage);
  assert.doesNotMatch(log.stderr, /"level"/, 'no JSON log line from the one-shot CLI');
  ListTransactionsResultSchema.parse(JSON.parse(log.stdout));
  assert.equal(tree.text('two.txt'), 'two\n', 'the commit in flight is rolled back');

  const again = patchd(['log', '-C', tree.root]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stderr, '');
});

test('patchd apply --socket -s, first to open after the damage, says it on stderr as an in-process command would; a client opening after it is told nothing', async () => {
  using tree = createTempTree(TREE);
  await using daemon = await SocketDaemon.start();
  const damage = damagedLog(tree, daemon.stateRoot);
  const apply = patchd(['apply', '--socket', daemon.socket, '-s', '-C', tree.root], { input: TOUCH_KEEP });
  assert.equal(apply.code, 0, apply.stderr);
  assert.equal(apply.stdout, '');
  assertToldOnStderr(apply.stderr, damage);
  assert.equal(tree.text('keep.txt'), 'touched\n');

  const client = await daemon.connect();
  const workspace = await client.openWorkspace(tree.root);
  assert.deepEqual([workspace.damagedLog, workspace.recovered], [[], []]);
  assertLoggedError(daemon.stderr, tree.root, damage);
});

test('a client of the shared daemon, first to open after the damage, is told it in damagedLog; patchd apply --socket after it says nothing of it', async () => {
  using tree = createTempTree(TREE);
  await using daemon = await SocketDaemon.start();
  const damage = damagedLog(tree, daemon.stateRoot);
  const client = await daemon.connect();
  const workspace = await client.openWorkspace(tree.root);
  assert.deepEqual(workspace.damagedLog, toldOpen(damage));
  assert.deepEqual(workspace.recovered.map(({ outcome, paths }) => ({ outcome, paths })), [{ outcome: 'rolled_back', paths: ['a/one.txt', 'two.txt'] }]);

  const apply = patchd(['apply', '--socket', daemon.socket, '-C', tree.root], { input: TOUCH_KEEP });
  assert.equal(apply.code, 0, apply.stderr);
  assert.equal(apply.stderr, '');
  assert.equal(tree.text('keep.txt'), 'touched\n');
});
