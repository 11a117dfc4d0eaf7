/** `auto` format detection over patch lines. */
import { SEARCH_MARKER } from './searchReplace.ts';
import type { Dialect } from './types.ts';

/** The dialects patch text can be written in (V4A and structured edits arrive as data). */
export type TextDialect = Exclude<Dialect, 'v4a' | 'edits'>;

const ENVELOPE_MARKER = /^\s*\*\*\* Begin Patch\s*$/;
const HEREDOC_START = /^\s*(?:apply_patch\s+)?<<\s*['"]?EOF['"]?\s*$/;
/** `cd <dir> && apply_patch …`: a shell command whose `cd` the paths depend on. */
const CD_APPLY_PATCH = /^\s*cd\s.*&&\s*(?:apply_patch|applypatch)\b/;

/**
 * The text dialect of a patch: `shell` when it opens with `cd … && apply_patch`; otherwise the
 * first marker decides — the `*** Begin Patch` envelope (or a bare `apply_patch <<EOF` wrapper,
 * which the envelope parser accepts itself), a SEARCH/REPLACE marker, or a diff header; else unified.
 */
export function detectTextDialect(lines: readonly string[]): TextDialect {
  if (startsWithCdApplyPatch(lines)) return 'shell';
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (ENVELOPE_MARKER.test(line) || HEREDOC_START.test(line)) return 'codex';
    if (SEARCH_MARKER.test(line)) return 'search-replace';
    if (isDiffHeader(line, lines[index + 1])) return 'unified';
  }
  return 'unified';
}

/** `diff --git`, a hunk header, or `---` followed by `+++` (a lone `--- ` line may be prose). */
function isDiffHeader(line: string, next: string | undefined): boolean {
  return line.startsWith('diff --git ') || line.startsWith('@@') || (line.startsWith('--- ') && next?.startsWith('+++ ') === true);
}

/** The first non-blank line is `cd <dir> && apply_patch …`. */
export function startsWithCdApplyPatch(lines: readonly string[]): boolean {
  const first = lines.find((line) => line.trim() !== '');
  return first !== undefined && CD_APPLY_PATCH.test(first);
}
