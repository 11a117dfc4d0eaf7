/**
 * A client that closes its input and never reads its output, against the real daemon. With more
 * owed to it than a pipe holds (a large `file/read`, the receipts of a large patch), the daemon
 * waited for good on a pipe nobody drained, its workspace open. Now the output gets a grace period
 * (`OUTPUT_GRACE_MS`) once stdin has closed, then the daemon says in one warning what it left
 * unsent, closes the workspace in order (every commit durable, its undo record written, the commit
 * log checkpointed) and exits 0. On the shared socket, that client's connection is dropped.
 * Asserted: outcomes and their order. Time only guards against a hang.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { PatchClient } from '../../client/index.ts';
import { OUTPUT_LIMITS } from '../../daemon/server/outputThrottle.ts';
import { assertClosedInOrder } from '../helpers/closedInOrder.ts';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

/** Far beyond the grace period and any slow machine; only a daemon that never stops reaches it. */
const HANG_GUARD_MS = 60_000;
/** 1 MiB: far more than a pipe or a socket, and the reader's paused stream, hold between them, so no answer of it gets through whole. */
const BIG = `${'x'.repeat(1023)}\n`.repeat(1024);
const UNSENT_WARNING = 'output left unsent: the client closed its input and took none of its output for the grace period';

interface LogLine {
  readonly msg: string;
  readonly level: string;
  readonly [field: string]: unknown;
}

const frame = (message: object): Buffer => {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
};

const logLines = (stderr: string): LogLine[] => stderr.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as LogLine);

/** How the process exited; a daemon still running after the hang guard is killed (and the test then fails on its signal). */
function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  return new Promise((resolve) => {
    const guard = setTimeout(() => child.kill('SIGKILL'), HANG_GUARD_MS);
    child.once('exit', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal });
    });
  });
}

/** `file/read` requests the daemon has run, from its debug log (logged as each answer is handed to the output). */
const readsRun = (stderr: string): number => stderr.split('"msg":"request","method":"file/read"').length - 1;

/** Opens a workspace on `root`, then stops reading the daemon's stdout; returns the workspace id. */
async function openThenStopReading(daemon: RawDaemon, root: string): Promise<string> {
  const opened = await daemon.request(1, 'workspace/open', { root });
  daemon.child.stdout.pause();
  return (opened.result as { workspaceId: string }).workspaceId;
}

test('stdin closed, stdout never read, file/read answers larger than the pipe: the daemon warns what it left unsent and exits 0', { timeout: HANG_GUARD_MS * 2 }, async () => {
  using tree = createTempTree({ 'big.txt': BIG });
  await using daemon = new RawDaemon();
  const workspaceId = await openThenStopReading(daemon, tree.root);
  const ids = [10, 11, 12, 13];
  daemon.child.stdin.end(Buffer.concat(ids.map((id) => frame({ jsonrpc: '2.0', id, method: 'file/read', params: { workspaceId, path: 'big.txt' } }))));

  assert.deepEqual(await exitOf(daemon.child), { code: 0, signal: null }, daemon.stderr);
  const log = logLines(daemon.stderr);
  const warning = log.findIndex((line) => line.msg === UNSENT_WARNING);
  assert.ok(warning >= 0, daemon.stderr);
  const { level, unansweredIds, unansweredRequests, unsentFrames, unsentBytes } = log[warning]!;
  assert.equal(level, 'warn');
  assert.deepEqual(unansweredIds, ids.map(String));
  assert.equal(unansweredRequests, ids.length);
  assert.equal(unsentFrames, ids.length);
  assert.ok(typeof unsentBytes === 'number' && unsentBytes > (ids.length - 1) * BIG.length, `${String(unsentBytes)} bytes unsent`);
  const stopping = log.findIndex((line) => line.msg === 'stopping');
  assert.ok(stopping > warning, 'it stops after giving up on the output');
  assert.equal(log[stopping]!.reason, 'input closed');
  assertClosedInOrder(tree.root, 0);

  daemon.child.stdout.resume();
  await daemon.exited;
  assert.deepEqual(daemon.frames.filter((reply) => typeof reply.id === 'number' && reply.id >= 10), [], 'no answer was whole');
  assert.deepEqual(daemon.violations, []);
});

test('stdin closed, stdout never read, a patch whose receipts fill the pipe: both patches are committed and durable, the workspace closes in order, exit 0', { timeout: HANG_GUARD_MS * 2 }, async () => {
  using tree = createTempTree({ 'a.txt': 'a\n' });
  await using daemon = new RawDaemon();
  const workspaceId = await openThenStopReading(daemon, tree.root);
  const created = Array.from({ length: 200 }, (_, index) => `new${index}.txt`);
  const content = 'y'.repeat(2000);
  // Its 200 file receipts ($/progress, about 2 KiB each) are several pipes' worth, streamed before its answer.
  const many = { jsonrpc: '2.0', id: 10, method: 'patch/apply', params: { workspaceId, partialResultToken: 'p', operations: created.map((path) => ({ type: 'create_file', path, diff: `+${content}` })) } };
  const one = { jsonrpc: '2.0', id: 11, method: 'patch/apply', params: { workspaceId, patch: '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n' } };
  daemon.child.stdin.end(Buffer.concat([frame(many), frame(one)]));

  assert.deepEqual(await exitOf(daemon.child), { code: 0, signal: null }, daemon.stderr);
  const log = logLines(daemon.stderr);
  const warning = log.findIndex((line) => line.msg === UNSENT_WARNING);
  assert.ok(warning >= 0, daemon.stderr);
  assert.ok((log[warning]!.unansweredIds as string[]).includes('10'), 'the patch streaming receipts was never answered');
  assert.ok(log.findIndex((line) => line.msg === 'stopping') > warning);
  assert.equal(log.filter((line) => line.level === 'error').length, 0, daemon.stderr);

  for (const path of created) assert.equal(tree.text(path), content, path);
  assert.equal(tree.text('a.txt'), 'b\n');
  assertClosedInOrder(tree.root, 2);
  daemon.child.stdout.resume();
  await daemon.exited;

  // A new daemon finds nothing to recover, both transactions applied, and their undo records sound.
  await using client = await PatchClient.spawn();
  const workspace = await client.openWorkspace(tree.root);
  assert.deepEqual(workspace.recovered, []);
  const transactions = await workspace.transactions();
  assert.deepEqual(transactions.map((transaction) => transaction.status), ['applied', 'applied']);
  for (const { transactionId } of transactions) assert.equal((await workspace.undo(transactionId)).status, 'applied');
  assert.deepEqual(readdirSync(tree.root), ['a.txt']);
  assert.equal(tree.text('a.txt'), 'a\n');
});

test('stdin closed after the daemon stopped taking requests (16 MiB of answers unread): its end is still seen, what came after is not run, exit 0', { timeout: HANG_GUARD_MS * 2 }, async () => {
  using tree = createTempTree({ 'big.txt': BIG });
  await using daemon = new RawDaemon({ PATCHD_LOG_LEVEL: 'debug' });
  const workspaceId = await openThenStopReading(daemon, tree.root);
  const read = (id: number): Buffer => frame({ jsonrpc: '2.0', id, method: 'file/read', params: { workspaceId, path: 'big.txt' } });
  // Enough answers to go over the output limit.
  const reads = OUTPUT_LIMITS.maxUnsentBytes / BIG.length + 4;
  daemon.write(Buffer.concat(Array.from({ length: reads }, (_, index) => read(10 + index))));
  while (!daemon.stderr.includes('"msg":"output backlog over the limit: reading paused"')) await new Promise((resolve) => daemon.child.stderr.once('data', resolve));
  const late = [100, 101, 102, 103, 104];
  daemon.child.stdin.end(Buffer.concat(late.map(read)));

  assert.deepEqual(await exitOf(daemon.child), { code: 0, signal: null }, daemon.stderr);
  const log = logLines(daemon.stderr);
  const warning = log.find((line) => line.msg === UNSENT_WARNING);
  assert.ok(warning !== undefined, daemon.stderr);
  assert.ok((warning.inputBytesNotRun as number) >= late.length * read(0).length, `${String(warning.inputBytesNotRun)} bytes read ahead, not run`);
  assert.ok((warning.unansweredIds as string[]).every((id) => Number(id) < 100), 'the requests sent after the pause were never taken');
  assert.ok(readsRun(daemon.stderr) <= reads);
  assertClosedInOrder(tree.root, 0);
});

test('exit sent with answers still unread: the workspace is closed, then the daemon warns what it left unsent and exits 0', { timeout: HANG_GUARD_MS * 2 }, async () => {
  using tree = createTempTree({ 'big.txt': BIG });
  await using daemon = new RawDaemon({ PATCHD_LOG_LEVEL: 'debug' });
  const workspaceId = await openThenStopReading(daemon, tree.root);
  const ids = [10, 11, 12, 13];
  for (const id of ids) daemon.send({ jsonrpc: '2.0', id, method: 'file/read', params: { workspaceId, path: 'big.txt' } });
  while (readsRun(daemon.stderr) < ids.length) await new Promise((resolve) => daemon.child.stderr.once('data', resolve));
  daemon.send({ jsonrpc: '2.0', method: 'exit' });

  assert.deepEqual(await exitOf(daemon.child), { code: 0, signal: null }, daemon.stderr);
  const log = logLines(daemon.stderr);
  const stopping = log.findIndex((line) => line.msg === 'stopping');
  assert.equal(log[stopping]?.reason, 'exit notification');
  const warning = log.findIndex((line) => line.msg === 'output left unsent: exiting without the client having taken it');
  assert.ok(warning > stopping, daemon.stderr);
  assert.equal(log[warning]!.unsentFrames, ids.length);
  assertClosedInOrder(tree.root, 0);
});

test('on the shared socket: a client that ends its side with answers still unread is dropped after the grace; the daemon serves on', { timeout: HANG_GUARD_MS * 2 }, async () => {
  using tree = createTempTree({ 'big.txt': BIG, 'a.txt': 'a\n' });
  await using daemon = await SocketDaemon.start({ env: { PATCHD_LOG_LEVEL: 'debug' } });
  const bystander = await daemon.connect();
  const workspace = await bystander.openWorkspace(tree.root);

  const stalled = await daemon.connectUnread();
  const dropped = new Promise((resolve) => stalled.once('close', resolve));
  const ids = [20, 21, 22, 23];
  stalled.write(Buffer.concat(ids.map((id) => frame({ jsonrpc: '2.0', id, method: 'file/read', params: { workspaceId: workspace.id, path: 'big.txt' } }))));
  // Logged as each read's answer is handed to the socket: the client ends its side only once all four wait for it.
  while (readsRun(daemon.stderr) < ids.length) await new Promise((resolve) => daemon.child.stderr.once('data', resolve));
  stalled.end();
  const warning = JSON.parse(await daemon.logged((line) => line.includes(UNSENT_WARNING))) as LogLine;
  assert.deepEqual(warning.unansweredIds, ids.map(String));
  // What the socket held still comes, then the end of the connection the daemon closed.
  stalled.resume();
  await dropped;
  assert.equal((await workspace.read('a.txt')).content, 'a\n');
});
