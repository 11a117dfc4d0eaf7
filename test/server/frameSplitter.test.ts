/** The frame splitter: frames split across any chunks come out whole; an unreadable header is fatal at once. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BrokenStreamError, FRAME_LIMITS, FrameSplitter } from '../../daemon/server/frameSplitter.ts';

const frame = (body: string, header = `Content-Length: ${Buffer.byteLength(body)}`): Buffer => Buffer.from(`${header}\r\n\r\n${body}`);

function split(input: Buffer, chunkBytes: number): string[] {
  const splitter = new FrameSplitter();
  const bodies: string[] = [];
  for (let at = 0; at < input.length; at += chunkBytes) {
    splitter.append(input.subarray(at, at + chunkBytes));
    for (let body = splitter.next(); body !== undefined; body = splitter.next()) bodies.push(body.toString('utf8'));
  }
  assert.equal(splitter.midFrame, false);
  return bodies;
}

test('frames come out whole however the bytes are chunked, with any header case, extra headers and empty bodies', () => {
  const input = Buffer.concat([
    frame('{"a":1}'),
    frame('{"é":"ü"}', 'content-length: 11\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8'),
    frame(''),
    frame('[]', 'Content-Length:2'),
  ]);
  for (const chunkBytes of [1, 2, 3, 7, 64, input.length]) {
    assert.deepEqual(split(input, chunkBytes), ['{"a":1}', '{"é":"ü"}', '', '[]'], `chunks of ${chunkBytes}`);
  }
});

test('a header is read only to its bound, and a body only once it is whole', () => {
  const splitter = new FrameSplitter();
  splitter.append(Buffer.from(`X: ${'a'.repeat(FRAME_LIMITS.maxHeaderBytes - 3)}`));
  assert.equal(splitter.next(), undefined, 'a header of exactly the bound may still end');
  splitter.append(Buffer.from('a'));
  assert.throws(() => splitter.next(), BrokenStreamError);

  const waiting = new FrameSplitter();
  waiting.append(Buffer.from(`Content-Length: ${FRAME_LIMITS.maxBodyBytes}\r\n\r\n{`));
  assert.equal(waiting.next(), undefined);
  assert.equal(waiting.midFrame, true);
});

test('each unreadable header is a BrokenStreamError naming what is wrong', () => {
  const cases: [string, RegExp][] = [
    ['Content-Type: x', /no Content-Length/],
    ['Content-Length: -1', /not a whole number of bytes: "-1"/],
    ['Content-Length: 1.5', /not a whole number/],
    ['Content-Length: ', /not a whole number/],
    ['Content-Length: 1\r\ngarbage', /not "Name: value": "garbage"/],
    ['Content-Length: 1\r\nContent-Length: 1', /two Content-Length/],
    ['Content-Length: 1\r\nX-Name: caf\u00e9', /not "Name: value"/],
    ['', /not "Name: value": ""/],
    [`Content-Length: ${FRAME_LIMITS.maxBodyBytes + 1}`, /exceeds the limit/],
  ];
  for (const [header, reason] of cases) {
    const splitter = new FrameSplitter();
    splitter.append(Buffer.from(`${header}\r\n\r\n{}`, 'utf8'));
    assert.throws(() => splitter.next(), (error: unknown) => error instanceof BrokenStreamError && reason.test(error.message), header);
  }
});
