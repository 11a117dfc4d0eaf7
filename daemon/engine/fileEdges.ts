/**
 * A diff git made with context says where a hunk sits more surely than its line numbers do (which
 * a model copying the diff may have moved): git shows fewer context lines than asked only at a
 * file's edges. So a hunk with no context before its first change begins the file, and one with
 * none after its last change ends it; so does a hunk with less context before its change than the
 * diff shows elsewhere, when its numbers agree that it starts at line 1. `git apply` holds hunks
 * to the file's edges, and so does patchd for a diff git made (an `index` line says so). GNU
 * patch does the same, and so does patchd for a diff `diff -u` made (its timestamps on both
 * header lines) — `yielding`: as GNU patch's fuzz lets such a hunk move when the file grew beyond
 * the edge, so does patchd, unless the hunk's new side is in the file already (`Hunk.edgesYield`).
 * Other diffs (`hg diff --git`, `svn diff`, a diff by hand or by a model) are often written with
 * context trimmed at will and numbers moved; their hunks are held to no edge and go wherever their
 * context is (DESIGN, Matching). Applied a second time, a hunk that adds lines before or after
 * its context finds its old lines inside its own new ones: held edges stop that here, and for
 * every diff `appliedBefore` (hunks.ts) refuses such a match when the new lines around it are at
 * the hunk's hint or begin or end the file (`already_applied` when all of the patch is there).
 *
 * All of this holds for `-U<n>` diffs with n ≥ 1 only. A `-U0` diff shows no context at a
 * hunk's edges, yet may show some between its changes (`--inter-hunk-context`) or before them
 * (`-W`, the whole function): its hunks say nothing about the file's edges. `-U<n>` shows context
 * before every hunk but the first and after every hunk but the last; hunks lacking it there, or
 * showing no context at all, were made without it. Where neither says which (one hunk with
 * context only between its changes: a `-U0 --inter-hunk-context` diff, or a `-U3` one of the whole
 * file), the edges are held, except on the file the diff was made from (its index line's old
 * blob), where the numbers are exact: `withoutFileEdges`.
 */
import type { Hunk } from './types.ts';

export function withFileEdges(hunks: readonly Hunk[], yielding = false): readonly Hunk[] {
  const edges = hunks.map((hunk) => ({ leading: leadingContext(hunk), trailing: trailingContext(hunk) }));
  if (!madeWithContext(hunks, edges)) return hunks;
  const shown = Math.max(...edges.flatMap(({ leading, trailing }) => [leading, trailing]));
  return hunks.map((hunk, index) => {
    const { leading, trailing } = edges[index]!;
    const startsFile = leading === 0 || (leading < shown && hunk.oldStart === 1);
    const endsFile = trailing === 0;
    if (!startsFile && !endsFile) return hunk;
    return { ...hunk, atStartOfFile: startsFile, atEndOfFile: hunk.atEndOfFile || endsFile, ...(yielding ? { edgesYield: true } : {}) };
  });
}

interface Edges {
  readonly leading: number;
  readonly trailing: number;
}

function madeWithContext(hunks: readonly Hunk[], edges: readonly Edges[]): boolean {
  if (!hunks.some((hunk) => hunk.lines.some((line) => line.kind === 'context'))) return false;
  return edges.every(({ leading, trailing }, index) => (index === 0 || leading > 0) && (index === edges.length - 1 || trailing > 0));
}

function leadingContext(hunk: Hunk): number {
  const first = hunk.lines.findIndex((line) => line.kind !== 'context');
  return first === -1 ? hunk.lines.length : first;
}

function trailingContext(hunk: Hunk): number {
  return hunk.lines.length - 1 - hunk.lines.findLastIndex((line) => line.kind !== 'context');
}

/** The hunks without the edges `withFileEdges` inferred: a `\ No newline at end of file` marker still ends the file. */
export function withoutFileEdges(hunks: readonly Hunk[]): readonly Hunk[] {
  return hunks.map((hunk) => {
    const marked = hunk.finalNewline !== undefined;
    const inferred = hunk.atStartOfFile === true || hunk.atEndOfFile !== marked;
    return inferred ? { ...hunk, atStartOfFile: false, atEndOfFile: marked } : hunk;
  });
}
