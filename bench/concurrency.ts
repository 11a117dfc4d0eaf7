/**
 * Shared-daemon benchmarks (`patchd serve --socket`): 1,000 single-hunk patches to distinct
 * files of a 2,000-file workspace from 8 socket clients at once, with per-patch latency; and
 * what opening a 100,000-file workspace costs the daemon in time and memory, against a
 * 10-file one (the target: under 100 ms and no per-file cost).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PatchClient, type Workspace } from '../client/index.ts';
import { daemonArgs } from '../client/daemonProcess.ts';
import { median, ms, percentile, table } from './stats.ts';

const FILES = 2_000;
const PATCHES = 1_000;
const CLIENTS = 8;
const HUGE_TREE = 100_000;

const fileName = (index: number) => `src/module${Math.floor(index / 100)}/file${index}.ts`;
const fileText = (index: number) => `// file ${index}\nexport const value = ${index};\nexport default value;\n`;
const patchFor = (index: number) =>
  `--- a/${fileName(index)}\n+++ b/${fileName(index)}\n@@ -1,3 +1,3 @@\n // file ${index}\n-export const value = ${index};\n+export const value = ${index} + 1;\n export default value;\n`;

/** A tree of `count` small files, 100 per directory. */
function makeTree(base: string, count: number): string {
  const root = join(base, `tree-${count}`);
  for (let index = 0; index < count; index++) {
    if (index % 100 === 0) mkdirSync(join(root, fileName(index), '..'), { recursive: true });
    writeFileSync(join(root, fileName(index)), fileText(index));
  }
  return root;
}

/** A `patchd serve --socket` child; resolves once it listens. */
async function startDaemon(dir: string): Promise<{ child: ChildProcessWithoutNullStreams; socket: string }> {
  const socket = join(dir, 'patchd.sock');
  const child = spawn(process.execPath, [...daemonArgs(), '--socket', socket, '--state-dir', join(dir, 'state')], { stdio: 'pipe' });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      log += text;
      if (log.includes('"msg":"serving"')) resolve();
    });
    child.once('exit', () => reject(new Error(`the daemon exited:\n${log}`)));
  });
  return { child, socket };
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? Number.NaN) / 1024;
}

/** Every client applies its share of the patches, `inFlight` at a time; returns per-patch latencies and the wall time. */
async function patchFromClients(workspaces: readonly Workspace[], first: number, inFlight: number): Promise<{ latencies: number[]; wallMs: number }> {
  const latencies: number[] = [];
  let next = first;
  const started = performance.now();
  const worker = async (workspace: Workspace) => {
    while (next < first + PATCHES) {
      const index = next++;
      const sent = performance.now();
      const receipt = await workspace.apply(patchFor(index), { format: 'unified' });
      latencies.push(performance.now() - sent);
      if (receipt.status !== 'applied') throw new Error(`patch ${index} rejected: ${receipt.error?.message}`);
    }
  };
  await Promise.all(workspaces.flatMap((workspace) => Array.from({ length: inFlight }, () => worker(workspace))));
  return { latencies, wallMs: performance.now() - started };
}

async function throughputRows(socket: string, root: string): Promise<string[][]> {
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => PatchClient.connect({ socket })));
  try {
    const workspaces = await Promise.all(clients.map((client) => client.openWorkspace(root)));
    await Promise.all(workspaces.map((workspace) => workspace.apply(patchFor(FILES - 1), { dryRun: true }))); // warm the pool
    const rows: string[][] = [];
    for (const [run, inFlight] of [1, 4].entries()) {
      const { latencies, wallMs } = await patchFromClients(workspaces, run * PATCHES, inFlight);
      const rate = `${Math.round(PATCHES / (wallMs / 1000))}/s`;
      rows.push([`${CLIENTS} clients × ${inFlight} in flight`, rate, ms(median(latencies)), ms(percentile(latencies, 99))]);
    }
    return rows;
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
}

/** Opens (and closes) `root` five times; the median and worst round trip, and the daemon's RSS growth once open with one file read. */
async function openCost(socket: string, pid: number, root: string, aFile: string): Promise<{ median: number; worst: number; rssMb: number }> {
  const client = await PatchClient.connect({ socket });
  try {
    const samples: number[] = [];
    for (let run = 0; run < 5; run++) {
      const started = performance.now();
      const workspace = await client.openWorkspace(root);
      samples.push(performance.now() - started);
      await workspace.close();
    }
    const before = rssMb(pid);
    const workspace = await client.openWorkspace(root);
    await workspace.read(aFile);
    const grown = rssMb(pid) - before;
    await workspace.close();
    return { median: median(samples), worst: Math.max(...samples), rssMb: grown };
  } finally {
    await client.close();
  }
}

export async function benchConcurrency(): Promise<string> {
  const base = mkdtempSync(join(tmpdir(), 'patchd-bench-concurrency-'));
  const daemon = await startDaemon(base);
  try {
    const throughput = await throughputRows(daemon.socket, makeTree(base, FILES));
    const pid = daemon.child.pid!;
    const small = await openCost(daemon.socket, pid, makeTree(base, 10), fileName(0));
    const huge = await openCost(daemon.socket, pid, makeTree(base, HUGE_TREE), fileName(HUGE_TREE - 1));
    const openRow = (label: string, cost: typeof small) => [label, ms(cost.median), ms(cost.worst), `${cost.rssMb.toFixed(1)} MB`];
    return [
      `## Shared daemon: ${PATCHES} single-hunk patches to distinct files of a ${FILES}-file workspace, ${CLIENTS} socket clients at once`,
      table([['clients', 'patches/s', 'p50 latency', 'p99 latency'], ...throughput]),
      '',
      '## Opening a workspace on the shared daemon (round trip; RSS growth once open with one file read) — target < 100 ms, no per-file cost',
      table([['workspace', 'open p50', 'open worst', 'daemon RSS'], openRow('10 files', small), openRow(`${HUGE_TREE.toLocaleString('en')} files`, huge)]),
    ].join('\n');
  } finally {
    daemon.child.kill('SIGTERM');
    rmSync(base, { recursive: true, force: true });
  }
}
