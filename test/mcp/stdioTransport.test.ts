/** The MCP stdio transport: lines split anywhere, messages answered in order, and input it cannot take skipped and answered, the transport going on. */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { requestIdOf, StdioTransport } from '../../daemon/mcp/stdioTransport.ts';

interface Harness {
  readonly input: PassThrough;
  readonly received: JSONRPCMessage[];
  readonly errors: string[];
  /** Every line the transport wrote, parsed. */
  readonly written: () => unknown[];
  readonly transport: StdioTransport;
}

async function harness(maxLineBytes?: number): Promise<Harness> {
  const input = new PassThrough();
  const output = new PassThrough();
  let out = '';
  output.setEncoding('utf8').on('data', (text: string) => (out += text));
  const transport = new StdioTransport(input, output, maxLineBytes === undefined ? {} : { maxLineBytes });
  const received: JSONRPCMessage[] = [];
  const errors: string[] = [];
  transport.onmessage = (message) => received.push(message);
  transport.onerror = (error) => errors.push(error.message);
  await transport.start();
  return { input, received, errors, transport, written: () => out.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as unknown) };
}

const request = (id: number | string, extra = ''): string => `{"method":"tools/call","params":{"name":"apply_patch","arguments":{"patch":"${extra}"}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
const settle = () => new Promise((resolve) => setImmediate(resolve));

test('messages split across chunks, several in one chunk, and CRLF line ends are all read, in order', async () => {
  const { input, received, errors } = await harness();
  const both = `${request(1)}\n${request(2)}\r\n`;
  for (let at = 0; at < both.length; at += 7) input.write(both.slice(at, at + 7));
  input.write(`${request(3)}\n\n${request('four')}\n`);
  await settle();
  assert.deepEqual(received.map((message) => (message as { id: unknown }).id), [1, 2, 3, 'four']);
  assert.deepEqual(errors, []);
});

test('a line over the limit is skipped, answered with its id (SDK order: id last), and the next message is read', async () => {
  const { input, received, errors, written } = await harness(1000);
  const oversized = request(41, 'x'.repeat(5000));
  for (let at = 0; at < oversized.length; at += 300) input.write(oversized.slice(at, at + 300));
  input.write(`\n${request(42)}\n`);
  await settle();
  assert.deepEqual(received.map((message) => (message as { id: unknown }).id), [42]);
  const [answer] = written() as { id: unknown; error: { code: number; message: string } }[];
  assert.equal(answer?.id, 41);
  assert.equal(answer?.error.code, -32600);
  assert.match(answer?.error.message ?? '', /^limit_exceeded: the request is 5104 bytes, over the 1000 bytes this server reads in one message/);
  assert.equal(errors.length, 1);
});

test('an oversized request whose id comes first is answered too; an oversized notification is only told', async () => {
  const { input, errors, written } = await harness(100);
  input.write(`{"jsonrpc":"2.0","id":"first","method":"tools/call","params":{"patch":"${'y'.repeat(500)}"}}\n`);
  input.write(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"${'z'.repeat(500)}"}}\n`);
  await settle();
  assert.deepEqual((written() as { id: unknown }[]).map((answer) => answer.id), ['first']);
  assert.equal(errors.length, 2);
  assert.match(errors[1]!, /no id found to answer/);
});

test('a line that is not JSON is answered with a parse error (id null); valid JSON that is no message, with its id', async () => {
  const { input, received, errors, written } = await harness();
  input.write('this is not json\n{"jsonrpc":"1.0","id":9}\n');
  input.write(`${request(10)}\n`);
  await settle();
  assert.deepEqual(received.map((message) => (message as { id: unknown }).id), [10]);
  assert.deepEqual((written() as { id: unknown; error: { code: number } }[]).map(({ id, error }) => [id, error.code]), [[null, -32700], [9, -32600]]);
  assert.equal(errors.length, 2);
});

test('close stops reading and tells onclose once', async () => {
  const { input, received, transport } = await harness();
  let closes = 0;
  transport.onclose = () => closes++;
  await transport.close();
  await transport.close();
  input.write(`${request(1)}\n`);
  await settle();
  assert.equal(closes, 1);
  assert.deepEqual(received, []);
});

test('requestIdOf reads a numeric or string id at the end or the start, and nothing from inside params', () => {
  assert.equal(requestIdOf('{"method":"x"', ',"jsonrpc":"2.0","id":12}'), 12);
  assert.equal(requestIdOf('{"method":"x"', '"jsonrpc":"2.0","id":"a\\"b"}\n'), 'a"b');
  assert.equal(requestIdOf('{"jsonrpc":"2.0","id":-3,"method":"x"', 'zzz"}}'), -3);
  assert.equal(requestIdOf('{"id":7,"method":"x"', 'zzz"}}'), 7);
  assert.equal(requestIdOf('{"method":"x","params":{"id":5', 'zzz"}}'), undefined);
});

test('an output error (the host gone: EPIPE) is told and closes the transport; a send waiting to drain settles, later ones reject', async () => {
  const input = new PassThrough();
  const output = new PassThrough({ highWaterMark: 16 });
  const transport = new StdioTransport(input, output);
  const errors: string[] = [];
  let closes = 0;
  transport.onerror = (error) => errors.push(error.message);
  transport.onclose = () => closes++;
  await transport.start();
  const waiting = transport.send({ jsonrpc: '2.0', id: 1, result: { text: 'x'.repeat(100) } });
  output.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
  await waiting;
  assert.deepEqual(errors, ['write EPIPE']);
  assert.equal(closes, 1);
  await assert.rejects(transport.send({ jsonrpc: '2.0', id: 2, result: {} }), /closed/);
});

interface Throttled {
  readonly input: PassThrough;
  /** Not read until `take` is called: what is written to it stays unsent. */
  readonly output: PassThrough;
  readonly transport: StdioTransport;
  /** Ids of the requests handed on, 'cancel' for a cancellation, in order. */
  readonly handedOn: (number | string)[];
  readonly backlog: boolean[];
  /** Starts reading the output; every line written so far and after, parsed. */
  readonly take: () => () => { id: unknown }[];
}

async function throttled(maxUnsentBytes: number, maxRunningRequests: number, answer?: (id: number | string) => JSONRPCMessage): Promise<Throttled> {
  const input = new PassThrough();
  const output = new PassThrough({ highWaterMark: 16 });
  const transport = new StdioTransport(input, output, { outputLimits: { maxUnsentBytes, maxRunningRequests } });
  const handedOn: (number | string)[] = [];
  const backlog: boolean[] = [];
  transport.onmessage = (message) => {
    if ('id' in message && 'method' in message) {
      handedOn.push(message.id);
      if (answer !== undefined) void transport.send(answer(message.id));
    } else if ('method' in message && message.method === 'notifications/cancelled') handedOn.push('cancel');
  };
  transport.onbacklog = (over) => backlog.push(over);
  await transport.start();
  const take = () => {
    let out = '';
    output.setEncoding('utf8').on('data', (text: string) => (out += text));
    return () => out.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { id: unknown });
  };
  return { input, output, transport, handedOn, backlog, take };
}

const lines = (ids: readonly number[]): string => ids.map((id) => `${request(id)}\n`).join('');
const cancel = (id: number): string => `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } })}\n`;
const answerOf = (bytes: number) => (id: number | string): JSONRPCMessage => ({ jsonrpc: '2.0', id, result: { text: 'x'.repeat(bytes) } });

test('answers over the unsent bound stop the reading of lines (the input paused where it stands); it goes on, in order and dropping nothing, once the host takes half', async () => {
  const { input, handedOn, backlog, take } = await throttled(1000, 100, answerOf(400));
  input.write(lines([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]));
  await settle();
  assert.deepEqual(handedOn, [1, 2, 3], 'the third answer crossed 1000 bytes unsent');
  assert.deepEqual(backlog, [true]);
  assert.equal(input.isPaused(), true);
  input.write(lines([11]));
  await settle();
  assert.deepEqual(handedOn, [1, 2, 3], 'nothing more while the host takes nothing');
  const written = take();
  await settle();
  assert.deepEqual(handedOn, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  assert.deepEqual(written().map((reply) => reply.id), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  assert.equal(backlog.at(-1), false);
  assert.equal(input.isPaused(), false);
});

test('answers within the bound keep lines read though the host takes none of them (a host that writes everything before it reads is not held)', async () => {
  const { input, output, handedOn, backlog } = await throttled(10_000, 2, answerOf(100));
  const ids = Array.from({ length: 40 }, (_, index) => index + 1);
  input.write(lines(ids));
  await settle();
  assert.deepEqual(handedOn, ids, 'a request gives its place back once its answer is written, not once it is taken');
  assert.ok(output.writableLength > 0, 'the output is backed up');
  assert.deepEqual(backlog, []);
  assert.equal(input.isPaused(), false);
});

test('at maxRunningRequests unanswered, the next request waits, and reading with it; an answer or a cancellation (which the SDK never answers) lets it in; an error this transport writes itself does not', async () => {
  const { input, transport, handedOn } = await throttled(1_000_000, 1);
  input.write(`${lines([1])}{"jsonrpc":"1.0","id":1}\n${lines([2])}${cancel(2)}${lines([3, 4])}`);
  await settle();
  assert.deepEqual(handedOn, [1], 'the error for the line that reused id 1 gave back no place');
  assert.equal(input.isPaused(), true);
  void transport.send({ jsonrpc: '2.0', id: 1, result: {} });
  await settle();
  assert.deepEqual(handedOn, [1, 2, 'cancel', 3], 'request 2 was cancelled: 3 took its place');
  void transport.send({ jsonrpc: '2.0', id: 3, result: {} });
  await settle();
  assert.deepEqual(handedOn, [1, 2, 'cancel', 3, 4]);
});

test('allAnswered waits for every request handed on, an id reused while its first request runs owed twice; a cancelled request (which the SDK never answers) is owed nothing', async () => {
  const { input, transport, handedOn } = await throttled(1_000_000, 10);
  input.write(`${lines([1, 1, 2])}${cancel(2)}${cancel(99)}`);
  await settle();
  assert.deepEqual(handedOn, [1, 1, 2, 'cancel', 'cancel']);
  let answered = false;
  void transport.allAnswered().then(() => (answered = true));
  void transport.send({ jsonrpc: '2.0', id: 1, result: {} });
  await settle();
  assert.equal(answered, false, 'the second request with id 1 is still owed');
  void transport.send({ jsonrpc: '2.0', id: 1, result: {} });
  await settle();
  assert.equal(answered, true);
});

test('input that ends while a request waits: inputEnded resolves once every line read was handed on, not before', async () => {
  const { input, transport, handedOn } = await throttled(1_000_000, 1);
  let ended = false;
  void transport.inputEnded.then(() => (ended = true));
  input.end(lines([1, 2, 3]));
  await settle();
  assert.deepEqual(handedOn, [1]);
  assert.equal(ended, false);
  void transport.send({ jsonrpc: '2.0', id: 1, result: {} });
  await settle();
  assert.equal(ended, false);
  void transport.send({ jsonrpc: '2.0', id: 2, result: {} });
  await settle();
  assert.deepEqual(handedOn, [1, 2, 3]);
  assert.equal(ended, true);
});

test('closing while a request waits hands nothing more on', async () => {
  const { input, transport, handedOn } = await throttled(1_000_000, 1);
  input.write(lines([1, 2]));
  await settle();
  await transport.close();
  await settle();
  assert.deepEqual(handedOn, [1]);
});
