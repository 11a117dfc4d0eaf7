/** The engine pool on real worker threads: results as data, the time limit, cancellation, shrinking to zero threads. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { EnginePool, TaskCancelledError } from '../../daemon/pool/pool.ts';
import { RUNAWAY_MARKER } from '../../daemon/pool/testHooks.ts';

process.env.PATCHD_TEST_RUNAWAY = '1';
const errors: unknown[] = [];
const pool = new EnginePool({ taskTimeoutMs: 1_000, idleTimeoutMs: 300, maxThreads: 2, onError: (error) => errors.push(error) });
after(() => pool.close());

const PATCH = '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n';

test('parse then plan; the new bytes come back as a Uint8Array', async () => {
  const parsed = await pool.parse({ patch: PATCH });
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.value.paths, ['a.txt']);
  const files = new Map([['a.txt', { kind: 'file' as const, bytes: new TextEncoder().encode('a\n') }]]);
  const plan = await pool.plan(parsed.value.parsed, files, {});
  assert.ok(plan.ok);
  const after = plan.value.files[0]?.after;
  assert.ok(after instanceof Uint8Array);
  assert.equal(new TextDecoder().decode(after), 'b\n');
});

test('a bad patch is an error value, not an exception', async () => {
  const parsed = await pool.parse({ patch: 'not a patch at all' });
  assert.equal(parsed.ok, false);
});

test('a runaway task becomes a timeout error and the pool keeps serving', async () => {
  const runaway = await pool.parse({ patch: RUNAWAY_MARKER });
  assert.ok(!runaway.ok);
  assert.equal(runaway.error.code, 'timeout');
  assert.ok((await pool.parse({ patch: PATCH })).ok);
});

test('the caller aborting is TaskCancelledError, not a timeout', async () => {
  await assert.rejects(pool.parse({ patch: RUNAWAY_MARKER }, AbortSignal.timeout(100)), TaskCancelledError);
  assert.ok((await pool.parse({ patch: PATCH })).ok);
});

test('an idle pool shrinks to zero threads', async () => {
  await pool.parse({ patch: PATCH });
  assert.ok(pool.threadCount > 0);
  const deadline = Date.now() + 5_000;
  while (pool.threadCount > 0 && Date.now() < deadline) await sleep(100);
  assert.equal(pool.threadCount, 0);
  assert.deepEqual(errors, []);
});
