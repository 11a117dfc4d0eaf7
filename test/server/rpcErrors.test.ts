/**
 * How failures become JSON-RPC errors: a failed system call outside any patch is -32000 io_error,
 * without the paths its message names; what an error echoes of the request is cut short.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApplyParamsSchema, RpcErrorCodes } from '../../protocol/index.ts';
import { clip, MAX_ECHO_CHARS } from '../../daemon/server/echo.ts';
import { MethodNotFoundError } from '../../daemon/server/failures.ts';
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

test('invalid params echo what the client sent cut short: a 5,000-character key, unknown keys, a long method name', () => {
  const { log } = silentLog();
  const longKey = 'k'.repeat(5000);
  const badKey = ApplyParamsSchema.safeParse({ workspaceId: 'w', patch: 'p', expectedSha256ByPath: { [longKey]: '' } });
  assert.ok(!badKey.success);
  const keyError = toResponseError(badKey.error, log);
  assert.equal(keyError.code, RpcErrorCodes.InvalidParams);
  assert.ok(keyError.message.length < 300, keyError.message);
  assert.match(keyError.message, new RegExp(`^Invalid params: expectedSha256ByPath\\.k{${MAX_ECHO_CHARS}}…: `));
  assert.ok(JSON.stringify(keyError.toJson()).length < 600, 'data.issues is cut too');

  const unknown = ApplyParamsSchema.safeParse({ workspaceId: 'w', patch: 'p', ...Object.fromEntries(Array.from({ length: 300 }, (_, index) => [`${index}${'u'.repeat(5000)}`, 1])) });
  assert.ok(!unknown.success);
  const unknownError = toResponseError(unknown.error, log);
  assert.ok(JSON.stringify(unknownError.toJson()).length < 2000, unknownError.message.slice(0, 500));
  assert.match(unknownError.message, /^Invalid params: Unrecognized keys: "0u+…", "1u+…", "2u+…", "3u+…", "4u+…" and 295 more/);

  const typo = ApplyParamsSchema.safeParse({ workspaceId: 'w', patch: 'p', dryrun: true });
  assert.ok(!typo.success);
  assert.equal(toResponseError(typo.error, log).message, 'Invalid params: Unrecognized key: "dryrun"', 'a short key is told whole');

  const method = toResponseError(new MethodNotFoundError(`x/${'m'.repeat(1_000_000)}`), log);
  assert.equal(method.code, RpcErrorCodes.MethodNotFound);
  assert.ok(method.message.length < 120, method.message.slice(0, 200));
});

test('clip never cuts a surrogate pair in two', () => {
  const text = `${'a'.repeat(MAX_ECHO_CHARS - 1)}😀tail`;
  assert.equal(clip(text), `${'a'.repeat(MAX_ECHO_CHARS - 1)}…`);
  assert.equal(clip('short'), 'short');
});
