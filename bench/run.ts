/**
 * `npm run bench`: every row of issue #11's table, each against its peer measured in this run,
 * then the breakdown of one applied patch, the engine's peers and sizes, and the shared daemon.
 * Runs compiled (`dist/bench/run.js`, built by the npm script). Results go to
 * bench/results/latest.json; each row is compared with bench/baseline.json, and a row worse than
 * the baseline beyond its noise allowance fails the run: on the machine the baseline came from,
 * as busy as then, and with the row's peer about as fast as then (`Row.peerValue`).
 *
 *   npm run bench                       the full run (a few minutes)
 *   npm run bench -- --quick            fewer samples, 2 s idle for row (f); never fails on the baseline
 *   npm run bench -- --save-baseline    also writes this run as the new baseline
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform } from 'node:os';
import { join } from 'node:path';
import { benchBreakdown } from './breakdown.ts';
import { benchCli } from './cli.ts';
import { benchConcurrency } from './concurrency.ts';
import { describeCreate, fileCreateMicros } from './createCost.ts';
import { benchDaemon } from './daemon.ts';
import { benchEngine } from './engine.ts';
import { REPO_ROOT } from './repo.ts';
import { met, PEER_MOVED, peerMovedBy, rowsTable, worseBy, type Row } from './rows.ts';
import { table, times } from './stats.ts';

interface Results {
  readonly date: string;
  readonly commit: string;
  readonly node: string;
  readonly machine: string;
  /** The 1-minute load average per core, the highest seen during the run. */
  readonly loadPerCore: number;
  readonly quick: boolean;
  readonly rows: readonly (Pick<Row, 'id' | 'label' | 'ours' | 'peer' | 'peerValue' | 'value' | 'better' | 'goal'> & { readonly met: boolean })[];
}

const argv = process.argv.slice(2);
const quick = argv.includes('--quick') || process.env.PATCHD_BENCH_QUICK === '1';
const saveBaseline = argv.includes('--save-baseline');
const BASELINE = join(REPO_ROOT, 'bench', 'baseline.json');
const LATEST = join(REPO_ROOT, 'bench', 'results', 'latest.json');
/** A run fails on the baseline only when the machine was about as busy as when the baseline was measured (load per core). */
const MAX_LOAD_DIFFERENCE = 0.5;
/** Worse than the baseline by more than this is reported (failing needs the row's own, larger, tolerance). */
const NOTICE = 1.2;

const print = (text: string) => process.stdout.write(`${text}\n\n`);

const createAtStart = fileCreateMicros();
print(`# patchd benchmark${quick ? ' (--quick: fewer samples, short idle)' : ''} — ${machine()}, Node ${process.version}, load ${loadPerCore().toFixed(2)} per core, ${describeCreate(createAtStart)}`);
let highestLoad = loadPerCore();
const noteLoad = <T>(value: T): T => {
  highestLoad = Math.max(highestLoad, loadPerCore());
  return value;
};
const daemon = noteLoad(await benchDaemon({ quick, idleMs: quick ? 2_000 : 10_000 }));
const cli = noteLoad(benchCli(quick));
const breakdown = noteLoad(await benchBreakdown(daemon.applied, quick));
const engine = noteLoad(benchEngine(quick));
const rows = [...daemon.rows, cli, ...engine.rows].sort((a, b) => a.id.localeCompare(b.id));

print(`## Issue #11, every row (same run, same machine)\n${rowsTable(rows)}`);
print(`## Where one applied patch's time goes\n${breakdown}`);
print(`## Where row (a)'s time goes: CPU in user space and in the kernel\n${daemon.throughputCpu}\n\nAfter every row, ${describeCreate(fileCreateMicros())} (${Math.round(createAtStart)} µs before the first).`);
print(`## Engine peers and sizes (row h)\n${engine.detail}`);
if (!quick) print(await benchConcurrency());

const results: Results = {
  date: new Date().toISOString(), commit: gitHead(), node: process.version, machine: machine(), loadPerCore: highestLoad, quick,
  rows: rows.map(({ id, label, ours, peer, peerValue, value, better, goal }, index) => ({ id, label, ours, peer, peerValue, value, better, goal, met: met(rows[index]!) })),
};
mkdirSync(join(REPO_ROOT, 'bench', 'results'), { recursive: true });
writeFileSync(LATEST, `${JSON.stringify(results, null, 2)}\n`);
if (saveBaseline) writeFileSync(BASELINE, `${JSON.stringify(results, null, 2)}\n`);
process.exitCode = compareWithBaseline(rows);

function compareWithBaseline(current: readonly Row[]): number {
  if (!existsSync(BASELINE)) {
    print('No bench/baseline.json: nothing to compare with (`npm run bench -- --save-baseline` writes one).');
    return 0;
  }
  const baseline = JSON.parse(readFileSync(BASELINE, 'utf8')) as Results;
  const similarLoad = Math.abs(highestLoad - (baseline.loadPerCore ?? Number.POSITIVE_INFINITY)) <= MAX_LOAD_DIFFERENCE;
  const comparable = baseline.machine === machine() && !quick && !baseline.quick && similarLoad;
  const lines = [['row', 'baseline', 'now', 'change', 'verdict']];
  const regressions: string[] = [];
  for (const row of current) {
    const before = baseline.rows.find((candidate) => candidate.id === row.id);
    if (before === undefined) continue;
    const worse = worseBy(row, before.value);
    const peerMoved = peerMovedBy(row, before.peerValue);
    const verdict = peerMoved !== undefined && peerMoved > PEER_MOVED
      ? `not compared: its peer moved ${times(peerMoved)}`
      : worse > row.tolerance ? 'REGRESSION' : worse > NOTICE ? 'worse (within noise)' : worse < 1 / NOTICE ? 'better' : 'same';
    if (verdict === 'REGRESSION') regressions.push(row.id);
    lines.push([`(${row.id})`, show(row, before.value), row.shown, worse > 1.005 ? `${times(worse)} worse` : worse < 0.995 ? `${times(1 / worse)} better` : '=', verdict]);
  }
  const why = quick || baseline.quick ? 'a quick run' : baseline.machine !== machine() ? 'another machine' : `load ${highestLoad.toFixed(2)} per core here, ${baseline.loadPerCore?.toFixed(2) ?? '?'} then`;
  const heading = `## Against the baseline (${baseline.commit.slice(0, 10)}, ${baseline.date.slice(0, 10)}${comparable ? '' : `; ${why}: reported, never failed`})`;
  print(`${heading}\n${table(lines)}`);
  if (regressions.length === 0) return 0;
  print(`REGRESSION in row${regressions.length > 1 ? 's' : ''} ${regressions.join(', ')}: worse than the baseline beyond the noise allowance${comparable ? '' : ' (not failed: see above)'}.`);
  return comparable ? 1 : 0;
}

function show(row: Row, value: number): string {
  return row.shown.endsWith('ms') ? `${value.toFixed(2)} ms` : times(value);
}

function machine(): string {
  const cores = cpus();
  return `${platform()}, ${cores.length} × ${cores[0]?.model.trim() ?? 'unknown CPU'}`;
}

function loadPerCore(): number {
  return loadavg()[0]! / cpus().length;
}

function gitHead(): string {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}
