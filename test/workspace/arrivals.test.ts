/**
 * Waiting for a watched file that is gone: on the nearest directory above it that exists, for
 * the next name on its path, one watch per directory, none once nothing waits; a directory that
 * goes itself stirs everything waiting on it. Every step waits for its event (the bound is a
 * hang guard); nothing is timed.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Arrivals, locate } from '../../daemon/workspace/arrivals.ts';

function recordingArrivals() {
  const stirred: string[] = [];
  let wake: () => void = () => {};
  const arrivals = new Arrivals((relative) => {
    stirred.push(relative);
    wake();
  });
  const stir = async (count: number) => {
    for (let round = 0; stirred.length < count; round++) {
      assert.ok(round < 2_400, `no event (stirred: ${JSON.stringify(stirred)})`);
      await Promise.race([new Promise<void>((resolve) => (wake = resolve)), new Promise((resolve) => setTimeout(resolve, 50))]);
    }
    return stirred.slice(0, count);
  };
  return { arrivals, stirred, stir };
}

test('a file whose directories went waits on the nearest one left, then on each as it comes back, until the file is back', async () => {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'patchd-arrivals-')));
  const { arrivals, stir } = recordingArrivals();
  const file = 'sub/deeper/h.txt';
  try {
    assert.deepEqual(await locate(root, file), { directory: root, name: 'sub' });
    assert.equal(arrivals.wait(file, root, 'sub'), true);
    assert.equal(arrivals.wait(file, root, 'sub'), false, 'already waiting there');
    writeFileSync(path.join(root, 'other.txt'), 'not awaited\n');
    mkdirSync(path.join(root, 'sub'));
    assert.deepEqual(await stir(1), [file]);

    assert.deepEqual(await locate(root, file), { directory: path.join(root, 'sub'), name: 'deeper' });
    assert.equal(arrivals.wait(file, path.join(root, 'sub'), 'deeper'), true);
    assert.equal(arrivals.directories, 1, 'the wait on the root ended');
    mkdirSync(path.join(root, 'sub', 'deeper'));
    assert.deepEqual(await stir(2), [file, file]);

    assert.equal(arrivals.wait(file, path.join(root, 'sub', 'deeper'), 'h.txt'), true);
    writeFileSync(path.join(root, file), 'back\n');
    await stir(3);
    const place = await locate(root, file);
    assert.ok(place !== undefined && 'identity' in place, 'the file is back');
    arrivals.cancel(file);
    assert.equal(arrivals.directories, 0);
    assert.equal(arrivals.isWaiting(file), false);
  } finally {
    arrivals.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a directory removed while files wait on it stirs them all, and its watch ends', async () => {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'patchd-arrivals-')));
  const { arrivals, stir } = recordingArrivals();
  const sub = path.join(root, 'sub');
  mkdirSync(sub);
  try {
    assert.equal(arrivals.wait('sub/a.txt', sub, 'a.txt'), true);
    assert.equal(arrivals.wait('sub/b.txt', sub, 'b.txt'), true);
    assert.equal(arrivals.directories, 1, 'one watch for both');
    rmSync(sub, { recursive: true });
    assert.deepEqual((await stir(2)).sort(), ['sub/a.txt', 'sub/b.txt']);
    assert.equal(arrivals.directories, 0);
    assert.equal(arrivals.isWaiting('sub/a.txt'), false);
    assert.deepEqual(await locate(root, 'sub/a.txt'), { directory: root, name: 'sub' });
    assert.equal(await locate(path.join(root, 'gone'), 'a.txt'), undefined, 'not even the root: nowhere to wait');
  } finally {
    arrivals.close();
    rmSync(root, { recursive: true, force: true });
  }
});
