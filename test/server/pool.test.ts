/**
 * The engine pool: small work on the main thread, big work on real worker threads — results as
 * data either way, the time limit on running (not waiting), cancellation, a warm thread soon
 * after the start. The test worker spins on RUNAWAY_MARKER, so an input carrying it shows where it ran.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import type { FileSnapshot } from '../../daemon/engine/index.ts';
import { EnginePool, TaskCancelledError } from '../../daemon/pool/pool.ts';
import { PARSED_ON_A_WORKER, PLANNED_ON_A_WORKER, RUNAWAY_MARKER, RUNAWAY_PATCH, RUNAWAY_WORKER, runawayFile } from '../helpers/runawayWorker.ts';

const errors: unknown[] = [];
const pool = new EnginePool({ taskTimeoutMs: 2_000, idleTimeoutMs: 300, maxThreads: 2, workerFile: RUNAWAY_WORKER, onError: (error) => errors.push(error) });
after(() => pool.close());

const PATCH = '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n';
/** The same change, in a patch too long to parse on the main thread (text after the last hunk is ignored). */
const BIG_PATCH = `${PATCH}${PARSED_ON_A_WORKER}`;
const fileOf = (text: string): ReadonlyMap<string, FileSnapshot> => new Map([['a.txt', { kind: 'file', bytes: new TextEncoder().encode(text) }]]);

async function planned(patch: string, text: string, on: EnginePool = pool): Promise<string> {
  const parsed = await on.parse({ patch });
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error.message);
  assert.deepEqual(parsed.value.paths, ['a.txt']);
  const plan = await on.plan(parsed.value.parsed, fileOf(text), {});
  assert.ok(plan.ok, plan.ok ? '' : plan.error.message);
  const after = plan.value.files[0]?.after;
  assert.ok(after instanceof Uint8Array);
  return new TextDecoder().decode(after);
}

test('a small patch on a small file is parsed and planned on the main thread (the worker would spin on the marker)', async () => {
  const marked = `--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n ${RUNAWAY_MARKER}\n-a\n+b\n`;
  assert.equal(await planned(marked, `${RUNAWAY_MARKER}\na\n`), `${RUNAWAY_MARKER}\nb\n`);
});

test('a patch too long for the main thread is parsed on a worker, and a file too big is planned on one; new bytes come back as a Uint8Array', async () => {
  assert.equal(await planned(BIG_PATCH, 'a\n'), 'b\n');
  assert.equal(await planned(PATCH, `a\n${PLANNED_ON_A_WORKER}`), `b\n${PLANNED_ON_A_WORKER}`);
});

test('a bad patch is an error value, not an exception, wherever it is parsed', async () => {
  assert.equal((await pool.parse({ patch: 'not a patch at all' })).ok, false);
  assert.equal((await pool.parse({ patch: `not a patch at all\n${PARSED_ON_A_WORKER}` })).ok, false);
});

test('a runaway parse on a worker becomes a timeout error and the pool keeps serving', async () => {
  const runaway = await pool.parse({ patch: RUNAWAY_PATCH });
  assert.ok(!runaway.ok);
  assert.equal(runaway.error.code, 'timeout');
  assert.ok((await pool.parse({ patch: BIG_PATCH })).ok);
});

test('a runaway plan on a worker becomes a timeout error', async () => {
  const parsed = await pool.parse({ patch: `--- a/a.txt\n+++ b/a.txt\n@@ -2 +2 @@\n-a\n+b\n` });
  assert.ok(parsed.ok);
  const plan = await pool.plan(parsed.value.parsed, fileOf(runawayFile('a\n')), {});
  assert.equal(plan.ok ? 'ok' : plan.error.code, 'timeout');
});

test('the time limit counts running, not waiting: tasks queued behind runaways still succeed', async () => {
  // One thread, busy with a runaway for the whole limit: the patch queued behind it waits that long, then runs.
  const single = new EnginePool({ taskTimeoutMs: 1_000, maxThreads: 1, workerFile: RUNAWAY_WORKER, onError: (error) => errors.push(error) });
  try {
    const [runaway, queued] = await Promise.all([single.parse({ patch: RUNAWAY_PATCH }), single.parse({ patch: BIG_PATCH })]);
    assert.equal(runaway.ok ? 'ok' : runaway.error.code, 'timeout');
    assert.ok(queued.ok, queued.ok ? '' : queued.error.message);
  } finally {
    await single.close();
  }
});

test('the caller aborting is TaskCancelledError, not a timeout', async () => {
  await assert.rejects(pool.parse({ patch: RUNAWAY_PATCH }, AbortSignal.timeout(100)), TaskCancelledError);
  assert.ok((await pool.parse({ patch: BIG_PATCH })).ok);
});

test('the warm thread starts by itself soon after the pool, not with it, and the threads end when it closes', async () => {
  const fresh = new EnginePool({ taskTimeoutMs: 1_000, warmDelayMs: 0, workerFile: RUNAWAY_WORKER, onError: (error) => errors.push(error) });
  assert.equal(fresh.threadCount, 0);
  // Timers fire in the order they fall due: the warm start's (1 ms) before this one, however loaded the machine.
  await sleep(20);
  assert.equal(fresh.threadCount, 1);
  await fresh.close();
  assert.equal(fresh.threadCount, 0);
});

test('a big task before the warm start boots the thread itself; a pool closed before it never starts one', async () => {
  const early = new EnginePool({ taskTimeoutMs: 10_000, warmDelayMs: 60_000, workerFile: RUNAWAY_WORKER, onError: (error) => errors.push(error) });
  try {
    assert.equal(await planned(BIG_PATCH, 'a\n', early), 'b\n');
    assert.equal(early.threadCount, 1);
  } finally {
    await early.close();
  }
  const unused = new EnginePool({ taskTimeoutMs: 1_000, warmDelayMs: 0, workerFile: RUNAWAY_WORKER, onError: (error) => errors.push(error) });
  await unused.close();
  await sleep(20);
  assert.equal(unused.threadCount, 0);
  await assert.rejects(unused.parse({ patch: BIG_PATCH }), /closed/);
});

test('an idle pool shrinks to its one warm thread', async () => {
  await Promise.all([pool.parse({ patch: BIG_PATCH }), pool.parse({ patch: BIG_PATCH }), pool.parse({ patch: BIG_PATCH })]);
  while (pool.threadCount > 1) await sleep(100);
  await sleep(500);
  assert.equal(pool.threadCount, 1);
  assert.deepEqual(errors, []);
});
