/** A daemon patchd spawns starts with a larger libuv threadpool (it cannot raise its own), unless the caller's environment sets one. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { platform } from 'node:os';
import test from 'node:test';
import { PatchClient } from '../../client/index.ts';
import { DAEMON_THREADPOOL_SIZE, daemonEnvironment } from '../../client/daemonProcess.ts';

test('the caller\'s own UV_THREADPOOL_SIZE wins; otherwise the daemon gets patchd\'s', () => {
  assert.equal(daemonEnvironment({ PATH: '/bin' }).UV_THREADPOOL_SIZE, DAEMON_THREADPOOL_SIZE);
  assert.equal(daemonEnvironment({ UV_THREADPOOL_SIZE: '7' }).UV_THREADPOOL_SIZE, '7');
});

test('a spawned daemon runs with it', { skip: platform() !== 'linux' && 'reads /proc' }, async () => {
  await using client = await PatchClient.spawn({ env: { ...process.env, UV_THREADPOOL_SIZE: undefined } });
  const environ = readFileSync(`/proc/${client.pid}/environ`, 'utf8').split('\0');
  assert.ok(environ.includes(`UV_THREADPOOL_SIZE=${DAEMON_THREADPOOL_SIZE}`), environ.filter((entry) => entry.startsWith('UV_')).join());
});
