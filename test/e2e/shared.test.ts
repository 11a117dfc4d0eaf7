/**
 * The shared daemon (`patchd serve --socket`): its socket file, one workspace per root across
 * connections, `file/changed` to the clients that read or patched a file, locks released by a
 * client that vanishes mid-patch or mid-batch, and a workspace whose root disappears.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { RpcError, type FileChange, type Workspace } from '../../client/index.ts';
import { daemonArgs } from '../../client/daemonProcess.ts';
import { RUNAWAY_DAEMON } from '../helpers/runawayDaemon.ts';
import { runawayFile } from '../helpers/runawayWorker.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree, sha256 } from '../helpers/tempTree.ts';

/** Runs `patchd serve --socket path` expecting it to refuse to start. */
function serveRefused(socket: string): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [...daemonArgs(), '--socket', socket], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

/** Collects `file/changed` for one workspace; `next()` waits (bounded) for the next one. */
function changesOf(workspace: Workspace) {
  const seen: FileChange[] = [];
  let wake: (() => void) | undefined;
  workspace.onFileChanged((change) => {
    seen.push(change);
    wake?.();
  });
  // The bound only stops a wait for a notification that never comes; nothing is timed.
  const next = async (count: number, timeoutMs = 120_000): Promise<FileChange[]> => {
    const timer = setTimeout(() => wake?.(), timeoutMs);
    const deadline = Date.now() + timeoutMs;
    while (seen.length < count && Date.now() < deadline) await new Promise<void>((resolve) => (wake = resolve));
    clearTimeout(timer);
    assert.ok(seen.length >= count, `expected ${count} file/changed notification(s) within ${timeoutMs} ms, got ${JSON.stringify(seen)}`);
    return seen.slice(0, count);
  };
  return { seen, next };
}

describe('the socket', () => {
  test('is mode 0600; a stale socket file is replaced, a live daemon or a non-socket path refused with a clear message', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'patchd-sock-test-'));
    try {
      const stale = join(dir, 'stale.sock');
      const killed = await SocketDaemon.start({ socket: stale });
      killed.child.kill('SIGKILL');
      await killed.exited;
      await killed[Symbol.asyncDispose]();
      assert.ok(statSync(stale).isSocket(), 'a killed daemon leaves its socket file behind');
      await using daemon = await SocketDaemon.start({ socket: stale });
      assert.equal(statSync(stale).mode & 0o777, 0o600);
      const refused = await serveRefused(stale);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /already listening on .*stale\.sock/);
      const file = join(dir, 'plain-file');
      writeFileSync(file, 'not a socket\n');
      const notSocket = await serveRefused(file);
      assert.equal(notSocket.code, 2);
      assert.match(notSocket.stderr, /exists and is not a socket/);
      assert.ok(statSync(file).isFile());
      const client = await daemon.connect();
      assert.equal(client.serverInfo.name, 'patchd');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('clients of one shared daemon', () => {
  test('share one workspace per root; one client closing neither closes it for the others nor stops the daemon', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    await using daemon = await SocketDaemon.start();
    const [alice, bob] = [await daemon.connect(), await daemon.connect()];
    const [mine, theirs] = [await alice.openWorkspace(tree.root), await bob.openWorkspace(tree.root)];
    assert.equal(mine.id, theirs.id);
    await alice.close();
    assert.equal((await theirs.read('a.txt')).content, 'a\n');
    const carol = await daemon.connect();
    assert.equal((await carol.openWorkspace(tree.root)).id, theirs.id);
  });

  test('file/changed reaches the clients that read or patched the file: editor saves, deletes, never patchd\'s own commits', async () => {
    using tree = createTempTree({ 'f.txt': 'one\n', 'g.txt': 'gee\n' });
    await using daemon = await SocketDaemon.start();
    const [reader, patcher, bystander] = [await daemon.connect(), await daemon.connect(), await daemon.connect()];
    const readerWorkspace = await reader.openWorkspace(tree.root);
    const patcherWorkspace = await patcher.openWorkspace(tree.root);
    const bystanderWorkspace = await bystander.openWorkspace(tree.root);
    const [toReader, toPatcher, toBystander] = [changesOf(readerWorkspace), changesOf(patcherWorkspace), changesOf(bystanderWorkspace)];
    await readerWorkspace.read('f.txt');
    const own = await patcherWorkspace.apply('--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one\n+two\n');
    assert.equal(own.status, 'applied');
    assert.equal((await patcherWorkspace.apply('--- a/g.txt\n+++ b/g.txt\n@@ -1 +1 @@\n-gee\n+GEE\n')).status, 'applied');

    writeFileSync(join(tree.root, '.f.txt.swp'), 'saved by an editor\n');
    renameSync(join(tree.root, '.f.txt.swp'), join(tree.root, 'f.txt'));
    const saved = { path: 'f.txt', sha256: sha256('saved by an editor\n') };
    assert.deepEqual(await toReader.next(1), [saved], 'the reader hears of the save, not of the patch');
    assert.deepEqual(await toPatcher.next(1), [saved]);

    rmSync(join(tree.root, 'g.txt'));
    assert.deepEqual((await toPatcher.next(2))[1], { path: 'g.txt', sha256: null });
    assert.deepEqual(toReader.seen, [saved], 'the reader never read g.txt');
    assert.deepEqual(toBystander.seen, [], 'the bystander read and patched nothing');
  });
});

describe('file/changed for files replaced rather than written', () => {
  test('keeps coming after a file is replaced by unlink and recreate, twice, then edited; and after its directory is removed and made again', async () => {
    using tree = createTempTree({ 'f.txt': 'one\n', 'sub/h.txt': 'h\n' });
    await using daemon = await SocketDaemon.start();
    const workspace = await (await daemon.connect()).openWorkspace(tree.root);
    const changes = changesOf(workspace);
    await workspace.read('f.txt');
    await workspace.read('sub/h.txt');
    const f = join(tree.root, 'f.txt');
    const h = join(tree.root, 'sub', 'h.txt');
    // As `rm f && echo … > f` does; the new file often gets the old one's inode number.
    const steps: [string, () => void, string | null][] = [
      ['f.txt', () => (rmSync(f), writeFileSync(f, 'replaced 1\n')), 'replaced 1\n'],
      ['f.txt', () => (rmSync(f), writeFileSync(f, 'replaced 2\n')), 'replaced 2\n'],
      ['f.txt', () => writeFileSync(f, 'edited\n'), 'edited\n'],
      ['sub/h.txt', () => rmSync(join(tree.root, 'sub'), { recursive: true }), null],
      ['sub/h.txt', () => (mkdirSync(join(tree.root, 'sub')), writeFileSync(h, 'h again\n')), 'h again\n'],
      ['sub/h.txt', () => writeFileSync(h, 'h edited\n'), 'h edited\n'],
    ];
    // A step is two writes to the disk (unlink then create, truncate then write): a re-check may fall between them
    // and tell the file gone, or empty, before it tells the end of the step.
    const between = new Set([null, sha256('')]);
    for (const [index, [path, change, text]] of steps.entries()) {
      const from = changes.seen.length;
      change();
      const wanted = { path, sha256: text === null ? null : sha256(text) };
      for (let count = from + 1; ; count++) {
        const told = (await changes.next(count))[count - 1];
        if (told?.path === path && between.has(told.sha256) && text !== null) continue;
        assert.deepEqual(told, wanted, `step ${index + 1}`);
        break;
      }
    }
  });
});

describe('a client that vanishes', () => {
  const PLAIN = '--- a/locked.txt\n+++ b/locked.txt\n@@ -1 +1 @@\n-free\n+taken by bob\n';
  // Names both files: it holds locked.txt while its plan spins on the marker in spin.txt (not in the patch, which would spin the parse).
  const HOLDER = '--- a/locked.txt\n+++ b/locked.txt\n@@ -1 +1 @@\n-free\n+taken by alice\n--- a/spin.txt\n+++ b/spin.txt\n@@ -2 +2 @@\n-line\n+x\n';

  async function startRacing() {
    const tree = createTempTree({ 'locked.txt': 'free\n', 'spin.txt': runawayFile('line\n') });
    const daemon = await SocketDaemon.start({ env: { PATCHD_LOG_LEVEL: 'debug' }, args: ['--task-timeout-ms', '60000'], entry: RUNAWAY_DAEMON });
    const alice = await daemon.connect();
    const bob = await daemon.connect();
    return { tree, daemon, alice, aliceWorkspace: await alice.openWorkspace(tree.root), bobWorkspace: await bob.openWorkspace(tree.root) };
  }

  /** Alice holds locked.txt (her plan spins), and bob is seen waiting behind her (a probe that times out, cancelled on the daemon). */
  async function aliceHoldsTheLock(daemon: SocketDaemon, bobWorkspace: Workspace): Promise<void> {
    await daemon.logged((line) => line.includes('"msg":"locked"') && line.includes('spin.txt'));
    await assert.rejects(bobWorkspace.apply(PLAIN, { timeoutMs: 300 }), { name: 'RequestTimeoutError' }, 'bob waits behind alice');
    // Alice's patch never ends by itself: the first patch/apply to end is bob's cancelled probe.
    await daemon.logged((line) => line.includes('"msg":"request"') && line.includes('"method":"patch/apply"'));
  }

  test('mid-patch releases every lock it held: a patch waiting on the same file then applies', async () => {
    const { tree, daemon, alice, aliceWorkspace, bobWorkspace } = await startRacing();
    await using _daemon = daemon;
    using _tree = tree;
    void aliceWorkspace.apply(HOLDER).catch(() => {});
    await aliceHoldsTheLock(daemon, bobWorkspace);
    const bobs = bobWorkspace.apply(PLAIN, { timeoutMs: 20_000 });
    await alice.close();
    const receipt = await bobs;
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(tree.text('locked.txt'), 'taken by bob\n');
  });

  test('mid-batch stops its remaining patches and releases their locks', async () => {
    const { tree, daemon, alice, aliceWorkspace, bobWorkspace } = await startRacing();
    await using _daemon = daemon;
    using _tree = tree;
    const rest = Array.from({ length: 5 }, (_, n) => `--- a/other.txt\n+++ b/other.txt\n@@ -1 +1 @@\n-${n}\n+${n + 1}\n`);
    tree.write('other.txt', '0\n');
    const batch = aliceWorkspace.applyMany([HOLDER, ...rest], { concurrency: 1 });
    void batch.next().catch(() => {});
    await aliceHoldsTheLock(daemon, bobWorkspace);
    const bobs = bobWorkspace.apply(PLAIN, { timeoutMs: 20_000 });
    await alice.close();
    const receipt = await bobs;
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    await daemon.logged((line) => line.includes('"method":"patch/applyBatch"'));
    assert.equal(tree.text('locked.txt'), 'taken by bob\n');
    assert.equal(tree.text('other.txt'), '0\n', 'the patches after the one in flight never ran');
  });
});

test('a workspace root deleted while open: typed errors for it, the daemon keeps serving the others', async () => {
  using doomed = createTempTree({ 'a.txt': 'a\n' });
  using healthy = createTempTree({ 'b.txt': 'b\n' });
  await using daemon = await SocketDaemon.start();
  const client = await daemon.connect();
  const gone = await client.openWorkspace(doomed.root);
  const fine = await client.openWorkspace(healthy.root);
  await gone.read('a.txt');
  rmSync(doomed.root, { recursive: true, force: true });
  const receipt = await gone.apply('--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n');
  assert.equal(receipt.status, 'rejected');
  assert.equal(receipt.error?.code, 'not_found');
  const added = await gone.apply('*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch\n');
  assert.equal(added.status, 'rejected');
  assert.ok(added.error !== undefined);
  await assert.rejects(gone.read('a.txt'), (error: unknown) => error instanceof RpcError && error.data?.code === 'not_found');
  assert.equal((await fine.apply('--- a/b.txt\n+++ b/b.txt\n@@ -1 +1 @@\n-b\n+B\n')).status, 'applied');
  assert.equal(healthy.text('b.txt'), 'B\n');
});
