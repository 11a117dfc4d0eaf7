/**
 * Where one applied patch's time goes. The daemon reports its own phases in every receipt
 * (`timings`), and the round trip minus its total is the RPC. Finer phases come from driving
 * the same compiled workspace code in this process, the way `patch/apply` does (parse → lock →
 * read → plan → commit), with every durable-write system call timed through the workspace's
 * `DiskCalls` seam; the watcher's share is the main-thread work the write's events cause. A
 * small one-file commit is reported before its record, fsyncs and done mark (`transaction.ts`):
 * those are shown apart, as the time until `Workspace.settled`.
 */
import type { FileHandle } from 'node:fs/promises';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parsePatch, planPatch } from '../daemon/engine/index.ts';
import { nodeDiskCalls, type DiskCalls } from '../daemon/workspace/diskCalls.ts';
import { Workspace } from '../daemon/workspace/workspace.ts';
import type { AppliedPhases } from './daemon.ts';
import { median, sleep, table } from './stats.ts';
import { fileName, makeTree, patchFor } from './tree.ts';

/** What the system calls made since the last `take()` cost: ms per kind, and ms inside any call at all. */
interface DiskTime {
  readonly byKind: Map<string, number>;
  /**
   * The union of the calls' intervals since the last `take()`: concurrent calls (an fsync running
   * while a temp is written) count once, and a call begun before (the commit log's fsync of an
   * earlier frame, which a new intent waits for) only from then.
   */
  readonly covered: number;
}

class DiskClock {
  #spent = new Map<string, number>();
  #intervals: [number, number][] = [];
  #since = performance.now();

  /** A call ended: counted from the last `take()` on, like `covered`. */
  add(kind: string, started: number, ended: number): void {
    const from = Math.max(started, this.#since);
    this.#spent.set(kind, (this.#spent.get(kind) ?? 0) + (ended - from));
    this.#intervals.push([from, ended]);
  }

  take(): DiskTime {
    const taken = { byKind: this.#spent, covered: unionLength(this.#intervals) };
    this.#spent = new Map();
    this.#intervals = [];
    this.#since = performance.now();
    return taken;
  }
}

function unionLength(intervals: readonly [number, number][]): number {
  let covered = 0;
  let reach = -Infinity;
  for (const [start, end] of [...intervals].sort((a, b) => a[0] - b[0])) {
    if (end <= reach) continue;
    covered += end - Math.max(start, reach);
    reach = end;
  }
  return covered;
}

const HANDLE_CALLS: Record<string, string> = {
  writeFile: 'write', write: 'write', writev: 'write', sync: 'fsync', datasync: 'fsync', close: 'open + close', chmod: 'chmod/chown', chown: 'chmod/chown',
};

/** What the calls on descriptors (`DiskCalls.openSync` and the rest) are shown as. */
const SYNC_CALLS: Record<string, string> = { openSync: 'open + close', closeSync: 'open + close', writevSync: 'write' };

/**
 * `base` with every call timed into `clock`, by kind: calls on the state dir (journal, undo
 * record) apart from those on the tree, and fsyncs of directories apart from those of files.
 * Wraps whatever calls `DiskCalls` has.
 */
function timedDisk(base: DiskCalls, clock: DiskClock, stateDir: string): DiskCalls {
  const areaOf = (path: unknown) => (typeof path === 'string' && path.startsWith(stateDir) ? 'journal + undo record: ' : '');
  /** What each descriptor from `openSync` is: its area, and whether it is a directory. */
  const descriptors = new Map<number, { area: string; directory: boolean }>();
  const timedCall = <T>(kind: string, run: () => T): T => {
    const started = performance.now();
    const result = run();
    if (!(result instanceof Promise)) {
      clock.add(kind, started, performance.now());
      return result;
    }
    return result.finally(() => clock.add(kind, started, performance.now())) as T;
  };
  const fsyncKind = (area: string, directory: boolean) => `${area}fsync (${directory ? 'directory' : 'file'})`;
  const wrapped: Record<string, unknown> = {};
  for (const [name, call] of Object.entries(base) as [string, (...args: unknown[]) => unknown][]) {
    wrapped[name] = (...args: unknown[]) => {
      const fd = typeof args[0] === 'number' ? descriptors.get(args[0]) : undefined;
      const area = fd?.area ?? areaOf(args[0]);
      if (name === 'openSync') {
        const opened = timedCall(`${area}open + close`, () => call(...args)) as number;
        descriptors.set(opened, { area, directory: statSync(args[0] as string).isDirectory() });
        return opened;
      }
      if (name === 'closeSync' && typeof args[0] === 'number') descriptors.delete(args[0]);
      if (name === 'fsync' || name === 'fdatasync') return timedCall(fsyncKind(area, fd?.directory ?? false), () => call(...args));
      if (name !== 'open') return timedCall(`${area}${SYNC_CALLS[name] ?? name.replace(/Sync$/, '')}`, () => call(...args));
      const directory = args[1] === 'r';
      return (timedCall(`${area}open + close`, () => call(...args)) as Promise<FileHandle>).then((handle) => timedHandle(handle, (kind) => {
        if (kind === 'fsync') return fsyncKind(area, directory);
        return `${area}${kind}`;
      }, timedCall));
    };
  }
  return wrapped as unknown as DiskCalls;
}

function timedHandle(handle: FileHandle, kindOf: (kind: string) => string, timedCall: <T>(kind: string, run: () => T) => T): FileHandle {
  return new Proxy(handle, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      const kind = typeof property === 'string' ? (HANDLE_CALLS[property] ?? property) : 'other';
      return (...args: unknown[]) => timedCall(kindOf(kind), () => (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
}

interface Sample {
  readonly parse: number;
  readonly lock: number;
  readonly read: number;
  readonly plan: number;
  readonly commit: number;
  readonly disk: DiskTime;
  /** From the report until the commit is durable and recorded, and the calls made meanwhile. */
  readonly settle: number;
  readonly settleDisk: DiskTime;
}

async function onePatch(workspace: Workspace, clock: DiskClock, index: number): Promise<Sample> {
  let mark = performance.now();
  const lap = () => {
    const now = performance.now();
    const took = now - mark;
    mark = now;
    return took;
  };
  const parsed = parsePatch({ patch: patchFor(index), format: 'unified' });
  if (!parsed.ok) throw new Error(parsed.error.message);
  const parse = lap();
  using _lease = await workspace.lock([fileName(index)]);
  const lock = lap();
  const snapshots = await workspace.snapshot([fileName(index)], { locked: true });
  if (!snapshots.ok) throw new Error(snapshots.error.message);
  const read = lap();
  const plan = planPatch(parsed.value, snapshots.value);
  if (!plan.ok) throw new Error(plan.error.message);
  const planned = lap();
  clock.take();
  const outcome = await workspace.commit(plan.value, { atomic: true, snapshots: snapshots.value });
  if (outcome.status !== 'applied') throw new Error(`commit ${outcome.status}`);
  const commit = lap();
  const disk = clock.take();
  await workspace.settled();
  return { parse, lock, read, plan: planned, commit, disk, settle: lap(), settleDisk: clock.take() };
}

/** Main-thread busy time in the `windowMs` after a patch: the watcher's events and the re-check they schedule. */
async function watcherWork(workspace: Workspace, clock: DiskClock, index: number, windowMs: number): Promise<number> {
  await onePatch(workspace, clock, index);
  return loopWork(windowMs);
}

/** Main-thread busy time over the next `windowMs`; even an idle loop shows some, waking for the timer. */
async function loopWork(windowMs: number): Promise<number> {
  const before = performance.eventLoopUtilization();
  await sleep(windowMs);
  return performance.eventLoopUtilization(before).active;
}

const WATCH_WINDOW_MS = 250;

export async function benchBreakdown(daemon: AppliedPhases, quick: boolean): Promise<string> {
  const samples = quick ? 40 : 150;
  const watched = quick ? 6 : 20;
  const root = makeTree(samples + watched + 10, 'patchd-bench-breakdown-');
  const stateDir = mkdtempSync(join(tmpdir(), 'patchd-bench-breakdown-state-'));
  const clock = new DiskClock();
  const workspace = await Workspace.open(root, { stateDir, disk: timedDisk(nodeDiskCalls, clock, stateDir) });
  try {
    for (let index = 0; index < 10; index++) await onePatch(workspace, clock, index); // warm up
    const measured: Sample[] = [];
    for (let index = 10; index < 10 + samples; index++) measured.push(await onePatch(workspace, clock, index));
    const watcher: number[] = [];
    const idle: number[] = [];
    for (let index = 10 + samples; index < 10 + samples + watched; index++) {
      watcher.push(await watcherWork(workspace, clock, index, WATCH_WINDOW_MS));
      idle.push(await loopWork(WATCH_WINDOW_MS));
    }
    return render(daemon, measured, median(watcher), median(idle));
  } finally {
    await workspace.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  }
}

function render(daemon: AppliedPhases, samples: readonly Sample[], watcherMs: number, idleMs: number): string {
  const of = (pick: (sample: Sample) => number) => median(samples.map(pick));
  const f = (value: number) => value.toFixed(3);
  const kindsOf = (calls: (sample: Sample) => DiskTime) => [...new Set(samples.flatMap((sample) => [...calls(sample).byKind.keys()]))].sort();
  const diskRows = (calls: (sample: Sample) => DiskTime) => kindsOf(calls).map((kind) => [`    ${kind}`, f(of((s) => calls(s).byKind.get(kind) ?? 0)), 'in process, DiskCalls']);
  const rows = [
    ['phase of one applied patch (p50, ms)', 'ms', 'where measured'],
    ['round trip (client sends → receipt arrives)', f(daemon.roundTripMs), 'daemon, row (c)'],
    ['  RPC: round trip − daemon total', f(daemon.rpcMs), 'daemon, row (c)'],
    ['  daemon total (receipt timings.totalMs)', f(daemon.totalMs), 'daemon, row (c)'],
    ['    parse (timings.parseMs, with any thread hop)', f(daemon.parseMs), 'daemon, row (c)'],
    ['    read + plan (timings.planMs, with any thread hop)', f(daemon.planMs), 'daemon, row (c)'],
    ['    commit (timings.commitMs)', f(daemon.commitMs), 'daemon, row (c)'],
    ['same patch, same compiled code, in process:', '', ''],
    ['  parse (engine)', f(of((s) => s.parse)), 'in process'],
    ['  lock', f(of((s) => s.lock)), 'in process'],
    ['  read (guard, read, hash, watch the file)', f(of((s) => s.read)), 'in process'],
    ['  plan (engine)', f(of((s) => s.plan)), 'in process'],
    ['  commit, until reported (calls below may overlap: their sum can exceed it)', f(of((s) => s.commit)), 'in process'],
    ...diskRows((s) => s.disk),
    ['    outside every call: re-read, verify, bookkeeping', f(of((s) => s.commit - s.disk.covered)), 'in process'],
    ['  after the report, the file still locked: record, fsyncs, done', f(of((s) => s.settle)), 'in process'],
    ...diskRows((s) => s.settleDisk),
    [`  watcher (main-thread work within ${WATCH_WINDOW_MS} ms after the write, less an idle ${WATCH_WINDOW_MS} ms's ${f(idleMs)})`, f(watcherMs - idleMs), 'in process, event-loop use'],
  ];
  return table(rows);
}
