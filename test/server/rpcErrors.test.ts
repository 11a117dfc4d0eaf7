/** How failures become JSON-RPC errors: a failed system call outside any patch is -32000 io_error, without the paths its message names. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RpcErrorCodes } from '../../protocol/index.ts';
import { createLogger } from '../../daemon/server/logger.ts';
import { toResponseError } from '../../daemon/server/rpcErrors.ts';

function silentLog() {
  const lines: string[] = [];
  const output = { write: (line: string) => lines.push(line) } as unknown as NodeJS.WritableStream;
  return { log: createLogger(output, 'debug'), lines };
}

test('a failed system call is -32000 io_error in plain words, with a hint and no absolute path; the log keeps the whole error', () => {
  const { log, lines } = silentLog();
  const failure = Object.assign(new Error("EMFILE: too many open files, open '/home/someone/.local/state/patchd/abc/history/x.record'"), {
    code: 'EMFILE', errno: -24, syscall: 'open', path: '/home/someone/.local/state/patchd/abc/history/x.record',
  });
  const error = toResponseError(failure, log);
  assert.equal(error.code, RpcErrorCodes.ServerSetup);
  assert.equal(error.message, 'A filesystem call (open) failed: EMFILE (too many open files in this process).');
  assert.equal(error.data?.code, 'io_error');
  assert.match(error.data?.hint ?? '', /nothing was changed/);
  assert.doesNotMatch(JSON.stringify(error.toJson()), /someone/);
  assert.match(lines.join(''), /filesystem error.*someone/s);
});

test('anything else unexpected stays -32603, its message kept off the wire', () => {
  const { log } = silentLog();
  const error = toResponseError(new TypeError('cannot read properties of undefined'), log);
  assert.equal(error.code, RpcErrorCodes.InternalError);
  assert.equal(error.message, 'Internal error in patchd; see the daemon log.');
});
