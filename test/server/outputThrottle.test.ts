/** The per-connection throttle: at most N requests run, none starts while too much output is unsent, in arrival order. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OutputThrottle, type Release } from '../../daemon/server/outputThrottle.ts';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test('at most maxRunningRequests run at once; the others start in arrival order as places are given back', async () => {
  const throttle = new OutputThrottle({ maxUnsentBytes: 100, maxRunningRequests: 2 });
  const started: number[] = [];
  const releases: Release[] = [];
  for (let index = 0; index < 5; index += 1) {
    void throttle.acquire(new AbortController().signal).then((release) => {
      started.push(index);
      releases.push(release);
    });
  }
  await turn();
  assert.deepEqual(started, [0, 1]);
  releases[0]!();
  releases[0]!(); // a second call gives nothing more back
  await turn();
  assert.deepEqual(started, [0, 1, 2]);
  releases[1]!();
  releases[2]!();
  await turn();
  assert.deepEqual(started, [0, 1, 2, 3, 4]);
});

test('over the unsent limit nothing starts; it goes on once half of the output was taken', async () => {
  const throttle = new OutputThrottle({ maxUnsentBytes: 100, maxRunningRequests: 10 });
  const changes: boolean[] = [];
  throttle.onChange((over) => changes.push(over));
  throttle.queued(60);
  throttle.queued(60);
  assert.equal(throttle.over, true);
  let started = false;
  void throttle.acquire(new AbortController().signal).then(() => (started = true));
  await turn();
  assert.equal(started, false);
  throttle.flushed(60);
  await turn();
  assert.equal(started, false, '60 unsent is under the limit, but not yet half of it');
  throttle.flushed(10);
  await turn();
  assert.equal(started, true);
  assert.deepEqual(changes, [true, false]);
  assert.equal(throttle.unsentBytes, 50);
});

test('a request whose signal aborts while it waits leaves the queue at once, taking no place', async () => {
  const throttle = new OutputThrottle({ maxUnsentBytes: 100, maxRunningRequests: 1 });
  const first = await throttle.acquire(new AbortController().signal);
  const cancelled = new AbortController();
  let waitedOut = false;
  const waiting = throttle.acquire(cancelled.signal).then((release) => {
    waitedOut = true;
    return release;
  });
  let third = false;
  void throttle.acquire(new AbortController().signal).then(() => (third = true));
  cancelled.abort();
  (await waiting)();
  assert.equal(waitedOut, true);
  await turn();
  assert.equal(third, false, 'the cancelled one took no place: the first still holds the only one');
  first();
  await turn();
  assert.equal(third, true);
});

test('tryAcquire gives a place at once only when one is free and nobody waits before it', async () => {
  const throttle = new OutputThrottle({ maxUnsentBytes: 100, maxRunningRequests: 1 });
  const first = throttle.tryAcquire();
  assert.ok(first !== undefined);
  assert.equal(throttle.tryAcquire(), undefined, 'the only place is taken');
  let waiterStarted = false;
  void throttle.acquire(new AbortController().signal).then(() => (waiterStarted = true));
  first();
  assert.equal(throttle.tryAcquire(), undefined, 'the place went to the one waiting');
  await turn();
  assert.equal(waiterStarted, true);
  throttle.queued(101);
  assert.equal(throttle.tryAcquire(), undefined, 'over the unsent limit');
});
