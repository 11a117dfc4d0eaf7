/** The units of an `atomic: false` commit: files whose paths nest share one; siblings and look-alikes do not. */
import assert from 'node:assert/strict';
import test from 'node:test';
import { groupNested } from '../../daemon/workspace/nestedUnits.ts';

const group = (...paths: (string | readonly string[])[]) => groupNested(paths, (entry) => (typeof entry === 'string' ? [entry] : entry));

test('files in one directory, and names that share a prefix, are units of their own', () => {
  assert.deepEqual(group('d/x', 'd/y', 'dd', 'd.txt', 'e/d'), [['d/x'], ['d/y'], ['dd'], ['d.txt'], ['e/d']]);
});

test('a path and the paths inside it are one unit, placed where its first file is, in plan order', () => {
  assert.deepEqual(group('a', 'd/x', 'b', 'd', 'd/e/y'), [['a'], ['d/x', 'd', 'd/e/y'], ['b']]);
  assert.deepEqual(group('d', 'x', 'd/e/f'), [['d', 'd/e/f'], ['x']]);
});

test('a file that joins two earlier units merges them; a move joins by either of its paths', () => {
  assert.deepEqual(group('d/x', 'e', 'd/y', 'd'), [['d/x', 'd/y', 'd'], ['e']]);
  assert.deepEqual(group('f/g', ['d', 'f'], 'd/x'), [['f/g', ['d', 'f'], 'd/x']]);
});
