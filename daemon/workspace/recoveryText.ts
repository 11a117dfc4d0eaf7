/**
 * A recovery report (`recovery.ts`) in words: what was done with the unfinished commit, to which
 * paths, what was left as found and why, and where its journal is kept; and a commit log segment
 * recovery found damaged (`commitLog.ts`): the bytes lost, where it is kept, and that a commit in
 * flight there may be left half-applied. The CLI prints both on stderr (`cli/recoveryNotice.ts`),
 * for a workspace it opened or one a shared daemon opened for it; the daemon logs a recovery's
 * words beside the report's fields.
 */
import type { DamagedSegment } from './commitLog.ts';
import type { RecoveryReport } from './recovery.ts';

/**
 * What is described: a RecoveryReport, or the wire's `Recovery` (`workspace/open`'s `recovered`),
 * which carries the same fields, but for `damaged`: absent there when none.
 */
export type DescribedRecovery = Omit<RecoveryReport, 'damaged'> & { readonly damaged?: readonly string[] | undefined };

export const RECOVERED_MESSAGE = 'recovered an unfinished commit';

/** How many of the paths a commit was rolled back or forward on are named; conflicts and damaged paths are all named. */
const NAMED_PATHS = 10;

/** One line, without the transaction: e.g. `rolled back, put back as before it: a.txt; left as found, changed since: b.txt; journal kept at …`. */
export function describeRecovery(report: DescribedRecovery): string {
  const { outcome, paths, conflicts, damaged = [], keptAside } = report;
  const parts = [whatWasDone(outcome, paths, conflicts, damaged)];
  if (conflicts.length > 0) parts.push(`left as found, changed since: ${listOf(conflicts)}`);
  if (damaged.length > 0 && outcome !== 'left_as_found') parts.push(`left as found, its journal's copy is damaged: ${listOf(damaged)}`);
  if (keptAside !== undefined) parts.push(`journal kept at ${shown(keptAside)}`);
  return parts.join('; ');
}

/** A damaged commit log segment as told: the wire's `DamagedLogSegment` (`workspace/open`'s `damagedLog`). */
export interface DescribedDamagedSegment {
  readonly segment: string;
  readonly keptAside: string;
  readonly lostBytes: number;
}

export function describedDamagedSegment({ segment, keptAs, damaged }: DamagedSegment): DescribedDamagedSegment {
  return { segment, keptAside: keptAs, lostBytes: damaged.reduce((total, { start, end }) => total + end - start, 0) };
}

export const DAMAGED_LOG_NOTICE = 'commit log segment damaged';

/** One line, after DAMAGED_LOG_NOTICE: the segment, the bytes lost, where it is kept, and what the user may have to check. */
export function describeDamagedSegment({ segment, keptAside, lostBytes }: DescribedDamagedSegment): string {
  const bytes = `${lostBytes} byte${lostBytes === 1 ? '' : 's'}`;
  return `${bytes} lost in ${shown(segment)}, what was logged there is gone; kept at ${shown(keptAside)}; `
    + 'a commit in flight there may be left half-applied: check the files the patch or undo killed with it was changing';
}

function whatWasDone(outcome: RecoveryReport['outcome'], paths: readonly string[], conflicts: readonly string[], damaged: readonly string[]): string {
  switch (outcome) {
    case 'rolled_back':
      if (paths.length > 0) return `rolled back, put back as before it: ${someOf(paths)}`;
      // A path left as found may hold what the commit wrote, changed since: that it changed none is not known.
      return conflicts.length + damaged.length === 0 ? 'rolled back, it had changed no file yet' : 'rolled back, no file put back';
    case 'rolled_forward':
      return paths.length === 0 ? 'rolled forward' : `rolled forward, its changes stand: ${someOf(paths)}`;
    case 'left_as_found':
      return damaged.length === 0 ? 'not acted on, its journal is damaged and names no path that can be read' : `not acted on, its journal is damaged: left as found: ${listOf(damaged)}`;
  }
}

function someOf(paths: readonly string[]): string {
  const named = listOf(paths.slice(0, NAMED_PATHS));
  return paths.length > NAMED_PATHS ? `${named} and ${paths.length - NAMED_PATHS} more` : named;
}

function listOf(paths: readonly string[]): string {
  return paths.map(shown).join(', ');
}

/** A path as written, unless a control character (a newline, say) would break the line or pass for another: then quoted, escaped as in JSON. */
function shown(path: string): string {
  return /[\u0000-\u001f\u007f]/.test(path) ? JSON.stringify(path) : path;
}
