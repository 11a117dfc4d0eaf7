/**
 * Who hears of an outside change: the sessions that read or patched the file, until they leave
 * or the workspace stops watching the file (then interest is forgotten, so that a long session
 * holds no more paths than are watched, and renewed by the next read or patch).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FileSubscribers } from '../../daemon/server/subscribers.ts';
import type { FileChange } from '../../daemon/workspace/workspace.ts';

function sessions(): { subscribers: FileSubscribers; heard: Record<string, string[]> } {
  const subscribers = new FileSubscribers();
  const heard: Record<string, string[]> = { one: [], two: [] };
  for (const id of Object.keys(heard)) subscribers.join(id, (change: FileChange) => heard[id]!.push(change.path));
  return { subscribers, heard };
}

test('a change goes to every session that touched the file, and to no other', () => {
  const { subscribers, heard } = sessions();
  subscribers.note('one', ['a.txt', 'b.txt']);
  subscribers.note('two', ['b.txt']);
  for (const path of ['a.txt', 'b.txt', 'c.txt']) subscribers.deliver({ path, sha256: null });
  assert.deepEqual(heard, { one: ['a.txt', 'b.txt'], two: ['b.txt'] });
});

test('a file no longer watched is forgotten by every session, until one touches it again', () => {
  const { subscribers, heard } = sessions();
  subscribers.note('one', ['a.txt', 'b.txt']);
  subscribers.note('two', ['a.txt']);
  subscribers.forget('a.txt');
  subscribers.deliver({ path: 'a.txt', sha256: null });
  subscribers.deliver({ path: 'b.txt', sha256: null });
  assert.deepEqual(heard, { one: ['b.txt'], two: [] });

  subscribers.note('two', ['a.txt']);
  subscribers.deliver({ path: 'a.txt', sha256: null });
  assert.deepEqual(heard, { one: ['b.txt'], two: ['a.txt'] });
  // Leaving after a forget is clean: the other session still hears.
  subscribers.leave('one');
  subscribers.deliver({ path: 'a.txt', sha256: null });
  assert.deepEqual(heard, { one: ['b.txt'], two: ['a.txt', 'a.txt'] });
});

test('a session that has not joined (or has left) is not noted', () => {
  const { subscribers, heard } = sessions();
  subscribers.leave('one');
  subscribers.note('one', ['a.txt']);
  subscribers.deliver({ path: 'a.txt', sha256: null });
  assert.deepEqual(heard, { one: [], two: [] });
});
