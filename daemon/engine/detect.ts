/** `auto` format detection over patch lines. */
import { SEARCH_MARKER } from './searchReplace.ts';
import type { Dialect } from './types.ts';

/** The dialects patch text can be written in (V4A and structured edits arrive as data). */
export type TextDialect = Exclude<Dialect, 'v4a' | 'edits'>;

const ENVELOPE_MARKER = /^\s*\*\*\* Begin Patch\s*$/;
/** The bare wrapper the envelope parser strips itself (Codex's lenient mode): no `cd`, nothing else on the line. */
const HEREDOC_START = /^\s*(?:apply_patch\s+)?<<\s*['"]?EOF['"]?\s*$/;
const PATCH_TOOL = /(?<![\w.-])(?:apply_patch|applypatch|apply|patch|git)(?![\w.-])/;

/**
 * A patch tool (or git) reading a heredoc, wherever it stands on the line: `cd x && apply_patch
 * <<'EOF'`, `git -C x apply <<EOF`, `git am <<EOF`, `patch -p1 <<EOF`, `bash -lc "apply_patch <<EOF`.
 * (One pass: a pattern `tool.*<<` would rescan the rest of the line from every tool word.)
 */
export function runsPatchCommand(line: string): boolean {
  const heredoc = line.lastIndexOf('<<');
  return heredoc > 0 && PATCH_TOOL.test(line.slice(0, heredoc));
}

/**
 * A `cd` or `pushd` where a shell would run it: first on the line (indented, or after a `$`
 * prompt), after `&&`, `||`, `;`, `|`, `(` or `{`, or opening the script of `sh -c '…'`
 * (`bash -lc "cd …`) or `eval "…"`. One in quotes or inline code in a sentence ("Run 'cd build'
 * first", "you may need to `cd build`") is named, not run: see `DIRECTORY_MENTION`. The bare word
 * in a sentence ("fix the cd builtin") is prose: a commit message may say it.
 */
export const DIRECTORY_COMMAND = /(?:^\s*|(?:^|\s)\$\s*|[;&|({]\s*|(?:\s-[A-Za-z]*c|\beval)\s+['"]\s*)(?:cd|pushd)(?=$|[\s;&|)'"])/;
/**
 * A `cd` or `pushd` opening a quoted or inline-code span, its quote captured: the command a
 * sentence names. A quote right after a letter or digit closes a span or is an apostrophe ("the
 * users' cd command"): it opens nothing.
 */
export const DIRECTORY_MENTION = /(?<!\w)([`'"])\s*(?:cd|pushd)(?=$|[\s;&|)`'"])/g;
/**
 * The text dialect of a patch: the first line that tells decides — the `*** Begin Patch` envelope
 * (or a bare `apply_patch <<EOF` wrapper, which the envelope parser accepts itself), a
 * SEARCH/REPLACE marker, a diff header, or a shell line (`isShellLine`), which makes the patch
 * `shell` wherever it stands before it: after prose, inside a fence, wrapped in `bash -lc "…"`.
 * Else unified.
 */
export function detectTextDialect(lines: readonly string[]): TextDialect {
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (ENVELOPE_MARKER.test(line) || HEREDOC_START.test(line)) return 'codex';
    if (SEARCH_MARKER.test(line)) return 'search-replace';
    if (isDiffHeader(line, lines[index + 1])) return 'unified';
    if (isShellLine(line)) return 'shell';
  }
  return 'unified';
}

/**
 * A line that may decide what the patch's paths mean: a `cd` (or `pushd`) a shell would run, or a
 * patch tool run on a heredoc any other way than the bare `apply_patch <<'EOF'` wrapper. Only the
 * shell parser may read past it (and refuses it unless it is a command it understands): another
 * parser would skip it as prose and apply the paths relative to the workspace root.
 */
export function isShellLine(line: string): boolean {
  return DIRECTORY_COMMAND.test(line) || (runsPatchCommand(line) && !HEREDOC_START.test(line));
}

/** `diff --git`, a hunk header, or `---` followed by `+++` (a lone `--- ` line may be prose). */
function isDiffHeader(line: string, next: string | undefined): boolean {
  return line.startsWith('diff --git ') || line.startsWith('@@') || (line.startsWith('--- ') && next?.startsWith('+++ ') === true);
}

/** An envelope marker or file section header, padded or not. */
const ENVELOPE_DIRECTIVE = /^\s*\*\*\* (?:Begin Patch|End Patch|End of File|(?:Add|Update|Delete|Move) File:|Move to:)/;

/**
 * A line no prose holds: (part of) a patch — an envelope marker or section header, an `@@` chunk
 * header, a SEARCH marker or a diff header. Text around a patch that holds one is another patch,
 * or a cut-off part of this one, never surrounding text to ignore.
 */
export function isPatchLine(line: string, next: string | undefined): boolean {
  return ENVELOPE_DIRECTIVE.test(line) || line.trimStart().startsWith('@@') || SEARCH_MARKER.test(line) || isDiffHeader(line, next);
}
