/**
 * A diff git made with context says where a hunk sits more surely than its line numbers do (which
 * a model copying the diff may have moved): git shows no context before a hunk's first change only
 * at the start of a file, and none after its last change only at the end. `git apply` holds such
 * hunks to the file's edges, and so does patchd for a diff git made (an `index` line says so).
 * Other diffs are often written by hand or by a model, context trimmed at will; their hunks go
 * wherever their context is (DESIGN, Matching). The edges are what stops a git diff applied a
 * second time from finding its old lines inside its own new ones. A diff without a single context
 * line may be `-U0`, which shows none anywhere: its hunks say nothing about edges.
 */
import type { Hunk } from './types.ts';

export function withFileEdges(hunks: readonly Hunk[]): readonly Hunk[] {
  if (!hunks.some((hunk) => hunk.lines.some((line) => line.kind === 'context'))) return hunks;
  return hunks.map((hunk) => {
    const startsFile = hunk.lines[0]?.kind !== 'context';
    const endsFile = hunk.lines.at(-1)?.kind !== 'context';
    return startsFile || endsFile ? { ...hunk, atStartOfFile: startsFile, atEndOfFile: hunk.atEndOfFile || endsFile } : hunk;
  });
}
