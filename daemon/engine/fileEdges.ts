/**
 * A diff git made with context says where a hunk sits more surely than its line numbers do (which
 * a model copying the diff may have moved): git shows fewer context lines than asked only at a
 * file's edges. So a hunk with no context before its first change begins the file, and one with
 * none after its last change ends it; so does a hunk with less context before its change than the
 * diff shows elsewhere, when its numbers agree that it starts at line 1. `git apply` holds hunks
 * to the file's edges, and so does patchd for a diff git made (an `index` line says so). Other
 * diffs are often written by hand or by a model, context trimmed at will; their hunks go wherever
 * their context is (DESIGN, Matching). The edges are what stops a git diff applied a second time
 * from finding its old lines inside its own new ones. A diff without a single context line may be
 * `-U0`, which shows none anywhere: its hunks say nothing about edges.
 */
import type { Hunk } from './types.ts';

export function withFileEdges(hunks: readonly Hunk[]): readonly Hunk[] {
  if (!hunks.some((hunk) => hunk.lines.some((line) => line.kind === 'context'))) return hunks;
  const shown = Math.max(...hunks.flatMap((hunk) => [leadingContext(hunk), trailingContext(hunk)]));
  return hunks.map((hunk) => {
    const leading = leadingContext(hunk);
    const startsFile = leading === 0 || (leading < shown && hunk.oldStart === 1);
    const endsFile = trailingContext(hunk) === 0;
    return startsFile || endsFile ? { ...hunk, atStartOfFile: startsFile, atEndOfFile: hunk.atEndOfFile || endsFile } : hunk;
  });
}

function leadingContext(hunk: Hunk): number {
  const first = hunk.lines.findIndex((line) => line.kind !== 'context');
  return first === -1 ? hunk.lines.length : first;
}

function trailingContext(hunk: Hunk): number {
  return hunk.lines.length - 1 - hunk.lines.findLastIndex((line) => line.kind !== 'context');
}
