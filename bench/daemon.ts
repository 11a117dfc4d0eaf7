/**
 * Daemon benchmarks through the client library and a spawned daemon: small-patch round-trip
 * latency, and 1,000 single-hunk patches to distinct files of a 2,000-file workspace with 32
 * in flight — against `git apply` once per patch and the filesystem floor (write a temp file,
 * fsync, rename; one file after another) measured in the same run.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PatchClient, type Workspace } from '../client/index.ts';
import { median, ms, percentile, table } from './stats.ts';

const FILES = 2_000;
const PATCHES = 1_000;
const IN_FLIGHT = 32;
const GIT_APPLY_SAMPLE = 200;

const fileName = (index: number) => `src/module${Math.floor(index / 100)}/file${index}.ts`;
const fileText = (index: number) => `// file ${index}\nexport const name = "file${index}";\nexport const value = ${index};\nexport default value;\n`;
const patchFor = (index: number) =>
  `--- a/${fileName(index)}\n+++ b/${fileName(index)}\n@@ -2,3 +2,3 @@\n export const name = "file${index}";\n-export const value = ${index};\n+export const value = ${index} + 1;\n export default value;\n`;

function makeWorkspace(): string {
  const root = mkdtempSync(join(tmpdir(), 'patchd-bench-ws-'));
  for (let index = 0; index < FILES; index++) {
    mkdirSync(join(root, fileName(index), '..'), { recursive: true });
    writeFileSync(join(root, fileName(index)), fileText(index));
  }
  return root;
}

async function patchesPerSecond(workspace: Workspace): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < PATCHES) {
      const receipt = await workspace.apply(patchFor(next++), { format: 'unified' });
      if (receipt.status !== 'applied') throw new Error(`patch rejected: ${receipt.error?.message}`);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return PATCHES / ((performance.now() - started) / 1000);
}

async function roundTrips(workspace: Workspace, dryRun: boolean): Promise<number[]> {
  const samples: number[] = [];
  for (let run = 0; run < 300; run++) {
    const index = FILES - 1 - run;
    const started = performance.now();
    const receipt = await workspace.apply(dryRun ? patchFor(index) : touchFor(index), { format: 'unified', dryRun });
    samples.push(performance.now() - started);
    if (receipt.status === 'rejected') throw new Error(`patch rejected: ${receipt.error?.message}`);
  }
  return samples.slice(50);
}

/** A patch on a file's first line, which `patchFor` leaves alone (each file is touched once). */
function touchFor(index: number): string {
  return `--- a/${fileName(index)}\n+++ b/${fileName(index)}\n@@ -1,1 +1,1 @@\n-// file ${index}\n+// file ${index} (touched)\n`;
}

function gitApplyPerSecond(): number {
  const root = makeWorkspace();
  try {
    const started = performance.now();
    for (let index = 0; index < GIT_APPLY_SAMPLE; index++) {
      const result = spawnSync('git', ['apply', '-'], { cwd: root, input: patchFor(index) });
      if (result.status !== 0) throw new Error(`git apply failed: ${result.stderr}`);
    }
    return GIT_APPLY_SAMPLE / ((performance.now() - started) / 1000);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** The least any durable writer must do per file: write a temp file, fsync it, rename it over the target. */
function floorPerSecond(): number {
  const root = makeWorkspace();
  try {
    const started = performance.now();
    for (let index = 0; index < PATCHES; index++) {
      const target = join(root, fileName(index));
      const temp = `${target}.tmp`;
      const fd = openSync(temp, 'w');
      writeSync(fd, fileText(index).replace(`= ${index};`, `= ${index} + 1;`));
      fsyncSync(fd);
      closeSync(fd);
      renameSync(temp, target);
    }
    return PATCHES / ((performance.now() - started) / 1000);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export async function benchDaemon(): Promise<string> {
  const root = makeWorkspace();
  try {
    await using client = await PatchClient.spawn();
    await using workspace = await client.openWorkspace(root);
    await roundTrips(workspace, true); // warm the pool and the JIT
    const dry = await roundTrips(workspace, true);
    const applied = await roundTrips(workspace, false);
    const ours = await patchesPerSecond(workspace);
    const git = gitApplyPerSecond();
    const floor = floorPerSecond();
    const rate = (value: number) => `${Math.round(value)}/s`;
    return [
      `## Throughput: ${PATCHES} single-hunk patches to distinct files of a ${FILES}-file workspace, ${IN_FLIGHT} in flight (target ≥ 2,000/s)`,
      table([
        ['writer', 'patches/s', 'patchd ÷ writer'],
        ['patchd (one daemon, full durability)', rate(ours), '—'],
        [`git apply, once per patch (${GIT_APPLY_SAMPLE} sampled)`, rate(git), `${(ours / git).toFixed(2)}×`],
        ['filesystem floor (temp + fsync + rename, sequential)', rate(floor), `${(ours / floor).toFixed(2)}×`],
      ]),
      '',
      '## Round trip of one small patch, sequential (target p50 ≤ 1 ms)',
      table([
        ['kind', 'p50', 'p99'],
        ['dry run', ms(median(dry)), ms(percentile(dry, 99))],
        ['applied (fsynced)', ms(median(applied)), ms(percentile(applied, 99))],
      ]),
    ].join('\n');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
