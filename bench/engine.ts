/**
 * Engine benchmark: one 200-hunk patch on a 100,000-line file, against jsdiff's applyPatch
 * (in-process) and GNU patch / git apply (processes, as harnesses run them); then the same
 * patch shape over growing files, to show the cost grows linearly when hints are right.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPatch } from 'diff';
import { parsePatch, planPatch, type FileSnapshot } from '../daemon/engine/index.ts';
import { ms, ratio, table, timeSync } from './stats.ts';

interface Workload { readonly before: string; readonly patch: string }

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
  return { before: `${rows.join('\n')}\n`, patch: `${parts.join('\n')}\n` };
}

function runEngine({ before, patch }: Workload): void {
  const parsed = parsePatch({ patch });
  if (!parsed.ok) throw new Error(parsed.error.message);
  const files = new Map<string, FileSnapshot>([['big.ts', { kind: 'file', bytes: new TextEncoder().encode(before) }]]);
  const plan = planPatch(parsed.value, files);
  if (!plan.ok) throw new Error(plan.error.message);
}

function timeProcess(command: string, args: (dir: string) => string[], workload: Workload, runs = 10): number | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'patchd-bench-'));
  try {
    writeFileSync(join(dir, 'change.patch'), workload.patch);
    const samples: number[] = [];
    for (let run = 0; run < runs; run++) {
      writeFileSync(join(dir, 'big.ts'), workload.before);
      const started = performance.now();
      const result = spawnSync(command, args(dir), { cwd: dir, stdio: 'ignore' });
      if (result.error || result.status !== 0) return undefined;
      samples.push(performance.now() - started);
    }
    return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function benchEngine(): string {
  const workload = makeWorkload(100_000, 200);
  const ours = timeSync(() => runEngine(workload));
  const jsdiff = timeSync(() => { if (applyPatch(workload.before, workload.patch) === false) throw new Error('jsdiff failed'); }, 10, 2);
  const gnuPatch = timeProcess('patch', () => ['-s', '-p1', '-i', 'change.patch'], workload);
  const gitApply = timeProcess('git', () => ['apply', 'change.patch'], workload);
  const rows = [['tool', 'median', 'patchd is faster by']];
  rows.push(['patchd engine (parse + plan + receipt diff)', ms(ours), '—']);
  rows.push(['jsdiff applyPatch (in-process)', ms(jsdiff), ratio(ours, jsdiff)]);
  if (gnuPatch !== undefined) rows.push(['GNU patch (process)', ms(gnuPatch), ratio(ours, gnuPatch)]);
  if (gitApply !== undefined) rows.push(['git apply (process)', ms(gitApply), ratio(ours, gitApply)]);
  const scaling = [['file lines', 'median', 'µs per 1,000 lines']];
  for (const lines of [25_000, 50_000, 100_000, 200_000, 400_000]) {
    const sized = makeWorkload(lines, 200);
    const time = timeSync(() => runEngine(sized), 8, 2);
    scaling.push([lines.toLocaleString('en'), ms(time), ((time * 1000) / (lines / 1000)).toFixed(1)]);
  }
  return [
    '## Engine: one 200-hunk patch on a 100,000-line file (target ≤ 10 ms)',
    table(rows),
    '',
    '## Engine scaling with file size (200 hunks, right hints): cost per line should stay flat',
    table(scaling),
  ].join('\n');
}
