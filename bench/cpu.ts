/**
 * CPU time spent in user space and in the kernel, for row (a)'s "where the time goes": a run
 * the main thread cannot go faster than may still be waiting on the kernel (creating files,
 * renaming, fsync hand-offs) rather than on JavaScript. Another process's times come from
 * `/proc` (Linux only: undefined elsewhere); this process's from `process.cpuUsage`.
 */
import { readFileSync } from 'node:fs';
import { table } from './stats.ts';

export interface CpuTime {
  readonly userMs: number;
  readonly systemMs: number;
}

/** `/proc` counts in USER_HZ, which Linux fixes at 100 per second for every architecture it reports to user space. */
const MS_PER_TICK = 10;

/** CPU used so far by process `pid` (every thread), or by its thread `tid` alone. */
export function procCpu(pid: number, tid?: number): CpuTime | undefined {
  let stat: string;
  try {
    stat = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // After the command name (which may hold spaces and parentheses): state, ppid, … utime is the 12th field, stime the 13th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { userMs: Number(fields[11]) * MS_PER_TICK, systemMs: Number(fields[12]) * MS_PER_TICK };
}

export function ownCpu(): CpuTime {
  const { user, system } = process.cpuUsage();
  return { userMs: user / 1000, systemMs: system / 1000 };
}

/** CPU per unit of work between two readings; undefined when either is. */
export function cpuPer(before: CpuTime | undefined, after: CpuTime | undefined, units: number): CpuTime | undefined {
  if (before === undefined || after === undefined) return undefined;
  return { userMs: (after.userMs - before.userMs) / units, systemMs: (after.systemMs - before.systemMs) / units };
}

/** One row per labelled reading: user, system, and the kernel's share of the two. */
export function cpuTable(unit: string, readings: readonly (readonly [string, CpuTime | undefined])[]): string {
  const f = (value: number) => value.toFixed(3);
  return table([
    [`CPU per ${unit}`, 'user ms', 'system ms', 'system share'],
    ...readings.map(([label, cpu]) => cpu === undefined
      ? [label, '—', '—', '(no /proc here)']
      : [label, f(cpu.userMs), f(cpu.systemMs), `${Math.round((100 * cpu.systemMs) / Math.max(cpu.userMs + cpu.systemMs, 1e-9))} %`]),
  ]);
}
