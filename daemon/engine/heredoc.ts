/**
 * A heredoc's body as bash reads it before the command does: it ends at the first line that is
 * exactly the delimiter, and `<<-` strips the leading tabs of every body line (only tabs, only at
 * the start of the line) and of the delimiter line. Pure; never throws.
 */
import { quoteLine } from './chunks.ts';
import type { Diagnostic } from './types.ts';

export interface Heredoc {
  readonly delimiter: string;
  /** `<<-`: leading tabs are stripped from every line, the delimiter's included. */
  readonly stripTabs: boolean;
  /** `<<'EOF'`, `<<"EOF"`: the body is taken as written; unquoted, bash expands it. */
  readonly quoted: boolean;
}

/** Where the body starts and ends in the lines: `end` is the index of the delimiter line. */
export interface HeredocSpan {
  readonly start: number;
  readonly end: number;
}

/** The index of the line that closes the heredoc opened on line index `first`; -1 when none does. A CR left from CRLF text is a line ending. */
export function heredocEnd(lines: readonly string[], first: number, heredoc: Heredoc): number {
  return lines.findIndex((line, index) => {
    if (index <= first) return false;
    const text = asRead(line, heredoc);
    return text === heredoc.delimiter || text === `${heredoc.delimiter}\r`;
  });
}

/** The body's lines as the command reads them (`<<-`: without their leading tabs). */
export function heredocBody(lines: readonly string[], span: HeredocSpan, heredoc: Heredoc): string[] {
  return lines.slice(span.start, span.end).map((line) => asRead(line, heredoc));
}

function asRead(line: string, heredoc: Heredoc): string {
  return heredoc.stripTabs ? line.replace(/^\t+/, '') : line;
}

/**
 * What bash changes in an unquoted heredoc's body: a parameter (`$name`, `${…}`, `$1`, `$?`…), a
 * command substitution (`$(…)`, a backtick), arithmetic (`$((…))`, `$[…]`), and a backslash before
 * `$`, a backtick, a backslash or the end of the line (which joins the next line to this one). A
 * `$` before anything else, or another backslash, stays as written.
 */
const EXPANDED = /`|\\(?:[$`\\]|$)|\$[\w{([?!#*@$-]/;

/**
 * A note when the delimiter is unquoted and the body holds text bash would expand: patchd takes
 * the body as written, as the model meant it (Codex does the same), while a shell would have
 * substituted it first. `lines` is the whole text, so the line named is the one the sender sees.
 */
export function describeExpansion(lines: readonly string[], span: HeredocSpan, heredoc: Heredoc): Diagnostic[] {
  if (heredoc.quoted) return [];
  const index = lines.findIndex((line, at) => at >= span.start && at < span.end && EXPANDED.test(line));
  if (index === -1) return [];
  const { delimiter } = heredoc;
  return [{
    code: 'heredoc_not_expanded',
    message: `The heredoc's delimiter ${delimiter} is unquoted, so a shell would expand the $, backticks and backslashes in its text before the command reads it, first on line ${index + 1} (${quoteLine(lines[index]!)}); patchd took the text as written. Quote the delimiter (<<'${delimiter}') when the text is meant as written.`,
  }];
}
