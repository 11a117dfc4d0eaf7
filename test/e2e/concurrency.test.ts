/**
 * Many writers, one truth: 32 clients of one shared daemon (unix socket) hammering the same
 * five files. With pinned pre-images every patch is applied or `stale_file` and the counters
 * equal the applied count exactly; without pins every patch lands (no lost update). No file
 * is ever seen torn, on the wire or on disk.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { PatchClient, Receipt, Workspace } from '../../client/index.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree, type TempTree } from '../helpers/tempTree.ts';

const CLIENTS = 32;
const PATCHES_PER_CLIENT = 50;
const FILES = ['c0.txt', 'c1.txt', 'c2.txt', 'c3.txt', 'c4.txt'];

/** A counter file: the counter line between fixed lines, so a torn write cannot look whole. */
const counterFile = (name: string, count: number) => `# ${name}\nabove\ncounter: ${count}\nbelow\n# end of ${name}\n`;
const COUNTER_FILE = /^# (c\d\.txt)\nabove\ncounter: (\d+)\nbelow\n# end of \1\n$/;

function counterOf(name: string, content: string): number {
  const match = COUNTER_FILE.exec(content);
  assert.ok(match !== null && match[1] === name, `${name} is torn: ${JSON.stringify(content)}`);
  return Number(match[2]);
}

const increment = (name: string, count: number) =>
  `--- a/${name}\n+++ b/${name}\n@@ -2,3 +2,3 @@\n above\n-counter: ${count}\n+counter: ${count + 1}\n below\n`;

describe('32 clients on one shared daemon', () => {
  let daemon: SocketDaemon;
  before(async () => {
    daemon = await SocketDaemon.start();
  });
  after(async () => {
    await daemon[Symbol.asyncDispose]();
  });

  /** Connects every client and opens `tree` on each: they must all get the same workspace. */
  async function openEverywhere(tree: TempTree): Promise<{ clients: PatchClient[]; workspaces: Workspace[] }> {
    const clients = await Promise.all(Array.from({ length: CLIENTS }, () => daemon.connect()));
    const workspaces = await Promise.all(clients.map((client) => client.openWorkspace(tree.root)));
    assert.equal(new Set(workspaces.map((workspace) => workspace.id)).size, 1, 'one root, one workspace');
    return { clients, workspaces };
  }

  /** Reads the counter files straight from disk until `done`, checking each read is whole. */
  async function watchForTears(tree: TempTree, done: Promise<unknown>): Promise<number> {
    let finished = false;
    void done.finally(() => (finished = true));
    let reads = 0;
    while (!finished) {
      for (const name of FILES) counterOf(name, readFileSync(join(tree.root, name), 'utf8'));
      reads += FILES.length;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return reads;
  }

  test('pinned with expectedSha256ByPath: counters equal the applied receipts, every other receipt is stale_file', async () => {
    using tree = createTempTree(Object.fromEntries(FILES.map((name) => [name, counterFile(name, 0)])));
    const { clients, workspaces } = await openEverywhere(tree);
    const receipts: { name: string; receipt: Receipt }[] = [];
    const run = async (workspace: Workspace, client: number) => {
      for (let round = 0; round < PATCHES_PER_CLIENT; round++) {
        const name = FILES[(client + round) % FILES.length]!;
        const read = await workspace.read(name);
        const count = counterOf(name, read.content);
        const receipt = await workspace.apply(increment(name, count), { expectedSha256ByPath: { [name]: read.sha256 } });
        receipts.push({ name, receipt });
      }
    };
    const clientsDone = Promise.all(workspaces.map(run));
    const diskReads = await watchForTears(tree, clientsDone);
    await clientsDone;
    assert.equal(receipts.length, CLIENTS * PATCHES_PER_CLIENT);
    const outcomes = receipts.map(({ receipt }) => (receipt.status === 'applied' ? 'applied' : receipt.error?.code));
    assert.deepEqual([...new Set(outcomes)].sort(), ['applied', 'stale_file']);
    for (const name of FILES) {
      const applied = receipts.filter((entry) => entry.name === name && entry.receipt.status === 'applied').length;
      assert.equal(counterOf(name, tree.text(name) ?? ''), applied, `${name}: the counter is exactly the number of applied patches`);
    }
    assert.ok(diskReads > 0);
    await Promise.all(clients.map((client) => client.close()));
  });

  test('without pins, patches with unique context all land: no lost update', async () => {
    const owners = Array.from({ length: CLIENTS }, (_, client) => `client-${String(client).padStart(2, '0')}`);
    const shared = (name: string) => `# ${name}\n${owners.map((owner) => `${owner}: 0`).join('\n')}\n`;
    using tree = createTempTree(Object.fromEntries(FILES.map((name) => [name, shared(name)])));
    const { clients, workspaces } = await openEverywhere(tree);
    const run = async (workspace: Workspace, client: number) => {
      const owner = owners[client]!;
      const counts = new Map<string, number>();
      for (let round = 0; round < PATCHES_PER_CLIENT; round++) {
        const name = FILES[round % FILES.length]!;
        const count = counts.get(name) ?? 0;
        const line = client + 2;
        const patch = `--- a/${name}\n+++ b/${name}\n@@ -${line},1 +${line},1 @@\n-${owner}: ${count}\n+${owner}: ${count + 1}\n`;
        const receipt = await workspace.apply(patch);
        assert.equal(receipt.status, 'applied', `${owner} round ${round}: ${JSON.stringify(receipt.error)}`);
        counts.set(name, count + 1);
      }
    };
    await Promise.all(workspaces.map(run));
    const perFile = PATCHES_PER_CLIENT / FILES.length;
    for (const name of FILES) assert.equal(tree.text(name), `# ${name}\n${owners.map((owner) => `${owner}: ${perFile}`).join('\n')}\n`);
    await Promise.all(clients.map((client) => client.close()));
  });
});
