/** `mapLimited`: many calls, a bounded number at a time, results in order, and a failure stops new calls. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mapLimited } from '../../daemon/workspace/limited.ts';

/** A call that ends when told to; records how many run at once. */
function gate() {
  let running = 0;
  let most = 0;
  const waiting: (() => void)[] = [];
  const started: number[] = [];
  const work = async (item: number): Promise<number> => {
    started.push(item);
    most = Math.max(most, ++running);
    await new Promise<void>((resolve) => waiting.push(resolve));
    running -= 1;
    if (item === 13) throw new Error('thirteen');
    return item * 10;
  };
  return { work, started, most: () => most, release: () => waiting.splice(0).forEach((resolve) => resolve()) };
}

async function drain(calls: ReturnType<typeof gate>, until: Promise<unknown>): Promise<void> {
  let done = false;
  void until.then(() => (done = true), () => (done = true));
  while (!done) {
    calls.release();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test('runs every call, at most the limit at once, and returns the results in order', async () => {
  const calls = gate();
  const items = Array.from({ length: 10 }, (_, index) => index);
  const result = mapLimited(items, calls.work, 3);
  await drain(calls, result);
  assert.deepEqual(await result, items.map((item) => item * 10));
  assert.equal(calls.most(), 3);
});

test('after a failure no new call starts, and the failure is thrown once the running calls end', async () => {
  const calls = gate();
  const items = Array.from({ length: 40 }, (_, index) => index);
  const result = mapLimited(items, calls.work, 4);
  await drain(calls, result);
  await assert.rejects(result, /thirteen/);
  assert.ok(calls.started.length < 20, `stopped early: ${calls.started.length} started`);
});

test('no items, no calls', async () => {
  assert.deepEqual(await mapLimited([], async () => assert.fail('called')), []);
});
