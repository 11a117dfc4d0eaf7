/**
 * The `relative_indent` tier of SEARCH/REPLACE blocks and str_replace edits: lines that match
 * once leading whitespace is ignored, and whose indentation differs from the file's by the same
 * prefix on every non-blank line. The new lines are then shifted by that prefix too, so the
 * edit's own relative indentation lands at the file's indentation (conformance s12, s13). The
 * `unicode` tier, which ignores leading whitespace as well, takes the same shift (editMatch.ts).
 */

/** The file indents the block by `prefix` more (`add`) or less (`remove`) than the block spells it. */
export interface IndentShift {
  readonly kind: 'add' | 'remove';
  readonly prefix: string;
}

/**
 * The uniform shift between block lines `old` and the file lines they matched (`fileLine(i)` is
 * the file line matched by `old[i]`), or undefined when the indentation does not differ uniformly.
 */
export function uniformIndentShift(old: readonly string[], fileLine: (offset: number) => string): IndentShift | undefined {
  let shift: IndentShift | undefined;
  for (const [offset, line] of old.entries()) {
    if (line.trim() === '') continue;
    const here = shiftBetween(leadingWhitespace(line), leadingWhitespace(fileLine(offset)));
    if (here === undefined) return undefined;
    if (shift !== undefined && (shift.kind !== here.kind || shift.prefix !== here.prefix)) return undefined;
    shift = here;
  }
  return shift;
}

function shiftBetween(blockIndent: string, fileIndent: string): IndentShift | undefined {
  if (fileIndent.endsWith(blockIndent)) return { kind: 'add', prefix: fileIndent.slice(0, fileIndent.length - blockIndent.length) };
  if (blockIndent.endsWith(fileIndent)) return { kind: 'remove', prefix: blockIndent.slice(0, blockIndent.length - fileIndent.length) };
  return undefined;
}

/** `lines` moved by `shift`; blank lines stay as they are, and a line never loses more indentation than it has. */
export function applyIndentShift(lines: readonly string[], shift: IndentShift): string[] {
  return lines.map((line) => {
    if (line.trim() === '') return line;
    if (shift.kind === 'add') return shift.prefix + line;
    if (line.startsWith(shift.prefix)) return line.slice(shift.prefix.length);
    return line.slice(Math.min(shift.prefix.length, leadingWhitespace(line).length));
  });
}

function leadingWhitespace(line: string): string {
  return /^\s*/.exec(line)![0];
}
