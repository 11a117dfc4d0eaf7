/**
 * The rows of issue #11's table: patchd's figure, the comparison measured in the same run, the
 * ratio and the goal. A row's `value` is what its goal is about (a ratio, or milliseconds for
 * rows without a peer); `better` says which way is an improvement, for the baseline check.
 */
import { table } from './stats.ts';

export interface Row {
  /** Stable key, kept in the results and the baseline. */
  readonly id: string;
  readonly label: string;
  /** patchd's figure, formatted. */
  readonly ours: string;
  /** The peer measured in the same run, formatted ('—' when the goal is absolute). */
  readonly peer: string;
  /**
   * The peer's own figure (in its unit: per second, ms), when it stands for how fast the machine
   * is. A baseline whose peer differs from this run's by more than `PEER_MOVED` is another
   * machine, or the same one under other load: the row is not compared with it.
   */
  readonly peerValue?: number | undefined;
  readonly value: number;
  /** How `value` prints (e.g. `0.83×`, `14.2 ms`). */
  readonly shown: string;
  readonly better: 'higher' | 'lower';
  /** The goal `value` must reach. */
  readonly goal: number;
  readonly goalText: string;
  /** How many times worse than the baseline `value` may get before the run fails (noise allowance). */
  readonly tolerance: number;
}

/** How far a row's peer may move from the baseline's before the row is not compared (see `Row.peerValue`). */
export const PEER_MOVED = 1.5;

/** How many times the peer moved since the baseline (1: not at all); undefined when either run lacks it. */
export function peerMovedBy(row: Row, baselinePeer: number | undefined): number | undefined {
  if (row.peerValue === undefined || baselinePeer === undefined) return undefined;
  return Math.max(row.peerValue / baselinePeer, baselinePeer / row.peerValue);
}

export const met = (row: Row) => (row.better === 'higher' ? row.value >= row.goal : row.value <= row.goal);

/** How many times worse `row` is than `baseline` (below 1: better). */
export const worseBy = (row: Row, baseline: number) => (row.better === 'higher' ? baseline / row.value : row.value / baseline);

export function rowsTable(rows: readonly Row[]): string {
  return table([
    ['row', 'patchd', 'compared with (same run)', 'ratio', 'goal', 'met'],
    ...rows.map((row) => [`(${row.id}) ${row.label}`, row.ours, row.peer, row.shown, row.goalText, met(row) ? 'yes' : 'NO']),
  ]);
}
