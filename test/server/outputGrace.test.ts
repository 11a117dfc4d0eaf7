/** The grace a client's output gets once its input has ended: counted from the last frame taken, never before the end, never with nothing owed. */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import { OutputGrace } from '../../daemon/server/outputGrace.ts';

const GRACE_MS = 1_000;

function watched(t: TestContext): { grace: OutputGrace; expired: () => number } {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  let expiries = 0;
  return { grace: new OutputGrace(GRACE_MS, () => (expiries += 1)), expired: () => expiries };
}

test('while the input is open, output left untaken never runs out of grace', (t) => {
  const { grace, expired } = watched(t);
  grace.queued(100);
  t.mock.timers.tick(GRACE_MS * 100);
  assert.equal(expired(), 0);
});

test('once the input has ended, output left untaken runs out of grace once, graceMs later', (t) => {
  const { grace, expired } = watched(t);
  grace.queued(100);
  grace.inputEnded();
  t.mock.timers.tick(GRACE_MS - 1);
  assert.equal(expired(), 0);
  t.mock.timers.tick(1);
  assert.equal(expired(), 1);
  grace.queued(100);
  t.mock.timers.tick(GRACE_MS * 10);
  assert.equal(expired(), 1, 'given up once');
});

test('each frame taken starts the grace afresh: a client that keeps reading is never given up on', (t) => {
  const { grace, expired } = watched(t);
  grace.inputEnded();
  grace.queued(300);
  for (let frame = 0; frame < 2; frame += 1) {
    t.mock.timers.tick(GRACE_MS - 1);
    grace.flushed(100);
  }
  assert.equal(expired(), 0);
  t.mock.timers.tick(GRACE_MS);
  assert.equal(expired(), 1, 'the last frame stayed untaken');
});

test('with nothing owed there is no grace to run out, until output is written again', (t) => {
  const { grace, expired } = watched(t);
  grace.queued(100);
  grace.inputEnded();
  grace.flushed(100);
  t.mock.timers.tick(GRACE_MS * 10);
  assert.equal(expired(), 0, 'a request still working, with nothing to send, is not cut off');
  grace.queued(50);
  t.mock.timers.tick(GRACE_MS);
  assert.equal(expired(), 1);
});

test('once the session is over the grace is stopped', (t) => {
  const { grace, expired } = watched(t);
  grace.queued(100);
  grace.inputEnded();
  grace.stop();
  grace.queued(100);
  t.mock.timers.tick(GRACE_MS * 10);
  assert.equal(expired(), 0);
});
