/** Each message the daemon sends is one write of a whole frame: one system call and one wake-up of the client, not two. */
import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { test } from 'node:test';
import { serveConnection } from '../../daemon/server/connection.ts';
import { createLogger } from '../../daemon/server/logger.ts';
import { WorkspaceRegistry } from '../../daemon/server/registry.ts';

function frame(message: object): string {
  const body = JSON.stringify(message);
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

test('a response leaves as one write holding the whole frame', async () => {
  const input = new PassThrough();
  const writes: Buffer[] = [];
  let answered!: () => void;
  const done = new Promise<void>((resolve) => (answered = resolve));
  const output = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writes.push(chunk);
      answered();
      callback();
    },
  });
  const registry = new WorkspaceRegistry({
    openWorkspace: () => Promise.reject(new Error('not used')),
    createPool: () => assert.fail('not used'),
  });
  const connection = serveConnection({ input, output, registry, log: createLogger(new PassThrough(), 'error'), onExit: () => {} });
  try {
    input.write(frame({ jsonrpc: '2.0', id: 1, method: 'no/suchMethod', params: {} }));
    await done;
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(writes.length, 1);
    const text = writes[0]!.toString('utf8');
    const match = /^Content-Length: (\d+)\r\n\r\n(.*)$/s.exec(text);
    assert.ok(match, text);
    assert.equal(Buffer.byteLength(match[2]!), Number(match[1]));
    const response = JSON.parse(match[2]!) as { id: number; error: { code: number } };
    assert.equal(response.id, 1);
    assert.equal(response.error.code, -32601);
  } finally {
    connection.dispose();
    input.end();
    await connection.closed;
  }
});
