/** Settling: a record that could not be written after a commit's report is retried, once at a time, and the close waits for a retry under way. */
import assert from 'node:assert/strict';
import test from 'node:test';
import { RetryLater, Settling } from '../../daemon/workspace/settling.ts';

function settlingWithFailures() {
  const failures: unknown[] = [];
  const settling = new Settling(() => {}, (error) => void failures.push(error));
  return { settling, failures };
}

test('a settle that fails with RetryLater is retried before settled() resolves until its retry succeeds, and told once', async () => {
  const { settling, failures } = settlingWithFailures();
  let refusing = true;
  let calls = 0;
  const retry = async () => {
    calls += 1;
    if (refusing) throw new Error('ENOSPC');
  };
  settling.add(['a.txt'], Promise.reject(new RetryLater('record refused', retry)));
  await settling.settled();
  assert.equal(settling.retrying, 1);
  assert.equal(calls, 1);
  refusing = false;
  await settling.settled();
  assert.equal(settling.retrying, 0);
  assert.equal(calls, 2);
  await settling.settled();
  assert.equal(calls, 2, 'a retry that succeeded is not run again');
  assert.deepEqual(failures.map(String), ['RetryLater: record refused']);
});

test('a later settle that succeeds retries it', async () => {
  const { settling } = settlingWithFailures();
  let refusing = true;
  const retry = async () => {
    if (refusing) throw new Error('ENOSPC');
  };
  settling.add(['a.txt'], Promise.reject(new RetryLater('record refused', retry)));
  await settling.settled();
  refusing = false;
  settling.add(['b.txt'], Promise.resolve());
  await settling.drain();
  assert.equal(settling.retrying, 0);
});

test('the close waits for a retry a history query started, and does not start it twice', async () => {
  const { settling } = settlingWithFailures();
  let calls = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const retry = async () => {
    calls += 1;
    if (calls === 1) throw new Error('ENOSPC');
    await released;
  };
  settling.add(['a.txt'], Promise.reject(new RetryLater('record refused', retry)));
  await settling.settled();
  const querying = settling.settled();
  while (calls < 2) await new Promise((resolve) => setImmediate(resolve));
  const drained = settling.drain().then(() => 'drained');
  const first = await Promise.race([drained, new Promise((resolve) => setImmediate(() => resolve('waiting')))]);
  assert.equal(first, 'waiting');
  release();
  assert.equal(await drained, 'drained');
  await querying;
  assert.equal(calls, 2);
  assert.equal(settling.retrying, 0);
});
