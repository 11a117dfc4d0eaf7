/**
 * Row (h), the engine alone (compiled, in this process): one 200-hunk patch on a 100,000-line
 * file, parsed and planned (new bytes, hunk reports, receipt diff) from bytes as the workspace
 * reads them; then the same patch shape on 100k, 200k and 400k lines, whose cost per line must
 * stay flat. The goal is judged on CPU time (this process's, which does nothing else meanwhile):
 * on a machine shared with other work the wall time measures the neighbours too; wall p50 and
 * best are printed beside it. For scale: jsdiff's applyPatch in-process, GNU patch and git
 * apply as processes on the same file.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { applyPatch } from 'diff';
import { parsePatch, planPatch, type FileSnapshot } from '../daemon/engine/index.ts';
import { parseScalingRow } from './engineParse.ts';
import type { Row } from './rows.ts';
import { median, ms, table, timeSync, times } from './stats.ts';

interface Workload {
  readonly before: string;
  readonly bytes: Uint8Array;
  readonly patch: string;
}

/** A file of `lines` distinct lines and a patch changing `hunks` evenly spaced lines, with exact line numbers. */
export function makeWorkload(lines: number, hunks: number): Workload {
  const rows = Array.from({ length: lines }, (_, index) => `  const value${index} = compute(${index % 97}, "${index}");`);
  const parts = ['--- a/big.ts', '+++ b/big.ts'];
  const step = Math.floor(lines / (hunks + 1));
  for (let hunk = 1; hunk <= hunks; hunk++) {
    const target = hunk * step; // 0-based line changed
    const start = target - 3;
    parts.push(`@@ -${start + 1},7 +${start + 1},7 @@`);
    for (let row = start; row < start + 7; row++) {
      if (row === target) parts.push(`-${rows[row]}`, `+${rows[row]!.replace('compute', 'recompute')}`);
      else parts.push(` ${rows[row]}`);
    }
  }
  const before = `${rows.join('\n')}\n`;
  return { before, bytes: new TextEncoder().encode(before), patch: `${parts.join('\n')}\n` };
}

function runEngine({ bytes, patch }: Workload): void {
  const parsed = parsePatch({ patch });
  if (!parsed.ok) throw new Error(parsed.error.message);
  const files = new Map<string, FileSnapshot>([['big.ts', { kind: 'file', bytes }]]);
  const plan = planPatch(parsed.value, files);
  if (!plan.ok) throw new Error(plan.error.message);
}

function timeProcess(command: string, args: readonly string[], workload: Workload, runs: number): number | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'patchd-bench-engine-'));
  try {
    writeFileSync(join(dir, 'change.patch'), workload.patch);
    const samples: number[] = [];
    for (let run = 0; run < runs; run++) {
      writeFileSync(join(dir, 'big.ts'), workload.before);
      const started = performance.now();
      const result = spawnSync(command, args, { cwd: dir, stdio: 'ignore' });
      if (result.error || result.status !== 0) return undefined;
      samples.push(performance.now() - started);
    }
    return median(samples);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface EngineResults {
  readonly rows: Row[];
  /** Peers and the per-size table, printed under the rows. */
  readonly detail: string;
}

const SIZES = [100_000, 200_000, 400_000] as const;

export function benchEngine(quick: boolean): EngineResults {
  const runs = quick ? 10 : 30;
  const workloads = SIZES.map((lines) => makeWorkload(lines, 200));
  const workload = workloads[0]!;
  // Every size in turn, round after round, so a change in the machine's load hits all sizes alike.
  const wall = workloads.map(() => [] as number[]);
  const cpu = workloads.map(() => [] as number[]);
  for (const sized of workloads) for (let run = 0; run < 5; run++) runEngine(sized);
  for (let run = 0; run < runs; run++) {
    for (const [index, sized] of workloads.entries()) {
      const cpuBefore = process.cpuUsage();
      const started = performance.now();
      runEngine(sized);
      wall[index]!.push(performance.now() - started);
      const spent = process.cpuUsage(cpuBefore);
      cpu[index]!.push((spent.user + spent.system) / 1000);
    }
  }
  const perLine = SIZES.map((lines, index) => {
    const took = median(cpu[index]!);
    return { lines, took, wall: median(wall[index]!), best: Math.min(...wall[index]!), microsPerKiloLine: (took * 1000) / (lines / 1000) };
  });
  const ours = perLine[0]!.took;
  const oursWall = perLine[0]!;
  const jsdiff = timeSync(() => { if (applyPatch(workload.before, workload.patch) === false) throw new Error('jsdiff failed'); }, quick ? 5 : 10, 2);
  const gnuPatch = timeProcess('patch', ['-s', '-p1', '-i', 'change.patch'], workload, quick ? 3 : 10);
  const gitApply = timeProcess('git', ['apply', 'change.patch'], workload, quick ? 3 : 10);
  const flatness = Math.max(...perLine.map((size) => size.microsPerKiloLine)) / perLine[0]!.microsPerKiloLine;
  const peers = [['engine peer, same file and patch', 'median', 'patchd engine (wall p50) is faster by']];
  peers.push(['jsdiff applyPatch (in-process, wall)', ms(jsdiff), times(jsdiff / oursWall.wall)]);
  if (gnuPatch !== undefined) peers.push(['GNU patch (process, wall)', ms(gnuPatch), times(gnuPatch / oursWall.wall)]);
  if (gitApply !== undefined) peers.push(['git apply (process, wall)', ms(gitApply), times(gitApply / oursWall.wall)]);
  const sizes = [
    ['file lines (200 hunks)', 'CPU p50', 'wall p50', 'wall best', 'CPU µs per 1,000 lines'],
    ...perLine.map((size) => [size.lines.toLocaleString('en'), ms(size.took), ms(size.wall), ms(size.best), size.microsPerKiloLine.toFixed(1)]),
  ];
  return {
    rows: [
      {
        id: 'h1', label: 'engine: 200 hunks, 100,000 lines, CPU p50', ours: `${ms(ours)} (wall p50 ${ms(oursWall.wall)}, best ${ms(oursWall.best)})`, peer: `${ms(jsdiff)} (jsdiff applyPatch)`, peerValue: jsdiff,
        value: ours, shown: ms(ours), better: 'lower', goal: 10, goalText: '≤ 10 ms', tolerance: 3,
      },
      {
        id: 'h2', label: 'engine: CPU per line, worst of 100k/200k/400k ÷ 100k', ours: perLine.map((size) => size.microsPerKiloLine.toFixed(1)).join(' / ') + ' µs/1k lines',
        peer: '—', value: flatness, shown: times(flatness), better: 'lower', goal: 1.25, goalText: '≤ 1.25× (flat)', tolerance: 1.5,
      },
      parseScalingRow(quick),
    ],
    detail: [table(peers), '', table(sizes)].join('\n'),
  };
}
