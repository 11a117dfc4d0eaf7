/** The lock table: parallel on disjoint paths, FIFO per path, no deadlock, nothing left behind after an abort; and the names paths are locked under. */
import assert from 'node:assert/strict';
import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { LockAbortedError, LockTable, type LockLease } from '../../daemon/workspace/locks.ts';
import { lockKey } from '../../daemon/workspace/workspace.ts';
import { withSandbox } from './fixtures.ts';

/** Whether the promise has settled, checked after pending microtasks ran. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true), () => (done = true));
  await new Promise<void>((resolve) => setImmediate(resolve));
  return done;
}

test('requests on disjoint paths are granted at once, side by side', async () => {
  const locks = new LockTable();
  const a = await locks.acquire(['a.txt', 'b.txt']);
  const c = await locks.acquire(['c.txt']);
  assert.deepEqual(a.paths, ['a.txt', 'b.txt']);
  assert.deepEqual(c.paths, ['c.txt']);
  a.release();
  c.release();
  assert.equal(locks.size, 0);
});

test('holdUntil keeps a holder\'s paths past its release until the work settles; whoever waited next still gets them next', async () => {
  const locks = new LockTable();
  const holder = await locks.acquire(['a.txt', 'b.txt']);
  const next = locks.acquire(['a.txt']);
  let finish!: () => void;
  locks.holdUntil(['b.txt', 'a.txt'], new Promise<void>((resolve) => (finish = resolve)));
  holder.release();
  const later = locks.acquire(['a.txt']);
  assert.equal(await settled(next), false, 'held past the release');
  finish();
  assert.equal(await settled(next), true, 'let go once the work settles');
  const lease = await next;
  assert.equal(await settled(later), false, 'granted in the order asked');
  lease.release();
  (await later).release();
  assert.equal(locks.size, 0);
});

test('holdUntil without a holder of every path asks for them as a new request, released when the work fails too', async () => {
  const locks = new LockTable();
  const other = await locks.acquire(['a.txt']);
  let fail!: (error: Error) => void;
  const work = new Promise<void>((_, reject) => (fail = reject));
  work.catch(() => undefined);
  locks.holdUntil(['a.txt', 'b.txt'], work);
  assert.equal(locks.queued('a.txt'), 2);
  other.release();
  const next = locks.acquire(['b.txt']);
  assert.equal(await settled(next), false, 'the new request holds b.txt');
  fail(new Error('EIO'));
  assert.equal(await settled(next), true, 'let go once the work fails');
  (await next).release();
  assert.equal(locks.size, 0);
});

/** Keys by a table of spellings (others key as themselves), counting every key worked out. */
function countingKeys(keys: Record<string, string> = {}): { keyOf: (path: string) => string; readonly asked: string[] } {
  const asked: string[] = [];
  return { asked, keyOf: (path) => (asked.push(path), keys[path] ?? path) };
}

test('holdUntil finds the holder by the paths as it spelled them, working out no key; another spelling of its locks is found by key', async () => {
  const keys = countingKeys({ 'link/a.txt': 'real/a.txt' });
  const locks = new LockTable(keys.keyOf);
  const holder = await locks.acquire(['link/a.txt', 'b.txt']);
  const next = locks.acquire(['real/a.txt']);
  keys.asked.length = 0;
  let finish!: () => void;
  const work = new Promise<void>((resolve) => (finish = resolve));
  locks.holdUntil(['b.txt', 'link/a.txt'], work);
  assert.deepEqual(keys.asked, [], 'found by spelling');
  locks.holdUntil(['real/a.txt'], work);
  assert.deepEqual(keys.asked, ['real/a.txt'], 'another spelling is keyed');
  assert.equal(locks.queued('real/a.txt'), 2, 'and kept by the holder of its key, not asked for anew');
  holder.release();
  assert.equal(await settled(next), false, 'held past the release');
  finish();
  (await next).release();
  assert.equal(locks.size, 0);
});

test('acquireBehind queues behind the requests already made for a path, under the key they locked it by, without working it out again', async () => {
  // The second key of `moved` stands for a directory on its path replaced by a link since it was first locked.
  let movedKey = 'moved';
  const asked: string[] = [];
  const locks = new LockTable((path) => (asked.push(path), path === 'moved' ? movedKey : path));
  const holder = await locks.acquire(['moved']);
  movedKey = 'elsewhere';
  asked.length = 0;
  const behind = locks.acquireBehind(['moved', 'fresh']);
  assert.deepEqual(asked, ['fresh'], 'only a path no one queued is keyed');
  assert.equal(await settled(behind), false, 'waits for the request that asked before it, under its key');
  const anew = await locks.acquire(['moved']);
  assert.deepEqual(anew.paths, ['elsewhere'], 'acquire always works the key out');
  anew.release();
  holder.release();
  const lease = await behind;
  assert.deepEqual(lease.paths, ['fresh', 'moved']);
  lease.release();
  assert.equal(locks.size, 0);
  assert.deepEqual((await locks.acquireBehind(['moved'])).paths, ['elsewhere'], 'once no one queues it, keyed afresh');
});

test('requests sharing a path are granted one at a time, in the order they asked', async () => {
  const locks = new LockTable();
  const order: number[] = [];
  const first = await locks.acquire(['shared']);
  const waiting = [1, 2, 3].map((n) => locks.acquire(['shared', `own-${n}`]).then((lease) => {
    order.push(n);
    return lease;
  }));
  assert.equal(locks.queued('shared'), 4);
  assert.equal(await settled(waiting[0]!), false);
  first.release();
  for (const pending of waiting) (await pending).release();
  assert.deepEqual(order, [1, 2, 3]);
  assert.equal(locks.size, 0);
});

test('a request queued behind a waiter keeps its place even on a path that is free', async () => {
  const locks = new LockTable();
  const holder = await locks.acquire(['a']);
  const both = locks.acquire(['a', 'b']);
  const onlyB = locks.acquire(['b']);
  assert.equal(await settled(onlyB), false, 'b was asked for first by the request that waits for a');
  holder.release();
  const granted = await both;
  assert.equal(await settled(onlyB), false);
  granted.release();
  (await onlyB).release();
  assert.equal(locks.size, 0);
});

test('paths are locked in one sorted order: requests naming them in opposite orders never deadlock', async () => {
  const locks = new LockTable();
  const held = await Promise.all([['a', 'z'], ['z', 'a'], ['z'], ['a'], ['z', 'm', 'a']].map(async (paths) => {
    const lease = await locks.acquire(paths);
    await new Promise<void>((resolve) => setImmediate(resolve));
    lease.release();
    return lease.paths;
  }));
  assert.deepEqual(held[1], ['a', 'z']);
  assert.deepEqual(held[4], ['a', 'm', 'z']);
  assert.equal(locks.size, 0);
});

test('aborting a waiter removes it from every queue and lets the next one in', async () => {
  const locks = new LockTable();
  const holder = await locks.acquire(['a']);
  const abort = new AbortController();
  const aborted = locks.acquire(['a', 'b'], abort.signal);
  const next = locks.acquire(['b']);
  abort.abort();
  await assert.rejects(aborted, LockAbortedError);
  (await next).release();
  assert.equal(locks.queued('a'), 1);
  holder.release();
  assert.equal(locks.size, 0);
  await assert.rejects(locks.acquire(['a'], AbortSignal.abort()), LockAbortedError);
  assert.equal(locks.size, 0);
});

test('an abort after the grant changes nothing; release is idempotent and disposal releases', async () => {
  const locks = new LockTable();
  const abort = new AbortController();
  const lease = await locks.acquire(['a'], abort.signal);
  abort.abort();
  assert.equal(locks.queued('a'), 1);
  lease.release();
  lease.release();
  assert.equal(locks.size, 0);
  {
    using _held = await locks.acquire(['a']);
    assert.equal(locks.queued('a'), 1);
  }
  assert.equal(locks.size, 0);
});

test('property: any mix of requests all complete, and no path ever has two holders', async () => {
  const request = fc.record({ paths: fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e'), { minLength: 1, maxLength: 4 }), abort: fc.boolean() });
  await fc.assert(fc.asyncProperty(fc.array(request, { minLength: 1, maxLength: 30 }), async (requests) => {
    const locks = new LockTable();
    const holders = new Map<string, number>();
    const run = async ({ paths, abort }: { paths: string[]; abort: boolean }, id: number) => {
      const controller = new AbortController();
      const pending = locks.acquire(paths, controller.signal);
      if (abort) controller.abort();
      let lease: LockLease;
      try {
        lease = await pending;
      } catch (error) {
        assert.ok(abort && error instanceof LockAbortedError);
        return;
      }
      for (const path of paths) assert.equal(holders.get(path), undefined, `${path} held twice`);
      for (const path of paths) holders.set(path, id);
      await new Promise<void>((resolve) => setImmediate(resolve));
      for (const path of paths) holders.delete(path);
      lease.release();
    };
    await Promise.all(requests.map(run));
    assert.equal(locks.size, 0);
  }), { numRuns: 100 });
});

test('lock names: two spellings of one file (through a symlinked directory inside the root) share a lock', async () => {
  await withSandbox({ 'real/a.txt': 'a\n', 'top.txt': 't\n', 'other/b.txt': 'b\n' }, async (sandbox) => {
    symlinkSync('real', path.join(sandbox.root, 'link'));
    symlinkSync('../other', path.join(sandbox.root, 'real', 'deep'));
    assert.equal(lockKey(sandbox.root, 'link/a.txt'), 'real/a.txt');
    assert.equal(lockKey(sandbox.root, 'real/deep/b.txt'), 'other/b.txt', 'a link below a real directory');
    assert.equal(lockKey(sandbox.root, 'link/deep/b.txt'), 'other/b.txt', 'a link inside a link');
    assert.equal(lockKey(sandbox.root, 'other/b.txt'), 'other/b.txt');
    assert.equal(lockKey(sandbox.root, 'top.txt/x'), 'top.txt/x', 'a path below a file keeps its spelling');
    assert.equal(lockKey(sandbox.root, './real//a.txt'), 'real/a.txt');
    assert.equal(lockKey(sandbox.root, 'top.txt'), 'top.txt');
    assert.equal(lockKey(sandbox.root, 'not/yet/there.txt'), 'not/yet/there.txt');
    const workspace = await sandbox.open();
    try {
      const held = await workspace.lock(['link/a.txt']);
      const other = workspace.lock(['real/a.txt']);
      assert.equal(await settled(other), false);
      held.release();
      (await other).release();
    } finally {
      await workspace.close();
    }
  });
});
