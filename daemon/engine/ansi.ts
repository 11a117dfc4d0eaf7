/**
 * Terminal colour codes in patch text: `git diff --color=always`, or a diff copied from a
 * coloured terminal, carries SGR sequences (`ESC[32m+added ESC[m`) around its lines. They are
 * removed before parsing. A file may hold escape bytes of its own, so this happens only when
 * the text looks coloured: some line starts with a colour sequence, as producers write them.
 */

// CSI sequences a coloured diff carries: SGR (`m`) and erase-in-line (`K`, from some pagers).
const COLOUR_SEQUENCE = /\x1b\[[0-9;]*[mK]/g;
const COLOURED_LINE = /(?:^|\n)\x1b\[[0-9;]*[mK]/;

export interface Uncoloured {
  readonly text: string;
  /** How many sequences were removed. */
  readonly removed: number;
}

export function stripTerminalColours(text: string): Uncoloured {
  if (!text.includes('\x1b') || !COLOURED_LINE.test(text)) return { text, removed: 0 };
  let removed = 0;
  const stripped = text.replace(COLOUR_SEQUENCE, () => {
    removed++;
    return '';
  });
  return { text: stripped, removed };
}
