/**
 * A client that stops reading its answers, against the real daemon: the daemon stops reading
 * that client's requests and runs only a bounded number of them (counted from its debug log:
 * work done, not time), serves its other clients meanwhile, and answers every request once the
 * client reads again. On the shared socket and on stdio.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OUTPUT_LIMITS } from '../../daemon/server/outputThrottle.ts';
import { FrameReader, type JsonRpcFrame } from '../helpers/frames.ts';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const MIB = 1024 * 1024;
const BIG = `${'x'.repeat(1023)}\n`.repeat(1024); // 1 MiB
const REQUESTS = 150;
/** Requests that may run while nobody reads: a full set of running ones, and answers up to the limit (each over 1 MiB). */
const BOUND = OUTPUT_LIMITS.maxRunningRequests + Math.ceil(OUTPUT_LIMITS.maxUnsentBytes / MIB) + 1;
const HANG_GUARD = { timeout: 300_000 };

const frame = (message: object): Buffer => {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
};
const reads = (workspaceId: string): Buffer =>
  Buffer.concat(Array.from({ length: REQUESTS }, (_, index) => frame({ jsonrpc: '2.0', id: 1000 + index, method: 'file/read', params: { workspaceId, path: 'big.txt' } })));
/** `file/read` requests the daemon has run, from its debug log. */
const readsRun = (stderr: string): number => stderr.split('\n').filter((line) => line.includes('"msg":"request","method":"file/read"')).length;
const PAUSED = '"msg":"output backlog over the limit: reading paused"';

function assertAllAnswered(frames: readonly JsonRpcFrame[]): void {
  const answers = frames.filter((reply) => typeof reply.id === 'number' && reply.id >= 1000);
  assert.equal(answers.length, REQUESTS);
  assert.ok(answers.every((reply) => (reply.result as { content?: string } | undefined)?.content === BIG), 'every answer whole');
}

test('on the shared socket: a client that stops reading is paused after a bounded number of requests, others are served, and it gets every answer once it reads', HANG_GUARD, async () => {
  using tree = createTempTree({ 'big.txt': BIG, 'a.txt': 'a\n' });
  await using daemon = await SocketDaemon.start({ env: { PATCHD_LOG_LEVEL: 'debug' } });
  const bystander = await daemon.connect();
  const workspace = await bystander.openWorkspace(tree.root);

  const stalled = await daemon.connectUnread();
  stalled.write(reads(workspace.id));
  await daemon.logged((line) => line.includes(PAUSED));
  // Round trips of another client: the daemon's loop turns, and would run more of the stalled client's reads if it were going to.
  for (let round = 0; round < 10; round += 1) assert.equal((await workspace.read('a.txt')).content, 'a\n');
  const ran = readsRun(daemon.stderr) - 10;
  assert.ok(ran <= BOUND, `${ran} of ${REQUESTS} reads ran while the client did not read (bound ${BOUND})`);

  const reader = new FrameReader();
  const frames: JsonRpcFrame[] = [];
  stalled.on('data', (chunk: Buffer) => frames.push(...reader.push(chunk)));
  stalled.resume();
  while (frames.length < REQUESTS) await new Promise((resolve) => stalled.once('data', resolve));
  assertAllAnswered(frames);
  stalled.end();
});

test('on stdio: a parent that stops reading stdout pauses the daemon\'s reading, and gets every answer once it reads', HANG_GUARD, async () => {
  using tree = createTempTree({ 'big.txt': BIG });
  await using daemon = new RawDaemon({ PATCHD_LOG_LEVEL: 'debug' });
  const opened = await daemon.request(1, 'workspace/open', { root: tree.root });
  const { workspaceId } = opened.result as { workspaceId: string };
  daemon.child.stdout.pause();
  daemon.write(reads(workspaceId));
  while (!daemon.stderr.includes(PAUSED)) await new Promise((resolve) => daemon.child.stderr.once('data', resolve));
  const ran = readsRun(daemon.stderr);
  assert.ok(ran <= BOUND, `${ran} of ${REQUESTS} reads ran while stdout was not read (bound ${BOUND})`);
  daemon.child.stdout.resume();
  await daemon.waitFor(() => daemon.frames.filter((reply) => typeof reply.id === 'number' && reply.id >= 1000).length === REQUESTS);
  assertAllAnswered(daemon.frames);
  daemon.child.stdin.end();
  assert.equal((await daemon.exited).code, 0, daemon.stderr.slice(-2000));
});
