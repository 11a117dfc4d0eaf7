/**
 * Backpressure over an in-memory wire, with small limits: a client that stops reading gets only
 * a bounded number of its requests run and its input is read no more than `READ_AHEAD_BYTES`
 * ahead (none of it run) until it reads again — then every request is answered; a client that
 * reads as it goes is never stalled by it.
 */
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { after, test } from 'node:test';
import { PatchClient } from '../../client/index.ts';
import { createRegistry } from '../../daemon/cli/runtime.ts';
import { serveConnection } from '../../daemon/server/connection.ts';
import { createLogger } from '../../daemon/server/logger.ts';
import type { OutputLimits } from '../../daemon/server/outputThrottle.ts';
import { READ_AHEAD_BYTES } from '../../daemon/server/streamReader.ts';
import { FrameReader, type JsonRpcFrame } from '../helpers/frames.ts';
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import { createTempTree } from '../helpers/tempTree.ts';

/** Log records, kept for the test to count (`initialize` logs one as it starts). */
function recordingLog() {
  const records: { msg: string }[] = [];
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') records.push(JSON.parse(line) as { msg: string });
      done();
    },
  });
  return { log: createLogger(output, 'debug'), records, count: (msg: string) => records.filter((record) => record.msg === msg).length };
}

const log = createLogger(new Writable({ write: (_chunk, _encoding, done) => done() }), 'error');
const registry = createRegistry({ taskTimeoutMs: 10_000, log, stateRoot: TEST_STATE_ROOT });
after(() => registry.closeAll());

/** The client's end of the daemon's output: it takes each write at once while reading, and holds them (unacknowledged) while not. */
class ClientEnd extends Writable {
  readonly frames: JsonRpcFrame[] = [];
  readonly #reader = new FrameReader();
  #reading = false;
  #held: (() => void)[] = [];
  #wake: (() => void) | undefined;

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.frames.push(...this.#reader.push(chunk));
    this.#wake?.();
    if (this.#reading) done();
    else this.#held.push(() => done());
  }

  startReading(): void {
    this.#reading = true;
    for (const done of this.#held.splice(0)) done();
  }

  async waitForFrames(count: number): Promise<void> {
    while (this.frames.length < count) await new Promise<void>((resolve) => (this.#wake = resolve));
  }
}

const frame = (message: object): Buffer => {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
};

test('a client that stops reading: a bounded number of its requests run, its input is read a bounded way ahead and not run; once it reads, every request is answered', async () => {
  const limits: OutputLimits = { maxUnsentBytes: 4096, maxRunningRequests: 4 };
  const { log: recording, count } = recordingLog();
  const input = new PassThrough();
  const output = new ClientEnd();
  const connection = serveConnection({ input, output, registry, log: recording, onExit: () => {}, outputLimits: limits });
  const REQUESTS = 1000;
  // All in one write: every frame is read before any answer is written.
  input.write(Buffer.concat(Array.from({ length: REQUESTS }, (_, index) => frame({ jsonrpc: '2.0', id: index, method: 'initialize', params: {} }))));
  while (count('output backlog over the limit: reading paused') === 0) await new Promise((resolve) => setImmediate(resolve));
  // Turns of the event loop in which the daemon could go on, were it going to (initialize does no I/O): work done, not time.
  for (let turn = 0; turn < 200; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  const ran = count('initialize');
  const answerBytes = frame({ jsonrpc: '2.0', id: 999, result: { serverInfo: { name: 'patchd', version: '0.0.0' }, protocolVersion: 1, formats: [] } }).length;
  const bound = Math.ceil(limits.maxUnsentBytes / answerBytes) + limits.maxRunningRequests;
  assert.ok(ran <= bound, `${ran} requests ran while the client did not read (bound ${bound})`);
  assert.ok(ran > 0);

  // Requests written while it is paused, twice as many bytes as the read-ahead (JSON may end in blanks).
  const padded = (id: number): Buffer => {
    const body = Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params: {} })}${' '.repeat(64 * 1024)}`, 'utf8');
    return Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
  };
  const LATE = Math.ceil((2 * READ_AHEAD_BYTES) / padded(0).length);
  for (let index = 0; index < LATE; index += 1) input.write(padded(REQUESTS + index));
  for (let turn = 0; turn < 200; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(count('initialize'), ran, 'nothing read while paused is run');
  assert.equal(input.isPaused(), true, 'reading stopped once it had read ahead its bound');
  assert.ok(input.readableLength + input.writableLength > 0, 'the rest is left unread');

  output.startReading();
  await output.waitForFrames(REQUESTS + LATE);
  assert.deepEqual(output.frames.map((reply) => reply.id).sort((a, b) => Number(a) - Number(b)), Array.from({ length: REQUESTS + LATE }, (_, index) => index));
  assert.ok(output.frames.every((reply) => reply.result !== undefined));
  assert.equal(count('initialize'), REQUESTS + LATE);
  input.end();
  await connection.closed;
});

test('a client that reads as it goes, sending many requests whose answers keep crossing the limit, gets every answer (no deadlock)', async () => {
  using tree = createTempTree({ 'big.txt': `${'y'.repeat(99)}\n`.repeat(200) });
  const { log: recording, count } = recordingLog();
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  // Each answer (20 KB) alone is over the limit: reading pauses and resumes around every one.
  const server = serveConnection({ input: toServer, output: toClient, registry, log: recording, onExit: () => {}, outputLimits: { maxUnsentBytes: 16 * 1024, maxRunningRequests: 2 } });
  const client = await PatchClient.connect(toClient, toServer);
  try {
    const workspace = await client.openWorkspace(tree.root);
    const reads = await Promise.all(Array.from({ length: 200 }, () => workspace.read('big.txt')));
    assert.ok(reads.every((read) => read.content.length === 20_000));
    assert.ok(count('output backlog over the limit: reading paused') > 0, 'the limit was crossed');
    assert.equal(count('output backlog over the limit: reading paused'), count('output backlog taken: reading resumed'));
  } finally {
    await client.close();
    toServer.end();
    await server.closed;
  }
});
