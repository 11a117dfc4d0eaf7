/** Line-level primitives shared by the unified diff parser's modules (unified.ts, unifiedPaths.ts, unifiedHunks.ts). */

export const GIT_HEADER = 'diff --git ';
export const FENCE = /^\s{0,3}(?:```|~~~)/;
/** `diff -ruN old/x new/x`: the command line `diff -r` prints before each file's headers. */
export const DIFF_COMMAND = /^diff -\S*\s/;

/** The patch lines and the index of the line being looked at; the parser advances `index` as it reads. */
export interface LineCursor {
  readonly lines: readonly string[];
  index: number;
}

export function lineAt(cursor: LineCursor, index: number): string {
  return cursor.lines[index] ?? '';
}

/** A `--- x` line directly followed by a `+++ y` line. */
export function isFileHeaderAt(lines: readonly string[], index: number): boolean {
  return (lines[index] ?? '').startsWith('--- ') && (lines[index + 1] ?? '').startsWith('+++ ');
}

/** Header lines are never content, so a CR left on them (mixed line endings) is dropped. */
export function withoutCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

/** A patch line for an error message: JSON-quoted, cut at 80 characters. */
export function quoteLine(line: string): string {
  return JSON.stringify(line.length > 80 ? `${line.slice(0, 77)}...` : line);
}
