/** Small timing helpers shared by the benchmarks. */
import { performance } from 'node:perf_hooks';

export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

export function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Median wall time of `run` in ms over `runs` runs, after `warmup` untimed runs. */
export function timeSync(run: () => void, runs = 20, warmup = 3): number {
  for (let i = 0; i < warmup; i++) run();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    run();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

/** Wall time of one awaited call, in ms. */
export async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = performance.now();
  const value = await run();
  return { value, ms: performance.now() - start };
}

/** Runs `work(i)` for i in [0, count) with `inFlight` at a time; returns the wall time in ms. */
export async function runConcurrently(count: number, inFlight: number, work: (index: number) => Promise<void>): Promise<number> {
  let next = 0;
  const start = performance.now();
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return performance.now() - start;
}

export const ms = (value: number) => `${value.toFixed(value < 10 ? 2 : 1)} ms`;
export const perSecond = (value: number) => `${Math.round(value).toLocaleString('en')}/s`;
export const times = (value: number) => `${value.toFixed(2)}×`;

export function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd()).join('\n');
}

export const sleep = (delayMs: number) => new Promise<void>((resolve) => setTimeout(resolve, delayMs));
