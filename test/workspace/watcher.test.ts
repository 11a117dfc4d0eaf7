/**
 * The lazy watcher on its own: adds asked for in one turn reach chokidar together, none after
 * `close`, and past its bound whole generations go, never a file unwatched.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import type { FSWatcher } from 'chokidar';
import { fileIdentity } from '../../daemon/workspace/arrivals.ts';
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
    onActive: () => {},
    onError: (error) => errors.push(error),
  });
  const hinted = (name: string) => (seen.has(name) ? Promise.resolve() : new Promise<void>((resolve) => waiters.set(name, resolve)));
  // A watch is active a moment after it is asked for: write until the event comes (a hang guard bounds it; nothing is timed).
  const untilHinted = async (name: string) => {
    const event = hinted(name);
    for (let round = 0; !seen.has(name); round++) {
      assert.ok(round < 2_400, `no event for ${name}`);
      writeFileSync(path.join(root, name), `change ${round}\n`);
      await Promise.race([event, new Promise((resolve) => setTimeout(resolve, 50))]);
    }
  };
  return { root, watcher, errors, untilHinted, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

test('files watched in one turn are all watched', async () => {
  const names = Array.from({ length: 20 }, (_, index) => `f${index}.txt`);
  const { watcher, errors, untilHinted, cleanup } = watcherOver(names);
  try {
    for (const name of names) assert.equal(watcher.watch(name), true);
    for (const name of names) await untilHinted(name);
    assert.equal(watcher.size, names.length);
    assert.deepEqual(errors, []);
  } finally {
    await watcher.close();
    cleanup();
  }
});

/** A stand-in for chokidar that records, per instance, what it was asked (`log`: in order). */
function recordingChokidar() {
  const instances: { added: string[]; unwatched: string[]; log: string[]; closed: boolean; fail: (error: Error) => void; instance: FSWatcher }[] = [];
  const watch = () => {
    let onError: (error: Error) => void = () => {};
    let onAll: (event: string, absolute: string) => void = () => {};
    const listed = new Set<string>();
    const calls = { added: [] as string[], unwatched: [] as string[], log: [] as string[], closed: false, fail: (error: Error) => onError(error), instance: undefined as unknown as FSWatcher };
    instances.push(calls);
    const instance = {
      on: (event: string, listener: (...args: never[]) => void) => {
        if (event === 'error') onError = listener as typeof onError;
        if (event === 'all') onAll = listener as typeof onAll;
        return instance;
      },
      // As chokidar tells the watch of each path it is asked for set: by an `add` (here at once), unless it lists the file in its directory already.
      add: (absolute: string) => {
        calls.added.push(path.basename(absolute));
        calls.log.push(`add ${path.basename(absolute)}`);
        if (!listed.has(absolute)) onAll('add', absolute);
        listed.add(absolute);
        return instance;
      },
      unwatch: (absolute: string) => (calls.unwatched.push(path.basename(absolute)), calls.log.push(`unwatch ${path.basename(absolute)}`), instance),
      _closeFile: (absolute: string) => calls.log.push(`close ${path.basename(absolute)}`),
      _getWatchedDir: (directory: string) => ({ items: { delete: (name: string) => listed.delete(path.join(directory, name)) } }),
      close: async () => {
        calls.closed = true;
      },
      // chokidar's own handler of the errors it meets (it drops ENOENT): recorded.
      _handleError: (error: Error) => (calls.log.push(`handled ${(error as NodeJS.ErrnoException).code}`), error),
    };
    calls.instance = instance as unknown as FSWatcher;
    return calls.instance;
  };
  return { instances, load: async () => ({ watch: watch as unknown as typeof import('chokidar').watch }) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

test('past its bound the watcher closes its oldest generation whole, never unwatching a file; a file touched again moves to the newest', async () => {
  const chokidar = recordingChokidar();
  const dropped: string[] = [];
  const watcher = new LazyWatcher({ root: '/w', maxPaths: 6, onHint: () => {}, onDrop: (relative) => dropped.push(relative), onActive: () => {}, onError: (error) => assert.fail(String(error)), load: chokidar.load });
  try {
    // Six files fill three generations of two.
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) assert.equal(watcher.watch(name), true);
    await turn();
    await turn();
    assert.equal(watcher.watch('e'), false, 'e is in the newest generation: left where it is');
    assert.equal(watcher.watch('a'), true, 'a moves to a fourth generation, which retires the first: a is re-checked, as its old watch closes at once');
    assert.deepEqual(dropped, ['b']);
    assert.equal(watcher.watch('c'), false, 'c moves to the newest generation, which has room: its old watch stays for now');
    for (const name of ['g', 'h', 'i', 'j']) assert.equal(watcher.watch(name), true);
    await turn();
    await turn();
    assert.deepEqual(chokidar.instances.map(({ added }) => added), [['a', 'b'], ['c', 'd'], ['e', 'f'], ['a', 'c'], ['g', 'h'], ['i', 'j']]);
    assert.deepEqual(chokidar.instances.map(({ closed }) => closed), [true, true, true, false, false, false]);
    assert.deepEqual(dropped, ['b', 'd', 'e', 'f'], 'a and c moved on before their generations closed');
    assert.ok(chokidar.instances.every(({ unwatched }) => unwatched.length === 0), 'chokidar never unwatched a file');
    assert.deepEqual(['a', 'c', 'g', 'h', 'i', 'j'].map((name) => watcher.isWatching(name)), [true, true, true, true, true, true]);
    assert.equal(watcher.size, 6);
  } finally {
    await watcher.close();
  }
  assert.ok(chokidar.instances.every(({ closed }) => closed));
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

test('running out of inotify watches is told once, as such; other watcher errors are told as they come', async () => {
  const chokidar = recordingChokidar();
  const errors: unknown[] = [];
  const watcher = new LazyWatcher({ root: '/w', maxPaths: 100, onHint: () => {}, onDrop: () => {}, onActive: () => {}, onError: (error) => errors.push(error), load: chokidar.load });
  try {
    watcher.watch('a');
    await turn();
    await turn();
    const noSpace = (file: string) => Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${file}'`), { code: 'ENOSPC' });
    for (const file of ['a', 'b', 'c']) chokidar.instances[0]!.fail(noSpace(file));
    chokidar.instances[0]!.fail(Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' }));
    assert.deepEqual(errors.map((error) => (error as Error).name), ['WatchLimitError', 'Error']);
    assert.match((errors[0] as Error).message, /limit of file watches is reached \(ENOSPC from inotify\): .*Patches are not affected.*max_user_watches/);
  } finally {
    await watcher.close();
  }
});

test('a read that finds another file at a watched path, or none, or the file back, sets its watch again: closed and forgotten, then added at once (no unwatch: chokidar would read the whole directory)', async () => {
  const chokidar = recordingChokidar();
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'patchd-watcher-')));
  const file = path.join(root, 'a.txt');
  writeFileSync(file, 'one\n');
  let hints = 0;
  let wake: () => void = () => {};
  const watcher = new LazyWatcher({
    root, maxPaths: 100, onHint: () => (hints++, wake()), onDrop: () => {}, onActive: () => {}, onError: (error) => assert.fail(String(error)), load: chokidar.load,
  });
  const log = () => chokidar.instances[0]?.log ?? [];
  // The watcher hints each time it has looked at the path; what it then asks of chokidar follows a turn later. Waits on hints (the bound is a hang guard).
  const until = async (done: () => boolean) => {
    for (let round = 0; !done(); round++) {
      assert.ok(round < 2_400, `still waiting; chokidar was asked ${JSON.stringify(log())}`);
      await Promise.race([new Promise<void>((resolve) => (wake = resolve)), new Promise((resolve) => setTimeout(resolve, 50))]);
      await turn();
      await turn();
    }
  };
  const identity = () => fileIdentity(statSync(file, { bigint: true }));
  try {
    assert.equal(watcher.watch('a.txt', identity()), true);
    await until(() => log().length === 1);
    assert.equal(watcher.watch('a.txt', identity()), false, 'the same file: nothing to do');
    await turn();
    await turn();
    assert.deepEqual(log(), ['add a.txt']);
    assert.equal(hints, 0);

    rmSync(file);
    writeFileSync(file, 'two\n'); // often the old inode number again (ext4): the birth time tells them apart
    assert.equal(watcher.watch('a.txt', identity()), false);
    await until(() => log().length === 3);
    assert.deepEqual(log(), ['add a.txt', 'close a.txt', 'add a.txt']);

    rmSync(file);
    const before = hints;
    watcher.sawGone('a.txt');
    await until(() => hints >= before + 2); // a look, and one more once the wait on the directory is active
    watcher.sawGone('a.txt');
    await turn();
    await turn();
    assert.equal(hints, before + 2, 'already waiting for it: nothing more');
    assert.deepEqual(log(), ['add a.txt', 'close a.txt', 'add a.txt'], 'gone: nothing for chokidar to watch');

    writeFileSync(file, 'three\n'); // seen by the wait on the directory, not by a read
    await until(() => log().length === 5);
    assert.deepEqual(log(), ['add a.txt', 'close a.txt', 'add a.txt', 'close a.txt', 'add a.txt']);
    assert.equal(watcher.isWatching('a.txt'), true);
  } finally {
    await watcher.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a watched file chokidar finds missing as it sets a watch (gone between its stat and its watch, an error it drops) has its watch set again, and chokidar does not wait for it', async () => {
  const chokidar = recordingChokidar();
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), 'patchd-watcher-')));
  const file = path.join(root, 'a.txt');
  writeFileSync(file, 'one\n');
  let hints = 0;
  const watcher = new LazyWatcher({ root, maxPaths: 100, onHint: () => hints++, onDrop: () => {}, onActive: () => {}, onError: (error) => assert.fail(String(error)), load: chokidar.load });
  const missing = (absolute: string) => Object.assign(new Error(`ENOENT: no such file or directory, watch '${absolute}'`), { code: 'ENOENT', syscall: 'watch', path: absolute });
  const log = () => chokidar.instances[0]?.log ?? [];
  const until = async (done: () => boolean) => {
    for (let round = 0; !done(); round++) {
      assert.ok(round < 2_400, `still waiting; chokidar was asked ${JSON.stringify(log())}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  try {
    assert.equal(watcher.watch('a.txt'), true);
    await until(() => log().length === 1);
    const instance = chokidar.instances[0]!.instance;
    // The file went as chokidar set its watch, and came back: the watch is set on the file there now.
    rmSync(file);
    writeFileSync(file, 'two\n');
    assert.equal(instance._handleError(missing(file)), false, 'not chokidar\'s to wait for: it would watch, and read, the whole directory');
    await until(() => log().length === 3);
    assert.deepEqual(log(), ['add a.txt', 'close a.txt', 'add a.txt']);
    assert.equal(hints, 1, 'a hint follows, so that what happened meanwhile is read');
    // Another path's error is chokidar's alone.
    const other = missing(path.join(root, 'other.txt'));
    assert.equal(instance._handleError(other), other);
    await turn();
    await turn();
    assert.deepEqual(log().slice(3), ['handled ENOENT']);
  } finally {
    await watcher.close();
    rmSync(root, { recursive: true, force: true });
  }
});

test('a file patchd replaced has its old watch closed at once and a new one set, which hints once set; not while a watch of it is being set already', async () => {
  const chokidar = recordingChokidar();
  let hints = 0;
  const watcher = new LazyWatcher({ root: '/w', maxPaths: 100, onHint: () => hints++, onDrop: () => {}, onActive: () => {}, onError: (error) => assert.fail(String(error)), load: chokidar.load });
  const log = () => chokidar.instances[0]?.log ?? [];
  try {
    assert.equal(watcher.watch('a'), true);
    watcher.replaced('a'); // its watch is not set yet: the add to come sets it on the new file
    await turn();
    await turn();
    assert.deepEqual(log(), ['add a']);
    watcher.replaced('a');
    assert.deepEqual(log(), ['add a', 'close a'], 'the old watch closes in the same turn: what it has yet to report is dropped');
    watcher.replaced('a');
    await turn();
    await turn();
    assert.deepEqual(log(), ['add a', 'close a', 'add a'], 'once: the new watch is being set');
    assert.equal(hints, 1, 'a hint once the new watch is set');
    assert.equal(watcher.isWatching('a'), true);
  } finally {
    await watcher.close();
  }
});
