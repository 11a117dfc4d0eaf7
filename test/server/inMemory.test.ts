/**
 * The server over in-memory stream pairs: two client sessions sharing one registry, with every
 * message on both wires checked against protocol/.
 */
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { after, test } from 'node:test';
import { PatchClient, RequestAbortedError, type FileReceipt } from '../../client/index.ts';
import { createRegistry } from '../../daemon/cli/runtime.ts';
import { serveConnection, type ServerConnection } from '../../daemon/server/connection.ts';
import { createLogger } from '../../daemon/server/logger.ts';
import { MessageChecker } from '../helpers/messageChecker.ts';
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const log = createLogger(new Writable({ write: (_chunk, _encoding, done) => done() }));
const registry = createRegistry({ taskTimeoutMs: 10_000, log, stateRoot: TEST_STATE_ROOT });
const checker = new MessageChecker();

interface Session {
  readonly client: PatchClient;
  readonly server: ServerConnection;
  /** Ends the client → server stream: a disconnect. */
  disconnect(): void;
  /** Whether the client sent a request of `method`. */
  requested(method: string): boolean;
}

async function connectSession(): Promise<Session> {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  checker.watchRequests(toServer);
  checker.watchResponses(toClient);
  let sent = '';
  toServer.on('data', (chunk: Buffer) => (sent += chunk.toString('utf8')));
  const server = serveConnection({ input: toServer, output: toClient, registry, log, onExit: () => {} });
  const client = await PatchClient.connect(toClient, toServer);
  return { client, server, disconnect: () => toServer.end(), requested: (method) => sent.includes(`"method":${JSON.stringify(method)}`) };
}

after(async () => {
  await registry.closeAll();
});

test('two sessions share a workspace; it lives until the last holder closes or disconnects', async () => {
  using tree = createTempTree({ 'a.txt': 'one\ntwo\n' });
  const alice = await connectSession();
  const bob = await connectSession();
  const aliceWorkspace = await alice.client.openWorkspace(tree.root);
  const bobWorkspace = await bob.client.openWorkspace(tree.root);
  assert.equal(aliceWorkspace.id, bobWorkspace.id);

  const files: FileReceipt[] = [];
  const receipt = await aliceWorkspace.apply('--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n', { onFile: (file) => files.push(file) });
  assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
  assert.deepEqual(files, receipt.files);
  assert.equal((await bobWorkspace.read('a.txt')).content, 'one\nthree\n');

  await aliceWorkspace.close();
  assert.equal((await bobWorkspace.read('a.txt')).content, 'one\nthree\n');
  assert.doesNotThrow(() => registry.get(bobWorkspace.id));

  bob.disconnect();
  await bob.server.closed;
  assert.throws(() => registry.get(bobWorkspace.id), { code: 'unknown_workspace' });
  await assert.rejects(bobWorkspace.read('a.txt'), { name: 'ConnectionClosedError' });

  await alice.client.close();
  alice.disconnect();
  await alice.server.closed;
});

test('rejections and dry runs over the in-memory wire; every message matched protocol/', async () => {
  using tree = createTempTree({ 'a.txt': 'one\n' });
  const session = await connectSession();
  await using workspace = await session.client.openWorkspace(tree.root);
  const rejected = await workspace.apply('--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-zero\n+three\n');
  assert.equal(rejected.error?.code, 'context_not_found');
  const dryRun = await workspace.apply('*** Begin Patch\n*** Add File: b/c.txt\n+hi\n*** End Patch\n', { dryRun: true, onFile: () => {} });
  assert.equal(dryRun.status, 'dry_run');
  await session.client.close();
  session.disconnect();
  await session.server.closed;
  assert.deepEqual(checker.problems, []);
  assert.ok(checker.checked > 10);
});

test('a call whose signal was aborted before it was made is refused without being sent (sent, it ran before its cancellation arrived, and wrote)', async () => {
  using tree = createTempTree({ 'a.txt': 'one\n' });
  const session = await connectSession();
  await using workspace = await session.client.openWorkspace(tree.root);
  const stop = new AbortController();
  stop.abort(new Error('the user pressed stop'));
  await assert.rejects(workspace.apply('--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n', { signal: stop.signal }), RequestAbortedError);
  // Requests are written in order: had the patch been sent, it was before this read.
  assert.equal((await workspace.read('a.txt')).content, 'one\n');
  assert.equal(session.requested('patch/apply'), false);
  await session.client.close();
  session.disconnect();
  await session.server.closed;
});
