/**
 * A recovery report (`recovery.ts`) in words: what was done with the unfinished commit, to which
 * paths, what was left as found and why, and where its journal is kept. The one-shot CLI prints it
 * on stderr (loading it only then); the daemon logs it beside the report's fields.
 */
import type { RecoveryReport } from './recovery.ts';

export const RECOVERED_MESSAGE = 'recovered an unfinished commit';

/** How many of the paths a commit was rolled back or forward on are named; conflicts and damaged paths are all named. */
const NAMED_PATHS = 10;

/** One line, without the transaction: e.g. `rolled back, put back as before it: a.txt; left as found, changed since: b.txt; journal kept at …`. */
export function describeRecovery(report: RecoveryReport): string {
  const parts = [whatWasDone(report)];
  if (report.conflicts.length > 0) parts.push(`left as found, changed since: ${report.conflicts.join(', ')}`);
  if (report.damaged.length > 0 && report.outcome !== 'left_as_found') parts.push(`left as found, its journal's copy is damaged: ${report.damaged.join(', ')}`);
  if (report.keptAside !== undefined) parts.push(`journal kept at ${report.keptAside}`);
  return parts.join('; ');
}

function whatWasDone({ outcome, paths, damaged }: RecoveryReport): string {
  switch (outcome) {
    case 'rolled_back':
      return paths.length === 0 ? 'rolled back, it had changed no file yet' : `rolled back, put back as before it: ${someOf(paths)}`;
    case 'rolled_forward':
      return paths.length === 0 ? 'rolled forward' : `rolled forward, its changes stand: ${someOf(paths)}`;
    case 'left_as_found':
      return damaged.length === 0 ? 'not acted on, its journal is damaged and names no path that can be read' : `not acted on, its journal is damaged: left as found: ${damaged.join(', ')}`;
  }
}

function someOf(paths: readonly string[]): string {
  const named = paths.slice(0, NAMED_PATHS).join(', ');
  return paths.length > NAMED_PATHS ? `${named} and ${paths.length - NAMED_PATHS} more` : named;
}
