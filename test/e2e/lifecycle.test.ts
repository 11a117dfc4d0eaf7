/** Lifecycle end to end: initialize, workspaces shared by root, shutdown, stdin closing, a killed daemon. */
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { DaemonExitedError, FORMATS, PatchClient, RpcError } from '../../client/index.ts';
import { fileURLToPath } from 'node:url';
import { assertClosedInOrder } from '../helpers/closedInOrder.ts';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { RUNAWAY_DAEMON } from '../helpers/runawayDaemon.ts';
import { RUNAWAY_PATCH } from '../helpers/runawayWorker.ts';
import { createTempTree } from '../helpers/tempTree.ts';

/** Messages as consecutive frames, for one write. */
function framed(messages: readonly object[]): Buffer {
  return Buffer.concat(messages.map((message) => {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
  }));
}

describe('lifecycle', () => {
  test('initialize reports the server, protocol version 1 and every format but auto', async () => {
    const daemon = new RawDaemon();
    const reply = await daemon.request(1, 'initialize', { clientInfo: { name: 'test' } });
    const result = reply.result as { serverInfo: { name: string; version: string }; protocolVersion: number; formats: string[] };
    assert.equal(result.serverInfo.name, 'patchd');
    assert.match(result.serverInfo.version, /^\d+\.\d+\.\d+/);
    assert.equal(result.protocolVersion, 1);
    assert.ok(!result.formats.includes('auto'));
    assert.deepEqual(result.formats, [...FORMATS]);
    daemon.child.stdin.end();
    assert.deepEqual(await daemon.exited, { code: 0, signal: null });
  });

  test('opening a root again (any spelling) gives the same id; it lives until its last open is closed', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const daemon = new RawDaemon();
    const first = await daemon.request(1, 'workspace/open', { root: tree.root });
    const again = await daemon.request(2, 'workspace/open', { root: `${tree.root}/./` });
    const { workspaceId, root } = first.result as { workspaceId: string; root: string };
    assert.equal(root, tree.root);
    assert.equal((again.result as { workspaceId: string }).workspaceId, workspaceId);
    assert.equal((await daemon.request(3, 'workspace/close', { workspaceId })).result, null);
    const stillOpen = await daemon.request(4, 'file/read', { workspaceId, path: 'a.txt' });
    assert.equal((stillOpen.result as { content: string }).content, 'a\n');
    await daemon.request(5, 'workspace/close', { workspaceId });
    const gone = await daemon.request(6, 'file/read', { workspaceId, path: 'a.txt' });
    assert.equal(gone.error?.code, -32602);
    assert.equal(gone.error?.data?.code, 'unknown_workspace');
    daemon.child.stdin.end();
    assert.equal((await daemon.exited).code, 0);
  });

  test('through the client: same id for the same root; close() ends the daemon and later calls fail', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const client = await PatchClient.spawn();
    const pid = client.pid;
    assert.ok(pid !== undefined);
    const one = await client.openWorkspace(tree.root);
    const two = await client.openWorkspace(tree.root);
    assert.equal(one.id, two.id);
    await one.close();
    assert.equal((await two.read('a.txt')).content, 'a\n');
    await client.close();
    assert.equal(client.closed, true);
    assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
    await assert.rejects(two.read('a.txt'), { name: 'ConnectionClosedError' });
  });

  test('a bad root is -32602 with data.code bad_root', async () => {
    await using client = await PatchClient.spawn();
    await assert.rejects(client.openWorkspace('/definitely/not/here'), (error: unknown) => {
      assert.ok(error instanceof RpcError);
      assert.equal(error.code, -32602);
      assert.equal(error.data?.code, 'bad_root');
      return true;
    });
  });

  test('a root inside the state root (other workspaces\' journals and records) is bad_root, and nothing there is written', async () => {
    await using client = await PatchClient.spawn();
    using tree = createTempTree({ 'a.txt': 'a\n' });
    await (await client.openWorkspace(tree.root)).apply('--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+A\n');
    const inside = join(TEST_STATE_ROOT, 'planted');
    mkdirSync(inside, { recursive: true });
    writeFileSync(join(inside, 'x.txt'), 'x\n');
    for (const root of [TEST_STATE_ROOT, inside]) {
      await assert.rejects(client.openWorkspace(root), (error: unknown) => {
        assert.ok(error instanceof RpcError);
        assert.equal(error.data?.code, 'bad_root');
        assert.match(error.message, /inside patchd's state root/);
        return true;
      });
    }
    assert.deepEqual(readdirSync(inside), ['x.txt']);
  });

  test('shutdown replies null, later requests are refused, exit ends the process with 0', async () => {
    const daemon = new RawDaemon();
    assert.equal((await daemon.request(1, 'shutdown')).result, null);
    const refused = await daemon.request(2, 'initialize', {});
    assert.equal(refused.error?.code, -32600);
    daemon.send({ jsonrpc: '2.0', method: 'exit' });
    assert.deepEqual(await daemon.exited, { code: 0, signal: null });
  });

  test('after shutdown, requests that would change the tree are refused InvalidRequest and write nothing; stdin closing then exits 0', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const daemon = new RawDaemon();
    const { workspaceId } = (await daemon.request(1, 'workspace/open', { root: tree.root })).result as { workspaceId: string };
    assert.equal((await daemon.request(2, 'shutdown')).result, null);
    const refusals = [
      await daemon.request(3, 'patch/apply', { workspaceId, patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n' }),
      await daemon.request(4, 'workspace/open', { root: tree.root }),
      await daemon.request(5, 'file/read', { workspaceId, path: 'a.txt' }),
    ];
    for (const refused of refusals) {
      assert.equal(refused.error?.code, -32600, JSON.stringify(refused));
      assert.equal(refused.error?.data?.code, 'shutting_down');
    }
    daemon.child.stdin.end();
    assert.deepEqual(await daemon.exited, { code: 0, signal: null }, daemon.stderr);
    assert.equal(readFileSync(join(tree.root, 'a.txt'), 'utf8'), 'a\n');
    assertClosedInOrder(tree.root, 0);
  });

  // LSP asks for exit code 1 when `exit` comes without `shutdown`. patchd keeps 0: closing stdin
  // without `shutdown` is an ordinary end (exit 0, pinned above), and `exit` says the same thing
  // outright; a non-zero code from patchd means patchd failed (65 unreadable input, 70 a fault),
  // which a parent must be able to tell from its own way of saying goodbye.
  test('exit without shutdown exits 0 after closing the workspace in order: a patch sent with it is committed whole or not at all', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const daemon = new RawDaemon();
    const { workspaceId } = (await daemon.request(1, 'workspace/open', { root: tree.root })).result as { workspaceId: string };
    daemon.write(framed([
      { jsonrpc: '2.0', id: 2, method: 'patch/apply', params: { workspaceId, patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n' } },
      { jsonrpc: '2.0', method: 'exit' },
    ]));
    assert.deepEqual(await daemon.exited, { code: 0, signal: null }, daemon.stderr);
    const content = readFileSync(join(tree.root, 'a.txt'), 'utf8');
    assert.ok(content === 'a\n' || content === 'b\n', content);
    assertClosedInOrder(tree.root, content === 'b\n' ? 1 : 0);
    const receipt = daemon.frames.find((frame) => frame.id === 2)?.result as { status: string } | undefined;
    if (receipt !== undefined) assert.equal(receipt.status === 'applied', content === 'b\n', 'an answer that came agrees with the disk');
  });

  test('closing stdin exits 0, also with a workspace (and its worker pool) open', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const daemon = new RawDaemon();
    const opened = await daemon.request(1, 'workspace/open', { root: tree.root });
    const { workspaceId } = opened.result as { workspaceId: string };
    const patch = '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n';
    const applied = await daemon.request(2, 'patch/apply', { workspaceId, patch });
    assert.equal((applied.result as { status: string }).status, 'applied');
    daemon.child.stdin.end();
    assert.deepEqual(await daemon.exited, { code: 0, signal: null });
  });

  test('input that ends right after its last frame still gets every answer, then exit 0', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const daemon = new RawDaemon();
    daemon.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} });
    daemon.send({ jsonrpc: '2.0', id: 2, method: 'workspace/open', params: { root: tree.root } });
    daemon.child.stdin.end();
    assert.deepEqual(await daemon.exited, { code: 0, signal: null });
    assert.deepEqual(daemon.frames.map((frame) => [frame.id, frame.error === undefined]), [[1, true], [2, true]]);
  });

  test('requests written together with the end of the input (printf FRAMES | patchd serve) all run and are answered, then exit 0', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const daemon = new RawDaemon();
    const opened = await daemon.request(1, 'workspace/open', { root: tree.root });
    const { workspaceId } = opened.result as { workspaceId: string };
    const creates = Array.from({ length: 20 }, (_, index) => ({
      jsonrpc: '2.0', id: 100 + index, method: 'patch/apply',
      params: { workspaceId, operations: [{ type: 'create_file', path: `new${index}.txt`, diff: '+x\n' }] },
    }));
    // Its progress is sent after the input ended, still ahead of its response.
    const streamed = { jsonrpc: '2.0', id: 200, method: 'patch/apply', params: { workspaceId, patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n', partialResultToken: 'p' } };
    daemon.child.stdin.end(framed([...creates, streamed]));
    assert.deepEqual(await daemon.exited, { code: 0, signal: null }, daemon.stderr);
    for (const { id } of [...creates, streamed]) {
      const replies = daemon.frames.filter((frame) => frame.id === id);
      assert.equal(replies.length, 1, `one answer to ${id}: ${JSON.stringify(replies)}`);
      assert.equal((replies[0]!.result as { status?: string } | undefined)?.status, 'applied', JSON.stringify(replies[0]));
    }
    for (let index = 0; index < 20; index += 1) assert.ok(existsSync(join(tree.root, `new${index}.txt`)), `new${index}.txt was created`);
    const progress = daemon.frames.findIndex((frame) => frame.method === '$/progress' && (frame.params as { token?: unknown }).token === 'p');
    assert.ok(progress >= 0 && progress < daemon.frames.findIndex((frame) => frame.id === 200), 'the file receipt came before the response');
    assert.deepEqual(daemon.violations, []);
  });

  test('a single request written with the end of the input is run and answered', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const daemon = new RawDaemon();
    const opened = await daemon.request(1, 'workspace/open', { root: tree.root });
    const { workspaceId } = opened.result as { workspaceId: string };
    daemon.child.stdin.end(framed([{ jsonrpc: '2.0', id: 2, method: 'patch/apply', params: { workspaceId, patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n' } }]));
    assert.deepEqual(await daemon.exited, { code: 0, signal: null }, daemon.stderr);
    assert.equal((daemon.frames.find((frame) => frame.id === 2)?.result as { status?: string } | undefined)?.status, 'applied');
    assert.equal(readFileSync(join(tree.root, 'a.txt'), 'utf8'), 'b\n');
  });

  test('a patch waiting for approval when the input ends is declined at once (nobody is left to answer), then exit 0', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const daemon = new RawDaemon();
    const opened = await daemon.request(1, 'workspace/open', { root: tree.root, options: { approval: 'always' } });
    const { workspaceId } = opened.result as { workspaceId: string };
    daemon.send({ jsonrpc: '2.0', id: 2, method: 'patch/apply', params: { workspaceId, patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n' } });
    await daemon.waitFor((frame) => frame.method === 'patch/approve');
    daemon.child.stdin.end();
    assert.deepEqual(await daemon.exited, { code: 0, signal: null }, daemon.stderr);
    const receipt = daemon.frames.find((frame) => frame.id === 2)?.result as { status: string; error?: { code: string; message: string } };
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'declined');
    assert.match(receipt.error?.message ?? '', /closed its input/);
    assert.equal(readFileSync(join(tree.root, 'a.txt'), 'utf8'), 'a\n');
  });

  test('pending calls reject with DaemonExitedError the moment the daemon is killed', async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    const client = await PatchClient.spawn({ daemonArgs: RUNAWAY_DAEMON });
    const workspace = await client.openWorkspace(tree.root);
    const pending = workspace.apply(RUNAWAY_PATCH);
    const pid = client.pid;
    assert.ok(pid !== undefined);
    setTimeout(() => process.kill(pid, 'SIGKILL'), 200);
    // DaemonExitedError, not RequestTimeoutError (60 s): the call failed because the daemon died, not by waiting it out.
    await assert.rejects(pending, (error: unknown) => {
      assert.ok(error instanceof DaemonExitedError, String(error));
      assert.equal(error.signal, 'SIGKILL');
      return true;
    });
    await assert.rejects(workspace.read('a.txt'), DaemonExitedError);
    await client.close();
  });

  test('a program whose daemon died in the middle of a frame still exits once its work is done', async () => {
    const host = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('../helpers/halfFrameHost.ts', import.meta.url))], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    host.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
    // A hang guard, not a time limit: a leftover timer keeps the host alive for good (it re-arms every 10 s).
    const guard = setTimeout(() => host.kill('SIGKILL'), 60_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => host.once('exit', (...exit) => resolve(exit)));
    clearTimeout(guard);
    assert.equal(output.trim(), 'DaemonExitedError');
    assert.deepEqual({ code, signal }, { code: 0, signal: null }, 'the host exited by itself');
  });
});
