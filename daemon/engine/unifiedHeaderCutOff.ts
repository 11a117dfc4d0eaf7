/**
 * A git or `diff -u` diff cut off in the header of its last file section (a damaged download or
 * paste), where unifiedCutOff.ts handles a cut in a hunk. The files before the cut are whole, but
 * the cut one is not, and what its header says alone is a wrong edit — an empty file where git
 * created one with content, a rename without its edits — while whatever came after it is lost. So
 * when the input ends inside a header block that a tool never ends there, the patch is refused,
 * `parse_error`, nothing written.
 *
 * The header blocks git writes whole without a hunk: a pure rename (`similarity index 100%`), a
 * mode change (`old mode` + `new mode`), an empty new file (`index 0000000..e69de29`) and a
 * deleted file (`git diff -D` leaves out even a non-empty one's lines; plan.ts then deletes it
 * only if it is the index line's old blob). Every other block goes on to `---`, `+++` and a hunk.
 *
 * Only in a tool's diff: unified.ts's `madeBy` of the section or of an earlier one, a mark only git
 * writes in the section itself (an `index` line, even one cut mid-line; a similarity below 100%),
 * or the timestamp `diff -u` puts on a lone `---` line. Diffs a model or a person wrote stay as
 * lenient as they were, and text after a whole diff is still only noted (`tailAfter`).
 *
 * An index line that names content its hunkless section does not show is a wrong edit wherever
 * the section is (`unshownContent`; unified.ts refuses it mid-patch with its own message).
 */
import { isEmptyBlob } from './blobs.ts';
import { engineError, type EngineError } from './errors.ts';
import { provisionalName } from './strip.ts';
import type { BlobIds } from './types.ts';
import type { DiffTool } from './unifiedCutOff.ts';
import { DIFF_COMMAND, withoutCr } from './unifiedLines.ts';
import { readHeaderPath, type GitHeaders } from './unifiedPaths.ts';

/** The patch's last file section, which the input may end in. */
export interface LastSection {
  /** As messages name it. */
  readonly path: string;
  /** 1-based line where it starts. */
  readonly line: number;
  /** 0-based line after its header and hunks. */
  readonly end: number;
  readonly hunkCount: number;
  /** Its `diff --git` header block; undefined for a bare `---`/`+++` section. */
  readonly git: GitHeaders | undefined;
  /** A bare section with a side dated at the Unix epoch: `diff -N`'s empty file, whole without hunks. */
  readonly epoch: boolean;
  /** The tool that made it or an earlier section of the patch (unified.ts's `madeBy`). */
  readonly maker: DiffTool | undefined;
}

/** Where the input ends in a header, and what the header lacks. */
interface Cut {
  readonly path: string;
  readonly line: number;
  readonly lacks: string;
}

/** The `parse_error` for a tool's patch that ends inside the header of a file section, if it does. */
export function headerCutOffError(lines: readonly string[], last: LastSection): EngineError | undefined {
  const cut = headerCut(lines, last);
  if (cut === undefined) return undefined;
  return engineError('parse_error', `The patch looks cut off at the header of ${cut.path} (line ${cut.line}): ${cut.lacks}, and the input ends there, where the tool that made this diff never ends one, so the rest was lost (a damaged download or paste?). Nothing was applied; resend the whole patch.`, { path: cut.path });
}

/**
 * What the index line of a hunkless `diff --git` section says it should show but does not, if
 * anything: a new file's content (any blob but the empty one), or a change (two different blobs).
 * A deleted file's lines git may leave out (`git diff -D`).
 */
export function unshownContent(git: GitHeaders): string | undefined {
  const { blobs } = git;
  if (blobs === undefined || git.deletedFile) return undefined;
  if (git.newFile) return isEmptyBlob(blobs.new) ? undefined : `its \`index\` line says the new file has content (blob ${blobs.new}; an empty file's is e69de29)`;
  return sameBlob(blobs) ? undefined : `its \`index\` line says the file's content changes (${blobs.old}..${blobs.new})`;
}

function sameBlob({ old, new: next }: BlobIds): boolean {
  return old.startsWith(next) || next.startsWith(old);
}

function headerCut(lines: readonly string[], last: LastSection): Cut | undefined {
  const tail = tailAfter(lines, last.end);
  if (tail === undefined) return undefined;
  if (tail.stray !== undefined) return strayCut(lines, tail.stray, tail.command !== undefined, last);
  if (tail.command !== undefined) return last.maker === undefined ? undefined : commandCut(lines, tail.command);
  if (last.hunkCount > 0) return undefined;
  if (last.git !== undefined) return gitCut(last, last.git);
  if (last.maker === undefined || last.epoch) return undefined;
  return { path: last.path, line: last.line, lacks: 'its `---` and `+++` lines have no hunk after them' };
}

/**
 * What follows the last section, when it is what a cut in a header leaves: blank lines, and at
 * most a `diff -r` command line and then a `---` line with no `+++` after it (`stray`), each by
 * its 0-based line. Anything else (prose after a whole diff) is undefined.
 */
function tailAfter(lines: readonly string[], from: number): { stray: number | undefined; command: number | undefined } | undefined {
  let stray: number | undefined;
  let command: number | undefined;
  for (let index = from; index < lines.length; index++) {
    const line = withoutCr(lines[index] ?? '');
    if (line.trim() === '') continue;
    if (stray !== undefined) return undefined;
    if (line.startsWith('--- ')) stray = index;
    else if (command === undefined && DIFF_COMMAND.test(line)) command = index;
    else return undefined;
  }
  return { stray, command };
}

/** A `---` line with nothing after it: the last section's own when that is a hunkless `diff --git` block, else the next file's. */
function strayCut(lines: readonly string[], stray: number, afterCommand: boolean, last: LastSection): Cut | undefined {
  const text = withoutCr(lines[stray] ?? '');
  const header = readHeaderPath(text.slice(4), stray);
  const own = last.git !== undefined && last.hunkCount === 0 && !afterCommand;
  const byTool = (header.ok && header.value.dated) || last.maker !== undefined || (own && gitMarks(last.git!));
  if (!byTool) return undefined;
  const lacks = 'its `---` line has no `+++` line after it';
  if (own) return { path: last.path, line: last.line, lacks };
  return { path: header.ok ? provisionalName({ old: header.value.path, new: null }) : text.slice(4), line: stray + 1, lacks };
}

/** `diff -ruN old/x new/x` with nothing after it: the next file's header stops at its first line. */
function commandCut(lines: readonly string[], command: number): Cut {
  const names = withoutCr(lines[command] ?? '').trim().split(/\s+/);
  return { path: provisionalName({ old: null, new: names[names.length - 1] ?? null }), line: command + 1, lacks: 'its `diff` command line has no `---` and `+++` lines after it' };
}

function gitCut(last: LastSection, git: GitHeaders): Cut | undefined {
  if (last.maker === undefined && !gitMarks(git)) return undefined;
  const lacks = gitHeaderGap(git);
  return lacks === undefined ? undefined : { path: last.path, line: last.line, lacks };
}

/** What only git writes: an `index` line (whole or cut mid-line), a similarity below 100%. */
function gitMarks(git: GitHeaders): boolean {
  return git.indexLine === true || (git.similarity ?? 100) < 100;
}

/** What a hunkless `diff --git` header block lacks to be one git writes whole, if anything. */
function gitHeaderGap(git: GitHeaders): string | undefined {
  if (git.fileHeaders) return 'its `---` and `+++` lines have no hunk after them';
  if (git.indexLine === true && git.blobs === undefined) return 'its `index` line is incomplete';
  const unshown = unshownContent(git);
  if (unshown !== undefined) return `${unshown}, but no hunk follows`;
  if (git.newFile || git.deletedFile) {
    return git.blobs === undefined ? `its \`${git.newFile ? 'new' : 'deleted'} file mode\` line has no \`index\` line after it, which git always writes` : undefined;
  }
  if ((git.similarity ?? 100) < 100) return `its \`similarity index ${git.similarity}%\` says the renamed file changed, but no hunk follows`;
  if (git.modeChange && git.newMode === undefined) return 'its `old mode` line has no `new mode` line after it';
  return git.renameFrom !== undefined || git.modeChange ? undefined : 'its `diff --git` line has no hunk after it';
}
