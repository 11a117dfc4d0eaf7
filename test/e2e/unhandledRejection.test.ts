/**
 * A fault in the daemon is a bug: an unhandled rejection or an uncaught exception ends it with
 * exit 70 and one error line on stderr naming it (the stack inside that JSON line, never loose
 * lines) — never carrying on unaware, never Node's exit 1. A shared daemon takes its socket
 * file with it.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { INJECTED_EXCEPTION, INJECTED_REASON, REJECTING_DAEMON } from '../helpers/rejectingDaemon.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';

/** Every stderr line must be one JSON log record; returns the error-level ones. */
function errorLines(stderr: string): Record<string, unknown>[] {
  return stderr.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>).filter((record) => record.level === 'error');
}

test('an unhandled rejection ends the daemon with exit 70 and one log line saying what it was', async () => {
  await using daemon = new RawDaemon({}, REJECTING_DAEMON);
  assert.ok((await daemon.request(1, 'initialize', {})).result !== undefined, 'the daemon serves first');
  daemon.child.kill('SIGUSR2');
  const exit = await daemon.exited;
  assert.equal(exit.code, 70, daemon.stderr);
  const errors = errorLines(daemon.stderr);
  assert.equal(errors.length, 1, daemon.stderr);
  assert.match(String(errors[0]!.msg), /unhandled rejection \(a bug in patchd\)/);
  assert.equal(errors[0]!.error, INJECTED_REASON);
});

test('an uncaught exception ends the daemon with exit 70 and one log line, not exit 1 and a loose stack', async () => {
  await using daemon = new RawDaemon({ PATCHD_TEST_FAULT: 'throw' }, REJECTING_DAEMON);
  assert.ok((await daemon.request(1, 'initialize', {})).result !== undefined, 'the daemon serves first');
  daemon.child.kill('SIGUSR2');
  const exit = await daemon.exited;
  assert.equal(exit.code, 70, daemon.stderr);
  const errors = errorLines(daemon.stderr);
  assert.equal(errors.length, 1, daemon.stderr);
  assert.match(String(errors[0]!.msg), /uncaught exception \(a bug in patchd\)/);
  assert.equal(errors[0]!.error, INJECTED_EXCEPTION);
  assert.equal(errors[0]!.name, 'TypeError');
});

test('a shared daemon that faults exits 70 and removes its socket file', async () => {
  await using daemon = await SocketDaemon.start({ env: { PATCHD_TEST_FAULT: 'throw' }, entry: REJECTING_DAEMON });
  const client = await daemon.connect();
  assert.equal(client.serverInfo.name, 'patchd');
  assert.ok(existsSync(daemon.socket));
  daemon.child.kill('SIGUSR2');
  const exit = await daemon.exited;
  assert.equal(exit.code, 70, daemon.stderr);
  assert.equal(errorLines(daemon.stderr).length, 1, daemon.stderr);
  assert.ok(!existsSync(daemon.socket), 'the socket file is gone');
});
