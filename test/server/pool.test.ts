/** The engine pool on real worker threads: results as data, the time limit on running (not waiting), cancellation, one warm thread. */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { EnginePool, TaskCancelledError } from '../../daemon/pool/pool.ts';
import { RUNAWAY_MARKER, RUNAWAY_WORKER } from '../helpers/runawayWorker.ts';

const errors: unknown[] = [];
const pool = new EnginePool({ taskTimeoutMs: 2_000, idleTimeoutMs: 300, maxThreads: 2, workerFile: RUNAWAY_WORKER, onError: (error) => errors.push(error) });
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

test('the time limit counts running, not waiting: tasks queued behind runaways still succeed', async () => {
  // One thread, busy with a runaway for the whole limit: the patch queued behind it waits that long, then runs.
  const single = new EnginePool({ taskTimeoutMs: 1_000, maxThreads: 1, workerFile: RUNAWAY_WORKER, onError: (error) => errors.push(error) });
  try {
    const [runaway, queued] = await Promise.all([single.parse({ patch: RUNAWAY_MARKER }), single.parse({ patch: PATCH })]);
    assert.equal(runaway.ok ? 'ok' : runaway.error.code, 'timeout');
    assert.ok(queued.ok, queued.ok ? '' : queued.error.message);
  } finally {
    await single.close();
  }
});

test('the caller aborting is TaskCancelledError, not a timeout', async () => {
  await assert.rejects(pool.parse({ patch: RUNAWAY_MARKER }, AbortSignal.timeout(100)), TaskCancelledError);
  assert.ok((await pool.parse({ patch: PATCH })).ok);
});

test('an idle pool shrinks to one warm thread', async () => {
  await Promise.all([pool.parse({ patch: PATCH }), pool.parse({ patch: PATCH }), pool.parse({ patch: PATCH })]);
  while (pool.threadCount > 1) await sleep(100);
  await sleep(500);
  assert.equal(pool.threadCount, 1);
  assert.deepEqual(errors, []);
});
