/** The pruner's schedule: a prune after a tenth of the retention is committed, one at a time, and `idle` waiting for the one running and the one due. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Pruner } from '../../daemon/workspace/pruner.ts';
import type { Retention } from '../../daemon/workspace/retention.ts';

const RETENTION: Retention = { maxTransactions: 20, maxAgeMs: 3_600_000 };

test('idle waits for the prune running and for the one that fell due meanwhile', async () => {
  const finishers: (() => void)[] = [];
  let started = 0;
  const pruner = new Pruner(() => {
    started += 1;
    return new Promise<Retention>((resolve) => finishers.push(() => resolve(RETENTION)));
  }, RETENTION, (error) => assert.fail(String(error)));
  let idle = false;
  assert.equal(started, 0);
  await pruner.idle();
  pruner.committed();
  pruner.committed(); // a tenth of 20: the second commit starts a prune
  assert.equal(started, 1);
  pruner.committed();
  pruner.committed(); // due while the first runs: it waits for it
  assert.equal(started, 1);
  const waiting = pruner.idle().then(() => (idle = true));
  finishers.shift()!();
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(started, 2, 'the prune that fell due starts once the first ends');
  assert.equal(idle, false, 'idle still waits for it');
  finishers.shift()!();
  await waiting;
  assert.equal(idle, true);
  await pruner.close();
});
