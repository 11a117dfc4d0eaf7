/**
 * Group commit is crash-safe: a real daemon is SIGKILLed at random instants while bursts of
 * concurrent one-file and multi-file patches commit through its shared log, and sometimes again
 * while the next daemon recovers on `workspace/open`. After each round the recovering open must
 * leave every patch wholly at its pre-image or its post-image, every acknowledged patch applied,
 * exactly the applied patches with an undo record (`transaction/list`), and no temp file in the
 * tree; an acknowledged patch can then be undone.
 *
 * The kill instants come from a seeded generator; the seed is printed, and
 * `PATCHD_CRASH_SEED=<seed>` replays a run's choices. Which patches a kill catches depends on
 * the machine, what is checked does not: the invariants hold at every instant.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { PatchClient, type Receipt } from '../../client/index.ts';
import { createTempTree, type TempTree } from '../helpers/tempTree.ts';

const ROUNDS = 5;
const PATCHES_PER_ROUND = 16;
const FILES = 40;
const SEED = Number(process.env.PATCHD_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));

/** mulberry32: a small seeded generator, so a run's choices can be replayed. */
function generator(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 2 ** 32;
  };
}

const fileName = (index: number) => `d${index % 4}/f${index}.txt`;

/** One patch of a burst: what its files hold before and after, and its unified diff. */
interface Planned {
  readonly label: string;
  readonly before: ReadonlyMap<string, string | undefined>;
  readonly after: ReadonlyMap<string, string>;
  readonly diff: string;
}

/** A unified diff that replaces each file's single line, or adds a new file. */
function diffOf(after: ReadonlyMap<string, string>, before: ReadonlyMap<string, string | undefined>): string {
  return [...after].map(([path, text]) => {
    const old = before.get(path);
    if (old === undefined) return `--- /dev/null\n+++ b/${path}\n@@ -0,0 +1 @@\n+${text.trimEnd()}\n`;
    return `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-${old.trimEnd()}\n+${text.trimEnd()}\n`;
  }).join('');
}

/** A burst over disjoint files: about half one-file patches, the rest two or three files, some adding files in new directories. */
function planBurst(tree: TempTree, round: number, random: () => number): Planned[] {
  const free = Array.from({ length: FILES }, (_, index) => fileName(index)).sort(() => random() - 0.5);
  return Array.from({ length: PATCHES_PER_ROUND }, (_, index) => {
    const label = `r${round}p${index}`;
    const count = random() < 0.5 ? 1 : 2 + Math.floor(random() * 2);
    const paths = free.splice(0, count);
    if (random() < 0.25) paths.push(`new/${label}/added.txt`);
    const before = new Map(paths.map((path) => [path, tree.text(path)]));
    const after = new Map(paths.map((path) => [path, `${path} by ${label}\n`]));
    return { label, before, after, diff: diffOf(after, before) };
  });
}

function tempsIn(root: string): string[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.patchd.tmp'));
}

/** Starts a daemon, asks it to open the root and SIGKILLs it after `delayMs` — during recovery, or around it. */
async function killDuringOpen(root: string, delayMs: number): Promise<void> {
  const client = await PatchClient.spawn();
  const opening = client.openWorkspace(root).catch(() => undefined);
  await sleep(delayMs);
  process.kill(client.pid!, 'SIGKILL');
  await opening;
  await client.close().catch(() => undefined);
}

test(`group commit survives SIGKILL during bursts of concurrent patches and during recovery (seed ${SEED}; replay with PATCHD_CRASH_SEED)`, async (t) => {
  t.diagnostic(`PATCHD_CRASH_SEED=${SEED}`);
  const random = generator(SEED);
  using tree = createTempTree(Object.fromEntries(Array.from({ length: FILES }, (_, index) => [fileName(index), `${fileName(index)} original\n`])));
  let client = await PatchClient.spawn();
  let workspace = await client.openWorkspace(tree.root);
  let recordsSoFar = 0;
  let lastAcknowledged: { receipt: Receipt; patch: Planned } | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    const burst = planBurst(tree, round, random);
    // Kill once `ackBeforeKill` receipts are in (0: right away), after a random extra moment; the last round kills after one at least.
    const ackBeforeKill = (round === ROUNDS - 1 ? 1 : 0) + Math.floor(random() * PATCHES_PER_ROUND * 0.75);
    const extraMs = Math.floor(random() * 4);
    const acknowledged = new Map<string, Receipt>();
    let signalKill!: () => void;
    const killNow = new Promise<void>((resolve) => (signalKill = resolve));
    if (ackBeforeKill === 0) signalKill();
    const refused: string[] = [];
    const applying = burst.map((patch) => workspace.apply(patch.diff, { format: 'unified' }).then((receipt) => {
      if (receipt.status !== 'applied') refused.push(`${patch.label}: ${JSON.stringify(receipt)}`);
      else acknowledged.set(patch.label, receipt);
      if (acknowledged.size === ackBeforeKill) signalKill();
    }, () => undefined));
    await Promise.race([killNow, Promise.all(applying)]);
    await sleep(extraMs);
    process.kill(client.pid!, 'SIGKILL');
    await Promise.all(applying);
    assert.deepEqual(refused, [], 'every patch of a burst applies (disjoint files, fresh pre-images)');
    await client.close().catch(() => undefined);

    if (random() < 0.5) await killDuringOpen(tree.root, Math.floor(random() * 25));

    // The next daemon recovers on open, is checked, and takes the next burst.
    client = await PatchClient.spawn();
    workspace = await client.openWorkspace(tree.root);
    const applied = burst.filter((patch) => {
      const state = [...patch.after].map(([path, text]) => tree.text(path) === text);
      const wholly = state.every(Boolean) || [...patch.before].every(([path, text]) => tree.text(path) === text);
      assert.ok(wholly, `${patch.label} is half applied: ${JSON.stringify([...patch.after.keys()].map((path) => [path, tree.text(path)]))}`);
      return state.every(Boolean);
    });
    for (const label of acknowledged.keys()) assert.ok(applied.some((patch) => patch.label === label), `${label} was acknowledged but did not survive`);
    assert.deepEqual(tempsIn(tree.root), [], 'no temp file is left in the tree');
    const transactions = await workspace.transactions({ limit: 10_000 });
    const added = transactions.slice(0, transactions.length - recordsSoFar);
    recordsSoFar = transactions.length;
    const recordedPaths = added.map((entry) => entry.files.map((file) => file.path).sort().join(' ')).sort();
    assert.deepEqual(recordedPaths, applied.map((patch) => [...patch.after.keys()].sort().join(' ')).sort(), 'exactly the applied patches have undo records');
    for (const receipt of acknowledged.values()) assert.ok(added.some((entry) => entry.transactionId === receipt.transactionId), `no record of ${receipt.transactionId}`);
    const last = burst.find((patch) => acknowledged.has(patch.label));
    if (last !== undefined) lastAcknowledged = { receipt: acknowledged.get(last.label)!, patch: last };
    t.diagnostic(`round ${round}: ${acknowledged.size} acknowledged, ${applied.length} applied of ${burst.length}`);
  }
  try {
    // Acknowledged in the last round, so no later patch touched its files: undo restores them.
    assert.ok(lastAcknowledged !== undefined);
    const undone = await workspace.undo(lastAcknowledged.receipt.transactionId);
    assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
    for (const [path, text] of lastAcknowledged.patch.before) assert.equal(tree.text(path), text, `undo restores ${path}`);
  } finally {
    await client.close();
  }
});
