/** `auto` format detection over patch lines. */
import type { Dialect } from './types.ts';

const ENVELOPE_MARKER = /^\s*\*\*\* Begin Patch\s*$/;
const HEREDOC_START = /^\s*(?:apply_patch\s+)?<<\s*['"]?EOF['"]?\s*$/;

/** The text dialect of a patch: the `*** Begin Patch` envelope if it has one, else unified diff. */
export function detectTextDialect(lines: readonly string[]): Exclude<Dialect, 'v4a'> {
  for (const line of lines) {
    if (ENVELOPE_MARKER.test(line) || HEREDOC_START.test(line)) return 'codex';
    if (line.startsWith('--- ') || line.startsWith('diff --git ') || line.startsWith('@@')) return 'unified';
  }
  return 'unified';
}
