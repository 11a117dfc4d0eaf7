/**
 * Rows (a)–(f) of issue #11, through one compiled daemon (`dist/`) on a bare JSON-RPC
 * connection, each against its peer measured in the same run: `git apply` spawned once per
 * patch, the filesystem floor (temp + fsync + rename) in this process, and an unknown-method
 * round trip to the same daemon.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { warmUp } from '../daemon/server/warmUp.ts';
import type { Receipt } from '../protocol/index.ts';
import { cpuPer, cpuTable, ownCpu, procCpu } from './cpu.ts';
import { oneFileFloor, parallelFloor, parallelFloorWithThreads } from './floor.ts';
import { BenchDaemon } from './rpc.ts';
import type { Row } from './rows.ts';
import { median, ms, percentile, perSecond, runConcurrently, sleep, timed, times } from './stats.ts';
import { makeTree, patchFor, touchFor } from './tree.ts';

const FILES = 2_000;
const PATCHES = 1_000;
const IN_FLIGHT = 32;
/** Files 1000–1999 take the sequential patches ((c), (d), (f)); 0–999 the throughput run. */
const SEQUENTIAL_FILES = 1_000;
/** libuv threads of the second floor run. */
const FLOOR_THREADS = 64;
/**
 * Concurrent patches to another tree before row (a) is measured, after the daemon's first
 * 1,000 (whose rate the row shows too): V8 compiles the commit path only after thousands of
 * runs, and until then a patch costs about half as much CPU again. A long-lived daemon is warm.
 */
const WARM_UP_PATCHES = 2_000;

export interface DaemonOptions {
  readonly quick: boolean;
  /** How long the daemon sits idle before row (f)'s patch. */
  readonly idleMs: number;
}

/** What one applied patch costs as the daemon reports it, for the breakdown. */
export interface AppliedPhases {
  readonly roundTripMs: number;
  /** Round trip minus the daemon's own `totalMs`: the wire, framing and JSON both ways. */
  readonly rpcMs: number;
  readonly parseMs: number;
  readonly planMs: number;
  readonly commitMs: number;
  readonly totalMs: number;
}

export interface DaemonResults {
  readonly rows: Row[];
  readonly applied: AppliedPhases;
  /** Row (a)'s CPU per patch, user and kernel, against the floor's per file: a table. */
  readonly throughputCpu: string;
}

export async function benchDaemon(options: DaemonOptions): Promise<DaemonResults> {
  const scratch = mkdtempSync(join(tmpdir(), 'patchd-bench-'));
  const trees: string[] = [];
  const tree = (prefix: string, count = FILES) => {
    const root = makeTree(count, prefix);
    trees.push(root);
    return root;
  };
  try {
    await using daemon = await BenchDaemon.start(['--state-dir', join(scratch, 'state')]);
    const open = await openAndFirstPatch(daemon, options.quick ? 3 : 7, () => tree('patchd-bench-open-', 20));
    const root = tree('patchd-bench-ws-');
    const floorRoot = tree('patchd-bench-floor-');
    const workspaceId = await daemon.openWorkspace(root);
    const sequential = new SequentialFiles(daemon, workspaceId);
    const warmDryRuns = options.quick ? 30 : 100;
    await sequential.dryRuns(warmDryRuns); // warm the JIT, the pool and the caches, and read (so watch) the files the samples use
    const dry = await dryRunsAgainstUnknownMethod(sequential, daemon, options.quick ? 100 : 300, warmDryRuns);
    const applied = await appliedAgainstFloor(sequential, floorRoot, options.quick ? 60 : 200);
    const throughput = await throughputAgainstPeers(daemon, workspaceId, tree('patchd-bench-warm-', PATCHES + WARM_UP_PATCHES), floorRoot, tree('patchd-bench-git-'));
    const idle = await afterIdle(sequential, daemon, floorRoot, options.quick ? 1 : 3, options.idleMs);
    const warm = applied.samples.map((sample) => sample.roundTripMs);
    return {
      rows: [
        throughput.gitRow, throughput.floorRow, applied.row, dry.row, open.row,
        idleRow(idle, warm, applied.floor, options.idleMs),
      ],
      applied: medianPhases(applied.samples),
      throughputCpu: throughput.cpu,
    };
  } finally {
    for (const root of trees) rmSync(root, { recursive: true, force: true });
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Patches to the sequential files, each file patched at most once per round. */
class SequentialFiles {
  readonly #daemon: BenchDaemon;
  readonly #workspaceId: string;
  #next = 0;

  constructor(daemon: BenchDaemon, workspaceId: string) {
    this.#daemon = daemon;
    this.#workspaceId = workspaceId;
  }

  async dryRuns(count: number): Promise<void> {
    for (let run = 0; run < count; run++) await this.dryRun(run);
  }

  dryRun(run: number): Promise<Receipt> {
    return this.#daemon.apply({ workspaceId: this.#workspaceId, patch: touchFor(SEQUENTIAL_FILES + (run % SEQUENTIAL_FILES), 0), format: 'unified', dryRun: true }, 'dry_run');
  }

  /** Applies the next file's next touch. */
  apply(): Promise<Receipt> {
    const run = this.#next++;
    const patch = touchFor(SEQUENTIAL_FILES + (run % SEQUENTIAL_FILES), Math.floor(run / SEQUENTIAL_FILES));
    return this.#daemon.apply({ workspaceId: this.#workspaceId, patch, format: 'unified' }, 'applied');
  }
}

/** (e) `workspace/open` of a root this daemon never saw, then its first applied patch; closed after. */
async function openAndFirstPatch(daemon: BenchDaemon, samples: number, freshRoot: () => string): Promise<{ row: Row }> {
  const opens: number[] = [];
  const patches: number[] = [];
  for (let sample = 0; sample < samples; sample++) {
    const root = freshRoot();
    const { value: workspaceId, ms: opening } = await timed(() => daemon.openWorkspace(root));
    const { ms: patching } = await timed(() => daemon.apply({ workspaceId, patch: patchFor(0), format: 'unified' }, 'applied'));
    opens.push(opening);
    patches.push(patching);
    await daemon.closeWorkspace(workspaceId);
  }
  const totals = opens.map((opening, sample) => opening + patches[sample]!);
  const value = median(totals);
  return {
    row: {
      id: 'e', label: 'workspace/open + first applied patch',
      ours: `${ms(value)} (open ${ms(median(opens))} + patch ${ms(median(patches))}; first ever ${ms(totals[0]!)})`,
      peer: '—', value, shown: ms(value), better: 'lower', goal: 20, goalText: '≤ 20 ms', tolerance: 3,
    },
  };
}

/**
 * (d) Dry runs and unknown-method requests, interleaved so both see the same load. The dry runs
 * cycle over the `files` the warm-up already read: a file's first read sets its watch after the
 * reply, work that would otherwise land on the unknown-method request timed next.
 */
async function dryRunsAgainstUnknownMethod(sequential: SequentialFiles, daemon: BenchDaemon, samples: number, files: number): Promise<{ row: Row }> {
  const dry: number[] = [];
  const unknown: number[] = [];
  for (let run = 0; run < samples; run++) {
    dry.push((await timed(() => sequential.dryRun(run % files))).ms);
    unknown.push((await timed(() => daemon.unknownMethod())).ms);
  }
  const value = median(dry) / median(unknown);
  return {
    row: {
      id: 'd', label: 'small dry run, sequential p50 ÷ unknown method', ours: ms(median(dry)), peer: `${ms(median(unknown))} (unknown method)`, peerValue: median(unknown),
      value, shown: times(value), better: 'lower', goal: 1.3, goalText: '≤ 1.3×', tolerance: 1.75,
    },
  };
}

interface AppliedSample extends AppliedPhases {}

/** (c) Applied patches, one at a time, interleaved with one-file floor writes. */
async function appliedAgainstFloor(sequential: SequentialFiles, floorRoot: string, count: number): Promise<{ row: Row; samples: AppliedSample[]; floor: number[] }> {
  const samples: AppliedSample[] = [];
  const floor: number[] = [];
  for (let run = 0; run < count; run++) {
    const { value: receipt, ms: roundTripMs } = await timed(() => sequential.apply());
    const { parseMs, planMs, commitMs, totalMs } = receipt.timings;
    samples.push({ roundTripMs, rpcMs: roundTripMs - totalMs, parseMs, planMs, commitMs, totalMs });
    floor.push(await oneFileFloor(floorRoot, SEQUENTIAL_FILES + run, run));
  }
  const ours = median(samples.map((sample) => sample.roundTripMs));
  const value = ours / median(floor);
  return {
    samples,
    floor,
    row: {
      id: 'c', label: 'small patch applied, sequential p50 ÷ fsync floor', ours: ms(ours), peer: `${ms(median(floor))} (temp + fsync + rename)`, peerValue: median(floor),
      value, shown: times(value), better: 'lower', goal: 2, goalText: '≤ 2×', tolerance: 1.75,
    },
  };
}

/** (a), (b) 1,000 single-hunk patches to distinct files, 32 in flight, against `git apply` per patch and the parallel floor. */
async function throughputAgainstPeers(
  daemon: BenchDaemon, workspaceId: string, warmRoot: string, floorRoot: string, gitRoot: string,
): Promise<{ gitRow: Row; floorRow: Row; cpu: string }> {
  const warmId = await daemon.openWorkspace(warmRoot);
  const first = await concurrentRate(daemon, warmId, 0, PATCHES);
  await concurrentRate(daemon, warmId, PATCHES, WARM_UP_PATCHES);
  await daemon.closeWorkspace(warmId);
  // The floor with this process's threadpool (libuv's default of 4) and with a large one, as a daemon may run with.
  const floorBefore = ownCpu();
  const floors = [await parallelFloor(floorRoot, 0, PATCHES, IN_FLIGHT)];
  const floorCpu = cpuPer(floorBefore, ownCpu(), PATCHES);
  floors.push(parallelFloorWithThreads(floorRoot, 0, PATCHES, IN_FLIGHT, FLOOR_THREADS));
  const before = { main: procCpu(daemon.pid, daemon.pid), all: procCpu(daemon.pid) };
  const ours = await concurrentRate(daemon, workspaceId, 0, PATCHES);
  const cpu = cpuTable('patch or file, row (a)', [
    ['patchd daemon, main thread', cpuPer(before.main, procCpu(daemon.pid, daemon.pid), PATCHES)],
    ['patchd daemon, every thread', cpuPer(before.all, procCpu(daemon.pid), PATCHES)],
    ['fsync floor, this process (4 threads)', floorCpu],
  ]);
  const warmth = `after ${WARM_UP_PATCHES.toLocaleString('en')} on another tree; the daemon's first ${PATCHES.toLocaleString('en')}: ${perSecond(first)}`;
  floors.push(await parallelFloor(floorRoot, 0, PATCHES, IN_FLIGHT), parallelFloorWithThreads(floorRoot, 0, PATCHES, IN_FLIGHT, FLOOR_THREADS));
  const floor = Math.max(...floors);
  const gitMs = await runConcurrently(PATCHES, IN_FLIGHT, (index) => gitApply(gitRoot, patchFor(index)));
  const git = PATCHES / (gitMs / 1000);
  return {
    cpu,
    gitRow: {
      id: 'a', label: `${PATCHES.toLocaleString('en')} patches, ${IN_FLIGHT} in flight: patches/s ÷ git apply`, ours: `${perSecond(ours)} (${warmth})`, peer: `${perSecond(git)} (git apply, a process per patch)`, peerValue: git,
      value: ours / git, shown: times(ours / git), better: 'higher', goal: 6, goalText: '≥ 6×', tolerance: 1.75,
    },
    floorRow: {
      id: 'b', label: 'the same ÷ parallel fsync floor', ours: perSecond(ours), peer: `${perSecond(floor)} (temp + fsync + rename; best of 4 and ${FLOOR_THREADS} threads, before and after)`, peerValue: floor,
      value: ours / floor, shown: times(ours / floor), better: 'higher', goal: 0.6, goalText: '≥ 0.6×', tolerance: 1.75,
    },
  };
}

/** Files `[first, first + count)` of the workspace's tree patched, `IN_FLIGHT` at a time: patches per second. */
async function concurrentRate(daemon: BenchDaemon, workspaceId: string, first: number, count: number): Promise<number> {
  const elapsedMs = await runConcurrently(count, IN_FLIGHT, async (index) => {
    await daemon.apply({ workspaceId, patch: patchFor(first + index), format: 'unified' }, 'applied');
  });
  return count / (elapsedMs / 1000);
}

/** `git apply -` of one patch in `cwd`, as a harness runs it. */
function gitApply(cwd: string, patch: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['apply', '-'], { cwd, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`git apply failed: ${stderr}`))));
    child.stdin.end(patch);
  });
}

interface AfterIdle {
  readonly patches: number[];
  /** The one-file fsync floor after the same idle: how much slower the machine itself is then. */
  readonly floors: number[];
  /** An unknown-method round trip after the same idle: what waking two idle processes costs, before any patch work. */
  readonly unknown: number[];
  /**
   * patchd's patch work on bytes in memory (`warmUp`: params schema, parse, plan, receipt), run in
   * this process after the same idle, ÷ the same work run a millisecond apart (about the pace of
   * row (c)'s warm patches): how much slower the machine runs the same code after the idle, with
   * no disk, no wake-up of another process and nothing of the daemon's state involved.
   */
  readonly cpuWork: number[];
}

/**
 * (f) A patch after the daemon sat idle, `samples` times; each after its own idle, the floor, an
 * unknown method and the in-memory patch work in this process too.
 */
async function afterIdle(sequential: SequentialFiles, daemon: BenchDaemon, floorRoot: string, samples: number, idleMs: number): Promise<AfterIdle> {
  const idle: AfterIdle = { patches: [], floors: [], unknown: [], cpuWork: [] };
  await cpuWorkAfterSleeps(200, 0); // compiled before the first idle, as in the daemon after its warm-up
  for (let sample = 0; sample < samples; sample++) {
    await sleep(idleMs);
    const [cold] = await cpuWorkAfterSleeps(1, 0);
    idle.cpuWork.push(cold! / median(await cpuWorkAfterSleeps(20, 1)));
    await sleep(idleMs);
    idle.floors.push(await oneFileFloor(floorRoot, SEQUENTIAL_FILES + sample, sample));
    await sleep(idleMs);
    idle.unknown.push((await timed(() => daemon.unknownMethod())).ms);
    await sleep(idleMs);
    idle.patches.push((await timed(() => sequential.apply())).ms);
  }
  return idle;
}

/** Wall times of `runs` runs of `warmUp` in this process, each after `sleepMs` asleep. */
async function cpuWorkAfterSleeps(runs: number, sleepMs: number): Promise<number[]> {
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    if (sleepMs > 0) await sleep(sleepMs);
    const started = performance.now();
    const receipt = warmUp(() => {});
    times.push(performance.now() - started);
    if (receipt.status !== 'dry_run') throw new Error(`the in-memory patch work failed: ${receipt.error?.message ?? receipt.status}`);
  }
  return times;
}

function idleRow(idle: AfterIdle, warm: readonly number[], warmFloor: readonly number[], idleMs: number): Row {
  const warmMedian = median(warm);
  const value = median(idle.patches) / warmMedian;
  // "As fast as any warm patch": within the spread of warm patches of this run (their p90), at least 1.2×.
  const goal = Math.max(1.2, percentile(warm, 90) / warmMedian);
  const floorAfterIdle = median(idle.floors);
  return {
    id: 'f', label: `applied patch after ${idleMs / 1000} s idle ÷ warm p50`, ours: ms(median(idle.patches)),
    peer: `${ms(warmMedian)} (warm, row c); after the same idle, the fsync floor: ${ms(floorAfterIdle)}, ${times(floorAfterIdle / median(warmFloor))} its warm p50; `
      + `an unknown-method round trip: ${ms(median(idle.unknown))}; the same in-memory patch work in this process: ${times(median(idle.cpuWork))} its time when run 1 ms apart`,
    // How much slower the machine itself is after the idle.
    peerValue: floorAfterIdle / median(warmFloor),
    value, shown: times(value), better: 'lower', goal,
    goalText: `≤ ${times(goal)} (warm p90)`, tolerance: 2.5,
  };
}

function medianPhases(samples: readonly AppliedSample[]): AppliedPhases {
  const of = (pick: (sample: AppliedSample) => number) => median(samples.map(pick));
  return {
    roundTripMs: of((s) => s.roundTripMs), rpcMs: of((s) => s.rpcMs), parseMs: of((s) => s.parseMs),
    planMs: of((s) => s.planMs), commitMs: of((s) => s.commitMs), totalMs: of((s) => s.totalMs),
  };
}
