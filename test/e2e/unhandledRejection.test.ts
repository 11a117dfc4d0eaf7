/** An unhandled rejection in the daemon is a bug: one error line on stderr naming it, and exit 70 — never carrying on unaware. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { INJECTED_REASON, REJECTING_DAEMON } from '../helpers/rejectingDaemon.ts';

test('an unhandled rejection ends the daemon with exit 70 and one log line saying what it was', async () => {
  await using daemon = new RawDaemon({}, REJECTING_DAEMON);
  assert.ok((await daemon.request(1, 'initialize', {})).result !== undefined, 'the daemon serves first');
  daemon.child.kill('SIGUSR2');
  const exit = await daemon.exited;
  assert.equal(exit.code, 70, daemon.stderr);
  const errors = daemon.stderr.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>).filter((record) => record.level === 'error');
  assert.equal(errors.length, 1, daemon.stderr);
  assert.match(String(errors[0]!.msg), /unhandled rejection \(a bug in patchd\)/);
  assert.equal(errors[0]!.error, INJECTED_REASON);
});
