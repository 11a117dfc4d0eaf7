/**
 * The wire itself, through a raw spawned daemon: bad frames and bad requests get JSON-RPC errors,
 * stdout carries only frames, and a stream that cannot be read any more ends the daemon (stdio)
 * or drops the client (socket), never leaving it alive and deaf.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { FrameReader, type JsonRpcFrame } from '../helpers/frames.ts';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
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

  test('a request of another JSON-RPC version, or of none, gets -32600 and does not run', async () => {
    daemon.send({ jsonrpc: '1.0', id: 9011, method: 'initialize', params: {} });
    daemon.sendBody('{"id": 9012, "method": "initialize", "params": {}}');
    for (const id of [9011, 9012]) {
      const reply = await daemon.waitFor((frame) => frame.id === id);
      assert.equal(reply.error?.code, -32600, JSON.stringify(reply));
    }
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

  test('a misspelled param is -32602 naming it, and nothing is written (dryrun for dryRun must never apply)', async () => {
    const patch = '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n';
    const reply = await daemon.request(13, 'patch/apply', { workspaceId, patch, dryrun: true });
    assert.equal(reply.error?.code, -32602, JSON.stringify(reply));
    assert.equal(reply.error?.data?.code, 'invalid_params');
    assert.match(reply.error?.message ?? '', /Unrecognized key: "dryrun"/);
    const nested = await daemon.request(14, 'patch/applyBatch', { workspaceId, patches: [{ patch, dryrun: true }] });
    assert.match(nested.error?.message ?? '', /patches\.0: Unrecognized key: "dryrun"/);
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

/** The daemon's stderr as log records (every line must be one). */
function logRecords(stderr: string): { level: string; msg: string; reason?: string }[] {
  return stderr.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { level: string; msg: string; reason?: string });
}

const frame = (body: string): string => `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const initialize = frame(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }));
const nextRequest = frame(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'initialize', params: {} }));

/**
 * Input after which no frame boundary can be found again, each sent right behind a good
 * request (in the same write) and followed by another: the good one is answered, the daemon
 * logs one error line saying why and exits 65, never waiting forever on a stream it cannot read.
 */
const BROKEN_INPUTS: readonly { readonly name: string; readonly bytes: string | Buffer; readonly reason: RegExp; readonly endInput?: boolean }[] = [
  { name: 'a frame with no Content-Length', bytes: `Content-Type: application/json\r\n\r\n{}`, reason: /no Content-Length/ },
  { name: 'a negative Content-Length', bytes: `Content-Length: -5\r\n\r\n{}`, reason: /not a whole number of bytes: "-5"/ },
  { name: 'a Content-Length that is not a number', bytes: `Content-Length: 12abc\r\n\r\n{}`, reason: /not a whole number/ },
  { name: 'a header line of garbage', bytes: `Content-Length: 2\r\nthis is not a header\r\n\r\n{}`, reason: /not "Name: value": "this is not a header"/ },
  { name: 'two Content-Length lines', bytes: `Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}`, reason: /two Content-Length/ },
  { name: 'a 1 MB header', bytes: `X-Filler: ${'a'.repeat(1024 * 1024)}\r\n\r\n`, reason: /header is longer than 8192 bytes/ },
  { name: 'a 1 MB header that never ends', bytes: 'b'.repeat(1024 * 1024), reason: /header is longer than 8192 bytes/ },
  { name: 'a huge declared Content-Length', bytes: `Content-Length: 999999999999\r\n\r\n{`, reason: /Content-Length 999999999999 exceeds the limit of 67108864 bytes/ },
  {
    name: 'a body over the 64 MiB bound',
    bytes: Buffer.concat([Buffer.from(`Content-Length: ${64 * 1024 * 1024 + 1}\r\n\r\n`), Buffer.alloc(1024 * 1024, 0x20)]),
    reason: /exceeds the limit of 67108864 bytes/,
  },
  { name: 'a body longer than its Content-Length', bytes: `Content-Length: 2\r\n\r\n{}{"jsonrpc":"2.0"}`, reason: /not "Name: value"/ },
  { name: 'input that ends inside a frame', bytes: 'Content-Length: 100\r\n\r\n{"jsonrpc":', reason: /ended inside a frame/, endInput: true },
];

/** A safety net only (a hung daemon must fail the test, not stall the suite); nothing here is timed. */
const HANG_GUARD = { timeout: 300_000 };

describe('a broken input stream ends the daemon cleanly', { concurrency: 3 }, () => {
  for (const input of BROKEN_INPUTS) {
    test(`${input.name}: the good frame before it is answered, one error line says why, exit 65`, HANG_GUARD, async () => {
      await using daemon = new RawDaemon();
      daemon.write(Buffer.concat([Buffer.from(initialize), Buffer.from(input.bytes), Buffer.from(nextRequest)].slice(0, input.endInput === true ? 2 : 3)));
      if (input.endInput === true) daemon.child.stdin.end();
      const exit = await daemon.exited;
      assert.equal(exit.code, 65, daemon.stderr);
      assert.ok(daemon.frames.some((reply) => reply.id === 1 && reply.result !== undefined), 'the request before the break was answered');
      assert.ok(!daemon.frames.some((reply) => reply.id === 2), 'nothing after the break was read as a frame');
      const errors = logRecords(daemon.stderr).filter((record) => record.level === 'error');
      assert.equal(errors.length, 1, daemon.stderr);
      assert.match(errors[0]!.msg, /input stream broken/);
      assert.match(errors[0]!.reason ?? '', input.reason);
      assert.deepEqual(daemon.violations, []);
    });
  }

  test('a frame of many MB within the bound is read, and a bad body in a sound frame is not fatal', HANG_GUARD, async () => {
    await using daemon = new RawDaemon();
    const big = JSON.stringify({ jsonrpc: '2.0', method: 'some/notification', params: { pad: 'é'.repeat(10 * 1024 * 1024) } });
    daemon.write(Buffer.concat([Buffer.from(frame(big)), Buffer.from(frame('not json')), Buffer.from(initialize)]));
    await daemon.waitFor((reply) => reply.error?.code === -32700);
    await daemon.waitFor((reply) => reply.id === 1 && reply.result !== undefined);
    daemon.child.stdin.end();
    assert.equal((await daemon.exited).code, 0, daemon.stderr);
  });
});

/** A raw client of the shared daemon's socket: the frames it got back, and when the daemon hung up on it. */
function rawSocketClient(path: string): { readonly socket: net.Socket; readonly frames: JsonRpcFrame[]; readonly hungUp: Promise<void> } {
  const socket = net.connect(path);
  const reader = new FrameReader();
  const frames: JsonRpcFrame[] = [];
  socket.on('data', (chunk: Buffer) => frames.push(...reader.push(chunk)));
  socket.on('error', () => {});
  const hungUp = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  return { socket, frames, hungUp };
}

test('on the shared socket, a broken client stream drops that client, not the daemon', HANG_GUARD, async () => {
  await using daemon = await SocketDaemon.start();
  const bystander = await daemon.connect();
  const broken = rawSocketClient(daemon.socket);
  broken.socket.write(`${initialize}Content-Length: -1\r\n\r\n${nextRequest}`);
  await broken.hungUp;
  assert.ok(broken.frames.some((reply) => reply.id === 1 && reply.result !== undefined), 'the request before the break was answered');
  assert.ok(!broken.frames.some((reply) => reply.id === 2));
  const dropped = await daemon.logged((line) => line.includes('client dropped'));
  assert.match(dropped, /"level":"warn".*not a whole number of bytes: \\"-1\\"/);
  const tree = createTempTree({ 'a.txt': 'a\n' });
  try {
    const workspace = await bystander.openWorkspace(tree.root);
    assert.equal((await workspace.read('a.txt')).content, 'a\n');
    const another = rawSocketClient(daemon.socket);
    another.socket.write(initialize);
    while (!another.frames.some((reply) => reply.id === 1)) await new Promise((resolve) => another.socket.once('data', resolve));
    another.socket.end();
  } finally {
    tree[Symbol.dispose]();
  }
  assert.ok(!logRecords(daemon.stderr).some((record) => record.level === 'error'), daemon.stderr);
});

/** `$/` notifications vscode-jsonrpc reads itself, with params it cannot use (a cancel with no id used to kill the daemon). */
const UNUSABLE_NOTIFICATIONS: readonly object[] = [
  ...[{}, { id: null }, [], [1, 2], { id: {} }, { id: true }, null, 'x'].map((params) => ({ jsonrpc: '2.0', method: '$/cancelRequest', params })),
  { jsonrpc: '2.0', method: '$/cancelRequest' },
  ...[null, [], [1], { value: 1 }].map((params) => ({ jsonrpc: '2.0', method: '$/progress', params })),
  { jsonrpc: '2.0', method: '$/progress' },
  { jsonrpc: '2.0', method: '$/logTrace', params: [] },
];
const framed = (messages: readonly object[]): string => messages.map((message) => frame(JSON.stringify(message))).join('');

test('a $/ notification with unusable params is ignored without a reply, logged once; the request before it and after it are answered', HANG_GUARD, async () => {
  await using daemon = new RawDaemon();
  // All in one write: the good requests on either side are read in the same turn as the bad notifications.
  daemon.write(`${initialize}${framed(UNUSABLE_NOTIFICATIONS)}${nextRequest}`);
  await daemon.waitFor((reply) => reply.id === 2 && reply.result !== undefined);
  assert.ok(daemon.frames.some((reply) => reply.id === 1 && reply.result !== undefined));
  const later = await daemon.request(3, 'initialize', {});
  assert.ok(later.result !== undefined, 'still serving');
  assert.equal(daemon.frames.length, 3, `no reply to any notification: ${JSON.stringify(daemon.frames)}`);
  daemon.child.stdin.end();
  assert.equal((await daemon.exited).code, 0, daemon.stderr);
  const records = logRecords(daemon.stderr);
  assert.equal(records.filter((record) => record.level === 'warn' && /ignored a notification/.test(record.msg)).length, 1, daemon.stderr);
  assert.ok(!records.some((record) => record.level === 'error'), daemon.stderr);
});

test('on the shared socket, a cancel with no id from one client neither drops the daemon nor its other clients', HANG_GUARD, async () => {
  await using daemon = await SocketDaemon.start();
  const bystander = await daemon.connect();
  const culprit = rawSocketClient(daemon.socket);
  culprit.socket.write(`${initialize}${framed(UNUSABLE_NOTIFICATIONS)}${nextRequest}`);
  while (!culprit.frames.some((reply) => reply.id === 2)) await new Promise((resolve) => culprit.socket.once('data', resolve));
  assert.deepEqual(culprit.frames.map((reply) => reply.id), [1, 2], 'the culprit is still served, and its notifications got no reply');
  const tree = createTempTree({ 'a.txt': 'a\n' });
  try {
    const workspace = await bystander.openWorkspace(tree.root);
    assert.equal((await workspace.read('a.txt')).content, 'a\n');
  } finally {
    tree[Symbol.dispose]();
  }
  culprit.socket.end();
  assert.equal(daemon.child.exitCode, null, 'the daemon still runs');
  assert.ok(!logRecords(daemon.stderr).some((record) => record.level === 'error'), daemon.stderr);
});

describe('request ids', () => {
  const isResponse = (id: string | number) => (reply: JsonRpcFrame) => reply.id === id && reply.method === undefined;

  test('a request reusing the id of one in flight gets -32600 at once (9 and "9" are one id to vscode-jsonrpc); the first runs and answers, then the id is free', HANG_GUARD, async () => {
    const tree = createTempTree({ 'a.txt': 'a\n' });
    await using daemon = new RawDaemon();
    try {
      await daemon.request(1, 'initialize', {});
      const opened = await daemon.request(2, 'workspace/open', { root: tree.root, options: { approval: 'always' } });
      const { workspaceId } = opened.result as { workspaceId: string };
      // Held in flight, deterministically, until the test answers the daemon's patch/approve.
      daemon.send({ jsonrpc: '2.0', id: 9, method: 'patch/apply', params: { workspaceId, patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n' } });
      const ask = await daemon.waitFor((frame) => frame.method === 'patch/approve');
      daemon.send({ jsonrpc: '2.0', id: '9', method: 'initialize', params: {} });
      daemon.send({ jsonrpc: '2.0', id: 9, method: 'workspace/close', params: { workspaceId } });
      for (const id of ['9', 9]) {
        const refused = await daemon.waitFor(isResponse(id));
        assert.equal(refused.error?.code, -32600, JSON.stringify(refused));
        assert.match(refused.error?.message ?? '', /already in use by a request in flight/);
      }
      daemon.send({ jsonrpc: '2.0', id: ask.id, result: { approved: true } });
      const applied = await daemon.waitFor((reply) => isResponse(9)(reply) && reply.result !== undefined);
      assert.equal((applied.result as { status: string }).status, 'applied');
      assert.equal(readFileSync(join(tree.root, 'a.txt'), 'utf8'), 'b\n');
      daemon.send({ jsonrpc: '2.0', id: '9', method: 'file/read', params: { workspaceId, path: 'a.txt' } });
      const reused = await daemon.waitFor((reply) => isResponse('9')(reply) && reply.error === undefined);
      assert.equal((reused.result as { content: string }).content, 'b\n', 'the id is free once answered');
      assert.equal(daemon.frames.filter((reply) => isResponse(9)(reply)).length, 2, 'one refusal and one receipt for id 9');
    } finally {
      tree[Symbol.dispose]();
    }
  });

  test('shutdown then initialize with the same id, in one write: shutdown runs, the second is refused, both answered', HANG_GUARD, async () => {
    await using daemon = new RawDaemon();
    await daemon.request(1, 'initialize', {});
    daemon.write(framed([{ jsonrpc: '2.0', id: 20, method: 'shutdown' }, { jsonrpc: '2.0', id: 20, method: 'initialize', params: {} }]));
    const refused = await daemon.waitFor((reply) => isResponse(20)(reply) && reply.error !== undefined);
    assert.equal(refused.error?.code, -32600);
    const shutdown = await daemon.waitFor((reply) => isResponse(20)(reply) && reply.error === undefined);
    assert.equal(shutdown.result, null);
    const after = await daemon.request(21, 'initialize', {});
    assert.equal(after.error?.data?.code, 'shutting_down', 'shutdown did run');
    daemon.send({ jsonrpc: '2.0', method: 'exit' });
    assert.equal((await daemon.exited).code, 0, daemon.stderr);
  });
});
