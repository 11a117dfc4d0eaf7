/** The wire itself, through a raw spawned daemon: bad frames and bad requests get JSON-RPC errors, stdout carries only frames. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { createTempTree, type TempTree } from '../helpers/tempTree.ts';

describe('wire robustness', () => {
  let daemon: RawDaemon;
  let tree: TempTree;
  let workspaceId: string;
  let nextId = 100;
  const alive = async () => {
    const reply = await daemon.request(++nextId, 'file/read', { workspaceId, path: 'a.txt' });
    assert.equal((reply.result as { content: string } | undefined)?.content, 'a\n', JSON.stringify(reply));
  };

  before(async () => {
    tree = createTempTree({ 'a.txt': 'a\n' });
    daemon = new RawDaemon();
    await daemon.request(1, 'initialize', {});
    workspaceId = ((await daemon.request(2, 'workspace/open', { root: tree.root })).result as { workspaceId: string }).workspaceId;
  });
  after(async () => {
    daemon.child.stdin.end();
    assert.equal((await daemon.exited).code, 0);
    tree[Symbol.dispose]();
  });

  test('a body that is not JSON gets -32700 and the daemon keeps serving', async () => {
    daemon.sendBody('{"jsonrpc": "2.0", "id": 7, "method": garbage!!');
    const reply = await daemon.waitFor((frame) => frame.error?.code === -32700);
    assert.equal(reply.id, null);
    await alive();
  });

  test('JSON that is not a JSON-RPC message gets -32600', async () => {
    daemon.sendBody('[1, 2, 3]');
    daemon.send({ jsonrpc: '2.0', id: 8, method: 42 });
    await daemon.waitFor((frame) => frame.error?.code === -32600 && frame.id === null);
    const withId = await daemon.waitFor((frame) => frame.error?.code === -32600 && frame.id === 8);
    assert.match(withId.error?.message ?? '', /Invalid request/);
    await alive();
  });

  test('invalid params get -32602 with the failing fields', async () => {
    const reply = await daemon.request(10, 'patch/apply', { workspaceId, patch: 42, format: 'klingon' });
    assert.equal(reply.error?.code, -32602);
    assert.equal(reply.error?.data?.code, 'invalid_params');
    assert.match(reply.error?.message ?? '', /format/);
    const neither = await daemon.request(11, 'patch/apply', { workspaceId });
    assert.equal(neither.error?.code, -32602);
    const positional = await daemon.request(12, 'workspace/open', ['/tmp']);
    assert.equal(positional.error?.code, -32602);
    await alive();
  });

  test('an unknown workspace gets -32602 with data.code unknown_workspace', async () => {
    const reply = await daemon.request(20, 'patch/apply', { workspaceId: 'ws_nope', patch: 'x' });
    assert.equal(reply.error?.code, -32602);
    assert.equal(reply.error?.data?.code, 'unknown_workspace');
    await alive();
  });

  test('an unknown method gets -32601', async () => {
    const reply = await daemon.request(30, 'patch/teleport', {});
    assert.equal(reply.error?.code, -32601);
    daemon.send({ jsonrpc: '2.0', method: 'some/notification', params: {} });
    daemon.send({ jsonrpc: '2.0', method: '$/cancelRequest' });
    await alive();
  });

  test('file/read of a missing file is -32602 with the receipt code and hint', async () => {
    const reply = await daemon.request(40, 'file/read', { workspaceId, path: 'nope.txt' });
    assert.equal(reply.error?.code, -32602);
    assert.equal(reply.error?.data?.code, 'not_found');
    const escape = await daemon.request(41, 'file/read', { workspaceId, path: '../outside/secret' });
    assert.equal(escape.error?.data?.code, 'path_escape');
  });

  test('no stack trace ever reaches the wire, and stdout held nothing but frames', () => {
    assert.deepEqual(daemon.violations, []);
    assert.equal(daemon.leftover, 0);
    for (const frame of daemon.frames) {
      assert.equal(frame.jsonrpc, '2.0');
      assert.doesNotMatch(JSON.stringify(frame.error ?? {}), /\n\s+at /);
    }
  });
});
