/**
 * The change monitor on its own: many re-checks waiting at once for their paths' locks (held
 * by commits) are normal, and must not make Node print a plain-text warning on stderr; an
 * outside change that chokidar drops (inside its window after an event it reported) is still
 * read by a re-check; a new watch is re-checked once it is reported set (or, never reported,
 * after a bound); and a patch to a file just read costs one re-check, not two.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ContentCache } from '../../daemon/workspace/cache.ts';
import { ChangeMonitor, UNREPORTED_WATCH_MS, type FileChange } from '../../daemon/workspace/changes.ts';
import { LockTable } from '../../daemon/workspace/locks.ts';

const PATHS = 20;

test(`${PATHS} re-checks waiting for their locks at once raise no MaxListenersExceededWarning`, async () => {
  const root = mkdtempSync(join(tmpdir(), 'patchd-monitor-'));
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  const locks = new LockTable();
  const paths = Array.from({ length: PATHS }, (_, index) => `f${index}.txt`);
  for (const path of paths) writeFileSync(join(root, path), 'x\n');
  const held = await locks.acquire(paths);
  let waiting = 0;
  let allWaiting!: () => void;
  const everyRecheckWaits = new Promise<void>((resolve) => (allWaiting = resolve));
  const monitor = new ChangeMonitor({
    root,
    locks: {
      acquire: (wanted, signal) => {
        const lease = locks.acquire(wanted, signal);
        if (++waiting === PATHS) allWaiting();
        return lease;
      },
      acquireBehind: (wanted, signal) => locks.acquireBehind(wanted, signal),
    },
    cache: new ContentCache(),
    readSha256: async () => 'same',
    settleMs: 0,
    maxWatchedPaths: 100,
    onError: (error) => assert.fail(String(error)),
  });
  try {
    // Each newly watched path gets one re-check, which waits for the lock held above.
    for (const path of paths) monitor.learn(path, 'same');
    await everyRecheckWaits;
    // Node emits the warning on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings.map((warning) => warning.name), []);
    held.release();
    await monitor.idle();
  } finally {
    process.off('warning', onWarning);
    await monitor.close();
    rmSync(root, { recursive: true, force: true });
  }
});

/** Lets pending promise chains (lock grants, reads) run; mocked timers leave setImmediate alone. */
async function settle(): Promise<void> {
  for (let turn = 0; turn < 5; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

interface Harness {
  readonly monitor: ChangeMonitor;
  /** The sha256 each re-check read, in order. */
  readonly reads: string[];
  readonly changes: FileChange[];
  /** What the file holds now. */
  disk: string;
  /** chokidar reports an event on the path. */
  hint: (path: string) => void;
  /** The watcher reports the new watch of the path set. */
  active: (path: string) => void;
  /** Takes paths' locks, as a commit does. */
  readonly locks: LockTable;
  /** The paths the watcher watches. */
  readonly watched: ReadonlySet<string>;
}

/** A monitor on one fake file, with an injected watcher and reads that return `disk`. */
function harness(): Harness {
  const locks = new LockTable();
  const watched = new Set<string>();
  const state: Harness = {
    disk: 'one',
    reads: [],
    changes: [],
    hint: () => assert.fail('no watcher yet'),
    active: () => assert.fail('no watcher yet'),
    locks,
    watched,
    monitor: undefined as unknown as ChangeMonitor,
  };
  const monitor = new ChangeMonitor({
    root: '/unused',
    locks,
    cache: new ContentCache(),
    readSha256: async () => {
      state.reads.push(state.disk);
      return state.disk;
    },
    settleMs: 75,
    maxWatchedPaths: 10,
    onError: (error) => assert.fail(String(error)),
    watcher: (options) => {
      state.hint = options.onHint;
      state.active = options.onActive;
      return {
        watch: (path) => !watched.has(path) && watched.add(path).has(path),
        sawGone: () => {},
        replaced: () => {},
        isWatching: (path) => watched.has(path),
        size: 0,
        close: async () => {},
      };
    },
  });
  monitor.onChange((change) => state.changes.push(change));
  return Object.assign(state, { monitor });
}

test('a change chokidar drops right after it reported a commit is still read, by a re-check past its window', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const h = harness();
  try {
    h.monitor.learn('f.txt', 'one'); // newly watched
    t.mock.timers.tick(50);
    h.disk = 'two';
    h.monitor.wrote('f.txt', 'two'); // patchd's own commit …
    h.hint('f.txt'); // … which chokidar reports; it drops any other change on f.txt for 50 ms
    t.mock.timers.tick(25);
    await settle();
    assert.deepEqual(h.reads, [], 'the re-check due since the read waits until 75 ms after the event');
    h.disk = 'saved by an editor'; // inside chokidar's window: no event
    t.mock.timers.tick(50);
    await settle();
    assert.deepEqual(h.reads, ['saved by an editor'], 'one read serves the new watch and the event');
    assert.deepEqual(h.changes, [{ path: 'f.txt', sha256: 'saved by an editor' }]);
    await h.monitor.idle(); // and nothing more is due
  } finally {
    await h.monitor.close();
  }
});

test('a new watch is re-checked once it is reported set, however late, and then only: one read covers the write before it', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const h = harness();
  try {
    h.monitor.learn('f.txt', 'one');
    t.mock.timers.tick(UNREPORTED_WATCH_MS - 1); // a loaded machine: the watch is set long after it was asked for
    await settle();
    assert.deepEqual(h.reads, [], 'nothing read while the watch is not set');
    h.disk = 'two'; // no watch yet: no event
    h.active('f.txt');
    t.mock.timers.tick(74);
    await settle();
    assert.deepEqual(h.reads, [], 'the re-check waits `settleMs` after the report, for an event to join');
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(h.reads, ['two'], 'one read, after the watch is set');
    assert.deepEqual(h.changes, [{ path: 'f.txt', sha256: 'two' }]);
    t.mock.timers.tick(UNREPORTED_WATCH_MS);
    await settle();
    assert.deepEqual(h.reads, ['two'], 'and no other');
    await h.monitor.idle();
  } finally {
    await h.monitor.close();
  }
});

test('a new watch never reported set is re-checked all the same, so idle() resolves; reported after that read, it is read once more', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const h = harness();
  try {
    h.monitor.learn('f.txt', 'one');
    let idle = false;
    const settled = h.monitor.idle().then(() => (idle = true));
    t.mock.timers.tick(UNREPORTED_WATCH_MS - 1);
    await settle();
    assert.deepEqual([h.reads, idle], [[], false]);
    h.disk = 'two';
    t.mock.timers.tick(1);
    await settled;
    assert.deepEqual(h.reads, ['two'], 'read once the wait for the report is over');
    assert.deepEqual(h.changes, [{ path: 'f.txt', sha256: 'two' }]);
    h.disk = 'three'; // between that read and the watch
    h.active('f.txt');
    t.mock.timers.tick(0);
    await settle();
    assert.deepEqual(h.reads, ['two', 'three'], 'read again once the watch is set');
    assert.deepEqual(h.changes, [{ path: 'f.txt', sha256: 'two' }, { path: 'f.txt', sha256: 'three' }]);
    await h.monitor.idle();
  } finally {
    await h.monitor.close();
  }
});

test('a re-check due for an event is not postponed by the next event; one more read follows past that event\'s window', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const h = harness();
  try {
    h.monitor.learn('f.txt', 'one');
    h.hint('f.txt'); // the watch is active: one re-check, due at 75 ms
    t.mock.timers.tick(60);
    h.disk = 'two';
    h.hint('f.txt'); // an outside write at 60 ms, reported; chokidar drops what follows until 110 ms
    t.mock.timers.tick(15);
    await settle();
    assert.deepEqual(h.reads, ['two'], 'the first re-check ran when due, at 75 ms');
    h.disk = 'three'; // dropped by chokidar
    t.mock.timers.tick(59);
    await settle();
    assert.deepEqual(h.reads, ['two'], 'nothing more before 135 ms');
    t.mock.timers.tick(1);
    await settle();
    assert.deepEqual(h.reads, ['two', 'three'], 'one more at 135 ms, 75 ms after the second event');
    assert.deepEqual(h.changes, [{ path: 'f.txt', sha256: 'two' }, { path: 'f.txt', sha256: 'three' }]);
    await h.monitor.idle();
  } finally {
    await h.monitor.close();
  }
});

test('a file seen under its lock is watched once the lock is released, after the commit it was read for; a write just after that commit is still reported', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  const h = harness();
  try {
    const lease = await h.locks.acquire(['f.txt']);
    h.monitor.observe('f.txt', 'one'); // a patch's snapshot, under the lock
    await settle();
    assert.equal(h.watched.has('f.txt'), false, 'not watched while the lock is held: the commit would only make the watch start again');
    h.disk = 'two';
    h.monitor.wrote('f.txt', 'two'); // its commit
    lease.release();
    await settle();
    assert.equal(h.watched.has('f.txt'), true, 'watched once the lock is released');
    h.disk = 'saved by an editor'; // before the watch is active: no event
    h.active('f.txt');
    t.mock.timers.tick(75);
    await settle();
    assert.deepEqual(h.reads, ['saved by an editor'], 'the re-check of the new watch reads it');
    assert.deepEqual(h.changes, [{ path: 'f.txt', sha256: 'saved by an editor' }]);
    await h.monitor.idle();
  } finally {
    await h.monitor.close();
  }
});
