/** Retention: records and trash past the last N transactions or past the age limit go; the tree is never touched. */
import assert from 'node:assert/strict';
import { mkdir, readdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { parseRetention } from '../../daemon/workspace/retention.ts';
import type { Workspace } from '../../daemon/workspace/workspace.ts';
import { deleteFile, listTree, planOf, snapshotAndCommit, updateFile, withSandbox } from './fixtures.ts';

/** Commits `count` updates of a.txt; returns their transaction ids, oldest first. */
async function commitUpdates(workspace: Workspace, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', `a${index}\n`)));
    assert.ok(outcome.status === 'applied');
    ids.push(outcome.transactionId);
  }
  return ids;
}

const records = async (state: string) => (await readdir(path.join(state, 'history'))).filter((name) => name.endsWith('.record'));

test('opening prunes records and trash past the last N transactions, and leaves the tree alone', async () => {
  await withSandbox({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    const ids: string[] = [];
    for (const plan of [planOf(deleteFile('b.txt')), planOf(updateFile('a.txt', 'A\n')), planOf(deleteFile('c.txt'))]) {
      const outcome = await snapshotAndCommit(workspace, plan);
      assert.ok(outcome.status === 'applied');
      ids.push(outcome.transactionId);
    }
    await workspace.close();
    const tree = await listTree(sandbox.root);
    const reopened = await sandbox.open({ retention: { maxTransactions: 2, maxAgeMs: 3_600_000 } });
    assert.deepEqual((await reopened.transactions(10)).map((entry) => entry.transactionId), [ids[2], ids[1]]);
    assert.deepEqual(await listTree(sandbox.root), tree);
    // The pruned transaction's trash goes with its record; the kept one's stays.
    assert.deepEqual(await readdir(path.join(sandbox.state, 'trash')), [ids[2]]);
    await reopened.close();
    // A trash folder without any record may be a commit's in flight: kept until it is an hour old.
    await mkdir(path.join(sandbox.state, 'trash', 'in-flight'));
    // Every record is older than 1 ms once a few ms have passed.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const last = await sandbox.open({ retention: { maxTransactions: 1000, maxAgeMs: 1 } });
    assert.deepEqual(await last.transactions(10), []);
    assert.deepEqual(await readdir(path.join(sandbox.state, 'trash')), ['in-flight']);
    assert.deepEqual(await listTree(sandbox.root), tree);
    await last.close();
  });
});

test('an open workspace prunes as it commits (after a tenth of what it keeps), not only when opened', async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    const workspace = await sandbox.open({ retention: { maxTransactions: 2, maxAgeMs: 3_600_000 } });
    const ids = await commitUpdates(workspace, 8);
    await workspace.close();
    // close waits for the prune the last commit made due: exactly the last two remain.
    assert.equal((await records(sandbox.state)).length, 2);
    const reopened = await sandbox.open({ retention: { maxTransactions: 100, maxAgeMs: 3_600_000 } });
    assert.deepEqual((await reopened.transactions(10)).map((entry) => entry.transactionId), ids.slice(-2).reverse());
    await reopened.close();
  });
});

test('a prune counts a small commit reported before its record was written', async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    const workspace = await sandbox.open({ retention: { maxTransactions: 2, maxAgeMs: 3_600_000 } });
    await commitUpdates(workspace, 2);
    await workspace.transactions(1); // a history query waits for the records and for the prunes they started to end
    const outcome = await snapshotAndCommit(workspace, planOf(updateFile('a.txt', 'a2\n')));
    assert.ok(outcome.status === 'applied');
    // Busy as a loaded machine is, right after the report: the prune it started lists history/
    // on the thread pool before the event loop turns to writing this commit's record.
    for (const until = performance.now() + 20; performance.now() < until; );
    await workspace.close();
    assert.equal((await records(sandbox.state)).length, 2);
  });
});

test('a session diff whose first transactions retention removed is refused, not told from what is left', async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    const workspace = await sandbox.open({ retention: { maxTransactions: 2, maxAgeMs: 3_600_000 } });
    const ids = await commitUpdates(workspace, 4);
    // Told from the two retained records alone, the session would start at "a2" and miss its first two changes.
    const session = await workspace.sessionChanges();
    assert.ok(session !== undefined && !session.ok);
    assert.equal(session.error.code, 'unknown_transaction');
    assert.match(session.error.message, /past retention/);
    const sinceRetained = await workspace.sessionChanges(ids[2]);
    assert.ok(sinceRetained?.ok === true && sinceRetained.value.length === 1);
    const retained = await workspace.sessionChanges(null);
    assert.ok(retained?.ok === true);
    assert.equal(Buffer.from(retained.value[0]!.before!.bytes).toString(), 'a1\n', 'every retained transaction: from the oldest one kept');
    await workspace.close();
  });
});

test('a journal kept aside with a conflict goes once older than the age kept; a younger one stays', async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    const journal = path.join(sandbox.state, 'journal');
    await mkdir(journal, { recursive: true });
    const old = path.join(journal, '1-old.journal.conflict');
    await writeFile(old, 'pre-images');
    await utimes(old, new Date(Date.now() - 2 * 3_600_000), new Date(Date.now() - 2 * 3_600_000));
    await writeFile(path.join(journal, '2-new.journal.conflict'), 'pre-images');
    const workspace = await sandbox.open({ retention: { maxTransactions: 1000, maxAgeMs: 3_600_000 } });
    assert.deepEqual(await readdir(journal), ['2-new.journal.conflict']);
    await workspace.close();
  });
});

test("a killed keep's journal temp goes once an hour old, whatever the age kept; a younger one stays", async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    const journal = path.join(sandbox.state, 'journal');
    await mkdir(journal, { recursive: true });
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000);
    const stale = path.join(journal, 'orphan-1-old.journal.conflict.tmp');
    await writeFile(stale, 'half a journal');
    await utimes(stale, hoursAgo(2), hoursAgo(2));
    await writeFile(path.join(journal, 'orphan-2-new.journal.tmp'), 'half a journal');
    const workspace = await sandbox.open({ retention: { maxTransactions: 1000, maxAgeMs: 30 * 24 * 3_600_000 } });
    assert.deepEqual(await readdir(journal), ['orphan-2-new.journal.tmp']);
    await workspace.close();
  });
});

test('a commit log segment kept aside as damaged goes once older than the age kept; a younger one stays', async () => {
  await withSandbox({ 'a.txt': 'a\n' }, async (sandbox) => {
    const log = path.join(sandbox.state, 'log');
    await mkdir(log, { recursive: true });
    const old = path.join(log, '1-0badc0de-1.log.damaged');
    await writeFile(old, 'frames');
    await utimes(old, new Date(Date.now() - 2 * 3_600_000), new Date(Date.now() - 2 * 3_600_000));
    await writeFile(path.join(log, '2-0badc0de-1.log.damaged'), 'frames');
    const workspace = await sandbox.open({ retention: { maxTransactions: 1000, maxAgeMs: 3_600_000 } });
    assert.deepEqual(await readdir(log), ['2-0badc0de-1.log.damaged']);
    await workspace.close();
  });
});

test('--retain takes a count, an age, or both', () => {
  assert.deepEqual(parseRetention('500'), { ok: true, value: { maxTransactions: 500, maxAgeMs: 7 * 24 * 3_600_000 } });
  assert.deepEqual(parseRetention('3d'), { ok: true, value: { maxTransactions: 1000, maxAgeMs: 3 * 24 * 3_600_000 } });
  assert.deepEqual(parseRetention('10,2h'), { ok: true, value: { maxTransactions: 10, maxAgeMs: 2 * 3_600_000 } });
  assert.deepEqual(parseRetention('7d, 10'), { ok: true, value: { maxTransactions: 10, maxAgeMs: 7 * 24 * 3_600_000 } });
  for (const bad of ['', '0', '7w', 'x,1d', '-1', '1,', '104249992d']) {
    const parsed = parseRetention(bad);
    assert.ok(!parsed.ok && /is neither a number of transactions/.test(parsed.problem), bad);
  }
});

test('--retain refuses a part given twice rather than keep the last: the value prunes history for good', () => {
  const cases = [
    ['5000,100', /^the number of transactions is given twice \(5000 and 100\)$/],
    ['30d,1h', /^the age is given twice \(30d and 1h\)$/],
    ['5,7d,1', /^the number of transactions is given twice \(5 and 1\)$/],
    ['1h,1h', /^the age is given twice \(1h and 1h\)$/],
  ] as const;
  for (const [value, problem] of cases) {
    const parsed = parseRetention(value);
    assert.equal(parsed.ok, false, value);
    if (!parsed.ok) assert.match(parsed.problem, problem);
  }
  assert.equal(parseRetention(`${Math.floor(Number.MAX_SAFE_INTEGER / 86_400_000)}d`).ok, true, 'the longest age whose milliseconds are a safe integer');
});
