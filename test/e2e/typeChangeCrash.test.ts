/**
 * A real daemon SIGKILLed while it commits a patch that changes paths' types (a file replaced by
 * a directory and a directory by a file, beside an update and the deletion of the only file of a
 * directory, which is tidied away), at every instant of the commit in turn: before each of its
 * hooks and each of its system calls that changes the disk (`dyingDaemon.ts`), so which kill falls
 * where does not depend on the machine's speed. The daemon that opens the workspace next finds the
 * tree wholly at the pre-image (the files, the replaced and emptied directories, their modes and
 * owners) or wholly at the post-image, no temp file, and the history agreeing: the commit is
 * recorded exactly when it stands, and then its undo brings back the pre-image, modes and owners
 * included.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { DaemonExitedError, PatchClient } from '../../client/index.ts';
import type { Recovery } from '../../protocol/index.ts';
import { DYING_DAEMON } from '../helpers/dyingDaemon.ts';
import { createTempTree, type TempTree } from '../helpers/tempTree.ts';

const PATCH = [
  '--- a/foo\n+++ /dev/null\n@@ -1 +0,0 @@\n-foo\n',
  '--- /dev/null\n+++ b/foo/bar\n@@ -0,0 +1 @@\n+bar\n',
  '--- a/d/x\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n',
  '--- a/d/e/y\n+++ /dev/null\n@@ -1 +0,0 @@\n-y\n',
  '--- /dev/null\n+++ b/d\n@@ -0,0 +1 @@\n+d\n',
  '--- a/keep.txt\n+++ b/keep.txt\n@@ -1 +1 @@\n-keep\n+kept\n',
  '--- a/private/only\n+++ /dev/null\n@@ -1 +0,0 @@\n-only\n',
].join('');
const FILES = { foo: 'foo\n', 'd/x': 'x\n', 'd/e/y': 'y\n', 'keep.txt': 'keep\n', 'private/only': 'only\n' };
const OTHER_OWNER = process.getuid?.() === 0 ? { uid: 1234, gid: 5678 } : undefined;
/** More than the commit reaches (26 when written): a bound on the test, were the commit never to end. */
const MAX_INSTANTS = 100;

/** Every entry under `root`: its kind, content, mode (setgid included), and owner. */
function stateOf(root: string): Record<string, string> {
  const state: Record<string, string> = {};
  const walk = (relative: string): void => {
    for (const name of readdirSync(join(root, relative)).sort()) {
      const path = relative === '' ? name : `${relative}/${name}`;
      const stats = lstatSync(join(root, path));
      const how = `${(stats.mode & 0o7777).toString(8)} ${stats.uid}:${stats.gid}`;
      if (stats.isDirectory()) {
        state[path] = `dir ${how}`;
        walk(path);
      } else state[path] = `file ${how} ${JSON.stringify(readFileSync(join(root, path), 'utf8'))}`;
    }
  };
  walk('');
  return state;
}

/** The pre-image: a file and directories with modes (and, as root, owners) of their own, which every way back must keep. */
function preImageTree(): TempTree {
  const tree = createTempTree(FILES);
  chmodSync(join(tree.root, 'foo'), 0o640);
  chmodSync(join(tree.root, 'd'), 0o2750);
  chmodSync(join(tree.root, 'd/e'), 0o700);
  chmodSync(join(tree.root, 'private'), 0o700);
  if (OTHER_OWNER !== undefined) {
    for (const directory of ['d/e', 'private']) chownSync(join(tree.root, directory), OTHER_OWNER.uid, OTHER_OWNER.gid);
  }
  return tree;
}

/** What one kill left, as the next daemon found it once it opened the workspace. */
interface Recovered {
  readonly instant: number;
  /** Whether the kill fell after the directory d was removed and before the file d was renamed in (seen before the recovery). */
  readonly directoryGone: boolean;
  readonly state: Record<string, string>;
  readonly temps: readonly string[];
  readonly recovered: readonly Recovery[];
  /** The files of each transaction recorded. */
  readonly recorded: readonly string[][];
  /** The tree once the recorded commit was undone. */
  readonly undone?: Record<string, string>;
}

function tempsIn(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.patchd.tmp'));
}

test('a daemon SIGKILLed at any instant of a type-change commit that also empties a directory leaves, once recovered, the whole pre-image (modes and owners too) or the whole post-image, recorded as it stands', async (t) => {
  // Opens each tree a killed daemon left, as the next daemon would.
  await using recovering = await PatchClient.spawn();
  const found: Recovered[] = [];
  let pre: Record<string, string> | undefined;
  let post: Record<string, string> | undefined;
  for (let instant = 0; post === undefined; instant++) {
    assert.ok(instant < MAX_INSTANTS, `the commit reached ${MAX_INSTANTS} instants without ending`);
    using tree = preImageTree();
    pre ??= stateOf(tree.root);
    await using dying = await PatchClient.spawn({ daemonArgs: DYING_DAEMON, env: { ...process.env, PATCHD_TEST_DIE_AT: String(instant) } });
    const workspace = await dying.openWorkspace(tree.root);
    const outcome = await workspace.apply(PATCH).then((receipt) => ({ receipt }), (died: unknown) => ({ died }));
    if ('died' in outcome) {
      assert.ok(outcome.died instanceof DaemonExitedError && outcome.died.signal === 'SIGKILL', String(outcome.died));
      found.push(await recover(recovering, tree.root, instant));
    } else {
      // The commit reached fewer instants: it ended normally, leaving the post-image.
      assert.equal(outcome.receipt.status, 'applied', JSON.stringify(outcome.receipt.error));
      post = stateOf(tree.root);
      t.diagnostic(`the commit reached ${instant} instants`);
    }
  }
  const mode = (bits: number) => (bits & ~process.umask()).toString(8);
  const owner = `${process.getuid?.()}:${process.getgid?.()}`;
  assert.deepEqual(post, {
    d: `file ${mode(0o644)} ${owner} "d\\n"`,
    foo: `dir ${mode(0o777)} ${owner}`,
    'foo/bar': `file ${mode(0o644)} ${owner} "bar\\n"`,
    'keep.txt': pre!['keep.txt']!.replace('"keep\\n"', '"kept\\n"'),
  });
  for (const { instant, state, temps, recovered, recorded, undone } of found) {
    const at = `killed at instant ${instant}`;
    assert.deepEqual(temps, [], `${at}: no temp file is left`);
    assert.ok(recovered.every((report) => report.conflicts.length === 0 && (report.damaged ?? []).length === 0), `${at}: ${JSON.stringify(recovered)}`);
    if (recorded.length === 0) {
      assert.deepEqual(state, pre, `${at}: not recorded, so wholly the pre-image`);
      assert.ok(recovered.every((report) => report.outcome === 'rolled_back'), `${at}: ${JSON.stringify(recovered)}`);
    } else {
      assert.deepEqual(state, post, `${at}: recorded, so wholly the post-image`);
      assert.deepEqual(recovered.map((report) => report.outcome), ['rolled_forward'], at);
      assert.deepEqual(recorded, [['add d', 'add foo/bar', 'delete d/e/y', 'delete d/x', 'delete foo', 'delete private/only', 'update keep.txt']], at);
      assert.deepEqual(undone, pre, `${at}: the undo of the recorded commit brings back the pre-image`);
    }
  }
  const outcomes = new Set(found.flatMap(({ recovered }) => recovered.map((report) => report.outcome)));
  assert.deepEqual([...outcomes].sort(), ['rolled_back', 'rolled_forward'], 'kills before and after the last rename');
  assert.ok(found.some((kill) => kill.directoryGone), 'a kill between the removal of the directory d and the rename of the file d');
});

/** Opens the tree a killed daemon left with `client` (recovering it) and notes what it finds; a commit that stands is undone. */
async function recover(client: PatchClient, root: string, instant: number): Promise<Recovered> {
  const directoryGone = !existsSync(join(root, 'd'));
  const workspace = await client.openWorkspace(root);
  const state = stateOf(root);
  const temps = tempsIn(root);
  const transactions = await workspace.transactions({ limit: 10 });
  const recorded = transactions.map((transaction) => transaction.files.map((file) => `${file.op} ${file.path}`).sort());
  let undone: Record<string, string> | undefined;
  if (transactions.length === 1) {
    const receipt = await workspace.undo(transactions[0]!.transactionId);
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    undone = stateOf(root);
  }
  await workspace.close();
  return { instant, directoryGone, state, temps, recovered: workspace.recovered, recorded, ...(undone === undefined ? {} : { undone }) };
}
