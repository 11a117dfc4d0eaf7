/**
 * A unified diff cut off in its last hunk (a damaged download or paste). Counts are advisory for a
 * diff a person or a model wrote, who miscount (DESIGN, Dialects); a tool writes them from the hunk
 * it wrote. So a hunk of a diff a tool made (unified.ts's `madeBy`) with fewer lines than it
 * declares, where the patch ends, lost its tail: applying the part that arrived is a wrong edit,
 * and the patch is refused, as `git apply` ("corrupt patch") and GNU patch ("malformed patch")
 * refuse it.
 *
 * Unless the hunk ends as the tool ends a whole one, which says its lines are all there and only
 * its counts were edited (the conformance corpus has such git diffs and applies them: llm-unified
 * `b-counts-*`): after its changes, either `\ No newline at end of file` closes its new side (the
 * tool writes nothing after that), or exactly as much context as the diff shows follows (as much
 * as before the hunk's first change, at least the 3 lines `git diff` and `diff -u` show by
 * default; only a run inside a hunk is longer) while only one side falls short. A cut leaves
 * neither, unless it falls exactly that far into a run of context inside the hunk and what it took
 * is changes of one kind only, up to the end of the file.
 *
 * A short hunk with more of the patch after it was not cut off: its counts are advisory, as for
 * any diff (the corpus applies such a git diff, `b-counts-fa083231bc`).
 */
import { engineError, type EngineError } from './errors.ts';
import type { HunkLineKind } from './types.ts';

/** A tool whose hunks have the lines their headers count: `git diff`, or `diff -u`. */
export type DiffTool = 'git' | 'diff -u';

/** A hunk body line's kind by its prefix; `marker` is `\ No newline at end of file`. */
export type BodyItemKind = HunkLineKind | 'marker';

/** Numbers of old-side and new-side lines. */
export interface Sides {
  readonly old: number;
  readonly new: number;
}

/** The last hunk of a section, ending where the patch ends. */
export interface LastHunk {
  readonly path: string;
  /** 0-based within its file section. */
  readonly hunkIndex: number;
  /** 1-based line of the `@@` header. */
  readonly line: number;
  readonly maker: DiffTool;
  readonly declared: Sides;
  readonly seen: Sides;
  /** The kinds of its body lines, in order. */
  readonly kinds: readonly BodyItemKind[];
}

/** Fewer lines than declared on one side, and no more on the other: what cutting off a hunk's tail leaves. */
export function isShortOf(seen: Sides, declared: Sides): boolean {
  return seen.old <= declared.old && seen.new <= declared.new && (seen.old < declared.old || seen.new < declared.new);
}

/** The `parse_error` for a short last hunk of a tool's diff, unless it ends as a whole hunk does. */
export function cutOffError(hunk: LastHunk): EngineError | undefined {
  if (endsAsWhole(hunk)) return undefined;
  const { path, hunkIndex, declared, seen } = hunk;
  const tool = hunk.maker === 'git' ? 'a git diff (it has an `index` line)' : '`diff -u` output (both header lines carry timestamps)';
  return engineError('parse_error', `The patch looks cut off: hunk ${hunkIndex + 1} of ${path} (line ${hunk.line}) declares ${declared.old} old and ${declared.new} new lines, but the input ends after ${seen.old} and ${seen.new}. This is ${tool}, whose hunks have every line they count, so the rest was lost (a damaged download or paste?); nothing was applied. Resend the whole patch (or, if the hunk was edited by hand, correct its counts).`, { path, hunkIndex });
}

const DEFAULT_CONTEXT = 3;

function endsAsWhole({ kinds, declared, seen }: LastHunk): boolean {
  if (!kinds.some((kind) => kind === 'remove' || kind === 'add')) return false;
  if (endsNewSide(kinds)) return true;
  const oneSided = seen.old === declared.old || seen.new === declared.new;
  return oneSided && contextRun(kinds.toReversed()) === Math.max(DEFAULT_CONTEXT, contextRun(kinds));
}

/** A marker after a context or added line: the new side ends there. */
function endsNewSide(kinds: readonly BodyItemKind[]): boolean {
  return kinds.some((kind, index) => kind === 'marker' && (kinds[index - 1] === 'context' || kinds[index - 1] === 'add'));
}

/** Context lines before the first change (markers skipped). */
function contextRun(kinds: readonly BodyItemKind[]): number {
  let run = 0;
  for (const kind of kinds) {
    if (kind === 'remove' || kind === 'add') break;
    if (kind === 'context') run++;
  }
  return run;
}
