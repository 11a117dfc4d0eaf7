/**
 * The change monitor on its own: many re-checks waiting at once for their paths' locks (held
 * by commits) are normal, and must not make Node print a plain-text warning on stderr.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ContentCache } from '../../daemon/workspace/cache.ts';
import { ChangeMonitor } from '../../daemon/workspace/changes.ts';
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
    lock: (wanted, signal) => {
      const lease = locks.acquire(wanted, signal);
      if (++waiting === PATHS) allWaiting();
      return lease;
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
