/**
 * An outside process rewriting a file in a tight loop while patches land on it. Each outside
 * write is unique; the writer waits until its write is replaced, then writes the next. Every
 * replacement must be patchd building on that very write: a chain of applied receipts leads
 * from its sha256 to what replaced it. An outside write is never silently overwritten.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Receipt, Workspace } from '../../client/index.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const CLIENTS = 3;
const PATCHES_PER_CLIENT = 40;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const outsideWrite = (k: number) => `## patches\noutside write ${k}\n`;

interface ObservedWrite {
  readonly sha256: string;
  /** What the writer found in its place; undefined when it was still on disk at the end. */
  readonly replacedBy?: string;
}

/** Writes unique contents, each after the previous one was replaced, alternating in-place writes and editor-style saves. */
async function writeInLoop(file: string, done: () => boolean): Promise<ObservedWrite[]> {
  const writes: ObservedWrite[] = [];
  for (let k = 1; !done(); k++) {
    const text = outsideWrite(k);
    if (k % 2 === 0) writeFileSync(file, text);
    else {
      writeFileSync(`${file}.swp`, text);
      renameSync(`${file}.swp`, file);
    }
    let now = readFileSync(file, 'utf8');
    while (now === text && !done()) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      now = readFileSync(file, 'utf8');
    }
    writes.push(now === text ? { sha256: sha(text) } : { sha256: sha(text), replacedBy: sha(now) });
  }
  return writes;
}

/** Whether applied receipts chain from `from` to `to` (before → after, for this file). */
function chains(receipts: readonly Receipt[], from: string, to: string): boolean {
  const next = new Map<string, string[]>();
  for (const file of receipts.flatMap((receipt) => (receipt.status === 'applied' ? receipt.files : []))) {
    if (file.sha256Before !== undefined && file.sha256After !== undefined) next.set(file.sha256Before, [...(next.get(file.sha256Before) ?? []), file.sha256After]);
  }
  const seen = new Set<string>();
  const stack = [from];
  for (let at = stack.pop(); at !== undefined; at = stack.pop()) {
    if (at === to) return true;
    if (seen.has(at)) continue;
    seen.add(at);
    stack.push(...(next.get(at) ?? []));
  }
  return false;
}

test('an outside writer racing the daemon: every outside write is still on disk or was the base patchd built on', async (t) => {
  using tree = createTempTree({ 'race.md': outsideWrite(0) });
  await using daemon = await SocketDaemon.start();
  const workspaces: Workspace[] = [];
  for (let client = 0; client < CLIENTS; client++) workspaces.push(await (await daemon.connect()).openWorkspace(tree.root));
  const receipts: Receipt[] = [];
  let patchesDone = false;
  const patching = Promise.all(workspaces.map(async (workspace, client) => {
    for (let round = 0; round < PATCHES_PER_CLIENT; round++) {
      receipts.push(await workspace.apply(`--- a/race.md\n+++ b/race.md\n@@ -1,1 +1,2 @@\n ## patches\n+patch ${client}.${round}\n`));
    }
  })).finally(() => (patchesDone = true));
  const writes = await writeInLoop(join(tree.root, 'race.md'), () => patchesDone);
  await patching;

  const replaced = writes.filter((write) => write.replacedBy !== undefined);
  for (const write of replaced) assert.ok(chains(receipts, write.sha256, write.replacedBy!), `an outside write (${write.sha256}) was overwritten by something not built on it`);
  const last = writes.at(-1);
  if (last?.replacedBy === undefined) assert.equal(sha(tree.text('race.md') ?? ''), last?.sha256);
  assert.ok(replaced.length > 10, `the race was exercised (${replaced.length} outside writes replaced)`);
  const outcomes = new Set(receipts.map((receipt) => receipt.error?.code ?? receipt.status));
  for (const outcome of outcomes) assert.ok(['applied', 'stale_file', 'context_not_found'].includes(outcome), `unexpected outcome ${outcome}`);
  assert.ok(receipts.some((receipt) => receipt.status === 'applied'));
  const replanned = receipts.filter((receipt) => receipt.replanned === true).length;
  t.diagnostic(`${writes.length} outside writes, ${replaced.length} built on; ${replanned} patches re-planned; outcomes: ${[...outcomes].join(', ')}`);
});
