/**
 * An outside process rewriting a file in a tight loop while patches land on it. Each outside
 * write is unique; the writer waits until its write is replaced, then writes the next. Every
 * replacement must be patchd building on that very write: a chain of applied receipts leads
 * from its sha256 to what replaced it.
 *
 * The one exception is the platform's: a write landing in the microseconds between patchd's
 * last look and its rename (see `daemon/workspace/confirm.ts`). Such a write is usually already
 * gone when the writer reads it back; on a loaded machine the daemon may be preempted inside that
 * gap, and the writer reads its write back before the rename. Either way, what replaced it was
 * built on what the write itself replaced (the content the last look saw). Tolerated only then,
 * and only rarely.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { Receipt, Workspace } from '../../client/index.ts';
import { outsideWrite, type OutsideWrite } from '../helpers/outsideWriter.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const CLIENTS = 3;
const PATCHES_PER_CLIENT = 40;
const WRITER = fileURLToPath(new URL('../helpers/outsideWriter.ts', import.meta.url));
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** Starts the writer process on `file`; `stop()` ends its loop and resolves with its log. */
function startWriter(file: string, stopFile: string): { readonly running: boolean; stop(): Promise<OutsideWrite[]> } {
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), WRITER, file, stopFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    get running() {
      return child.exitCode === null && child.signalCode === null;
    },
    async stop() {
      writeFileSync(stopFile, '');
      assert.equal(await exited, 0, 'the writer exits cleanly');
      return JSON.parse(output) as OutsideWrite[];
    },
  };
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
  const writer = startWriter(join(tree.root, 'race.md'), join(tree.base, 'stop'));
  // On a loaded machine the writer takes a while to start (it loads tsx): race it only once it writes.
  while (writer.running && tree.text('race.md') === outsideWrite(0)) await sleep(5);
  const receipts: Receipt[] = [];
  await Promise.all(workspaces.map(async (workspace, client) => {
    for (let round = 0; round < PATCHES_PER_CLIENT; round++) {
      receipts.push(await workspace.apply(`--- a/race.md\n+++ b/race.md\n@@ -1,1 +1,2 @@\n ## patches\n+patch ${client}.${round}\n`));
    }
  }));
  const writes = await writer.stop();

  const replaced = writes.filter((write) => write.replacedBy !== undefined);
  const unseen = replaced.filter((write) => !chains(receipts, write.sha256, write.replacedBy!));
  for (const write of unseen) {
    // Landed in the gap: what replaced it was built on what it replaced, the content the last look saw.
    const previous = writes[writes.indexOf(write) - 1]?.sha256 ?? sha(outsideWrite(0));
    const inGap = write.replacedAtOnce || chains(receipts, previous, write.replacedBy!);
    assert.ok(inGap, `an outside write (${write.how}, ${write.sha256}) was overwritten by something not built on it nor on what it replaced`);
  }
  assert.ok(unseen.length <= Math.max(2, writes.length * 0.05), `${unseen.length} of ${writes.length} outside writes landed inside a rename`);
  const last = writes.at(-1);
  if (last?.replacedBy === undefined) assert.equal(sha(tree.text('race.md') ?? ''), last?.sha256);
  assert.ok(replaced.length > 10, `the race was exercised (${replaced.length} outside writes replaced)`);
  const outcomes = new Set(receipts.map((receipt) => receipt.error?.code ?? receipt.status));
  for (const outcome of outcomes) assert.ok(['applied', 'stale_file', 'context_not_found'].includes(outcome), `unexpected outcome ${outcome}`);
  assert.ok(receipts.some((receipt) => receipt.status === 'applied'));
  const replanned = receipts.filter((receipt) => receipt.replanned === true).length;
  t.diagnostic(`${writes.length} outside writes, ${replaced.length - unseen.length} built on, ${unseen.length} inside a rename; ${replanned} patches re-planned; outcomes: ${[...outcomes].join(', ')}`);
});
