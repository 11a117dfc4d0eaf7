/**
 * A heredoc's body as bash reads it before the command does: it ends at the first line that is
 * exactly the delimiter, and `<<-` strips the leading tabs of every body line (only tabs, only at
 * the start of the line) and of the delimiter line. Pure; never throws.
 */
export interface Heredoc {
  readonly delimiter: string;
  /** `<<-`: leading tabs are stripped from every line, the delimiter's included. */
  readonly stripTabs: boolean;
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
