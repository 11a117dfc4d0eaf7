/**
 * The lazy watcher on its own: adds and removals asked for in one turn reach chokidar together,
 * in the order asked, and none after `close`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { LazyWatcher } from '../../daemon/workspace/watcher.ts';

/** A watcher over a fresh directory holding `names`; `hinted(name)` resolves at the first event on it. */
function watcherOver(names: readonly string[]) {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'patchd-watcher-')));
  for (const name of names) writeFileSync(path.join(root, name), 'one\n');
  const errors: unknown[] = [];
  const seen = new Set<string>();
  const waiters = new Map<string, () => void>();
  const watcher = new LazyWatcher({
    root, maxPaths: 100,
    onHint: (relative) => {
      seen.add(relative);
      waiters.get(relative)?.();
    },
    onDrop: () => {},
    onError: (error) => errors.push(error),
  });
  const hinted = (name: string) => (seen.has(name) ? Promise.resolve() : new Promise<void>((resolve) => waiters.set(name, resolve)));
  // A watch is active a moment after it is asked for: write until the event comes (a hang guard bounds it; nothing is timed).
  const untilHinted = async (name: string, { again = false } = {}) => {
    if (again) seen.delete(name);
    const event = hinted(name);
    for (let round = 0; !seen.has(name); round++) {
      assert.ok(round < 2_400, `no event for ${name}`);
      writeFileSync(path.join(root, name), `change ${round}\n`);
      await Promise.race([event, new Promise((resolve) => setTimeout(resolve, 50))]);
    }
  };
  return { root, watcher, errors, untilHinted, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

test('files watched in one turn are all watched; a removal and a new watch of one file in one turn reach chokidar in that order', async () => {
  const names = Array.from({ length: 20 }, (_, index) => `f${index}.txt`);
  const { watcher, errors, untilHinted, cleanup } = watcherOver(names);
  try {
    for (const name of names) assert.equal(watcher.watch(name), true);
    for (const name of names) await untilHinted(name);
    watcher.unwatch('f0.txt');
    assert.equal(watcher.watch('f0.txt'), true);
    assert.equal(watcher.size, names.length);
    await untilHinted('f0.txt', { again: true });
    assert.deepEqual(errors, []);
  } finally {
    await watcher.close();
    cleanup();
  }
});

test('closing in the turn that asked for watches leaves nothing watched and reports no error', async () => {
  const { watcher, errors, cleanup } = watcherOver(['a.txt']);
  try {
    assert.equal(watcher.watch('a.txt'), true);
    await watcher.close();
    assert.equal(watcher.size, 0);
    assert.equal(watcher.watch('a.txt'), false);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(errors, []);
  } finally {
    cleanup();
  }
});
