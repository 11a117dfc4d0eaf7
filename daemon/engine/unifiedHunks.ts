/**
 * The hunks of a unified diff file section: `@@` headers, bodies, the `\ No newline at end of file`
 * marker, and whether a `--- x`/`+++ y` pair inside a hunk is body text or the next file's header.
 *
 * Conventions:
 * - `Hunk.oldStart` is 1-based: the first old line of the hunk; for a hunk whose old count is 0
 *   (a pure insertion, `@@ -5,0 +6,2 @@`) it is the line the insertion goes before (6), so
 *   `-0,0` gives 1. A header without numbers gives no `oldStart`.
 * - `hunkIndex` in errors and diagnostics is 0-based within its file section.
 * - Totally empty lines inside a hunk are context lines with text '' (models drop the space).
 *   Empty lines at the end of a hunk are dropped unless the hunk's counts need them.
 */
import { engineError, type EngineError } from './errors.ts';
import { fail, ok, type Diagnostic, type Hunk, type HunkLine, type Result } from './types.ts';
import { cutOffError, isShortOf, type BodyItemKind, type DiffTool, type Sides } from './unifiedCutOff.ts';
import { FENCE, GIT_HEADER, isFileHeaderAt, lineAt, quoteLine, withoutCr, type LineCursor } from './unifiedLines.ts';

const HUNK_RANGES = /^-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?$/;
const NO_NUMBERS = /^[.…\s]*$/;
const SUBPROJECT_LINE = /^Subproject commit [0-9a-f]{7,}/;
const HUNK_LINE = /^[ +\-\\]/;

/** Where hunks are read from: the patch lines at the cursor, and where diagnostics go. */
export interface HunkSource extends LineCursor {
  readonly diagnostics: Diagnostic[];
}

export interface ParsedHunk {
  readonly hunk: Hunk;
  /** 1-based line of the `@@` header. */
  readonly line: number;
}

/** Declared numbers of a hunk header; all absent for `@@`, `@@ @@`, `@@ ... @@`. */
interface HunkCounts {
  readonly oldStart?: number;
  readonly oldCount?: number;
  readonly newCount?: number;
}

/**
 * A hunk's body: patch lines `start` to `end` (exclusive), each a hunk line or a marker by its
 * prefix (`bodyKind`). Read in place, not copied into objects per line: a long hunk would hold
 * every line twice until its `HunkLine`s are built.
 */
interface Body {
  readonly lines: readonly string[];
  readonly start: number;
  end: number;
}

interface HunkContext {
  readonly source: HunkSource;
  readonly path: string;
  readonly hunkIndex: number;
  /** 0-based patch line of the `@@` header. */
  readonly headerIndex: number;
  /** The tool that made the section, when its headers say (its hunks have the lines they count). */
  readonly maker: DiffTool | undefined;
}

/**
 * Reads the hunks at the cursor (blank lines before the first are skipped) up to the first line
 * that is no hunk's. `maker`: the tool that made the section, if its headers say.
 */
export function parseHunks(source: HunkSource, path: string, maker?: DiffTool): Result<ParsedHunk[]> {
  skipBlankLinesBeforeHunk(source);
  const hunks: ParsedHunk[] = [];
  while (lineAt(source, source.index).startsWith('@@')) {
    const context = { source, path, hunkIndex: hunks.length, headerIndex: source.index, maker };
    const hunk = parseHunk(context);
    if (!hunk.ok) return hunk;
    hunks.push({ hunk: hunk.value, line: context.headerIndex + 1 });
  }
  return ok(hunks);
}

function skipBlankLinesBeforeHunk(source: HunkSource): void {
  let index = source.index;
  while (index < source.lines.length && lineAt(source, index).trim() === '') index++;
  if (lineAt(source, index).startsWith('@@')) source.index = index;
}

function parseHunk(context: HunkContext): Result<Hunk> {
  const { source } = context;
  const counts = parseHunkHeader(withoutCr(lineAt(source, source.index)), context);
  if (!counts.ok) return counts;
  source.index++;
  const body = readHunkBody(source, counts.value);
  dropTrailingBlankLines(body, counts.value);
  const seen = tally(body);
  const interruption = checkHunkEnd(context, seen, counts.value) ?? checkCutOff(context, body, seen, counts.value);
  if (interruption) return fail(interruption);
  return buildHunk(context, body, seen, counts.value);
}

function parseHunkHeader(text: string, context: HunkContext): Result<HunkCounts> {
  const invalid = (why: string) => fail<HunkCounts>(engineError('invalid_hunk_header', `Line ${context.headerIndex + 1} (${quoteLine(text)}) ${why}. Write \`@@ -old_start,old_count +new_start,new_count @@\`, or just \`@@\`.`, { path: context.path, hunkIndex: context.hunkIndex }));
  if (text.startsWith('@@@')) return invalid('is a combined-diff (merge) header, which is not supported');
  const rest = text.slice(2);
  const close = rest.indexOf('@@');
  const ranges = (close >= 0 ? rest.slice(0, close) : rest).trim();
  if (NO_NUMBERS.test(ranges)) return ok({});
  const match = HUNK_RANGES.exec(ranges);
  if (!match) return invalid('is not a valid hunk header');
  const oldStart = Number(match[1]);
  const oldCount = Number(match[2] ?? '1');
  const newCount = Number(match[4] ?? '1');
  if (![oldStart, oldCount, newCount].every(Number.isSafeInteger)) return invalid('has numbers that are too large');
  return ok({ oldStart: hintedStart(oldStart, oldCount), oldCount, newCount });
}

/** An empty old side (`-5,0`) means "insert after line 5": the hint is the line the insertion goes before. */
function hintedStart(start: number, count: number): number {
  return count === 0 ? start + 1 : Math.max(start, 1);
}

/**
 * Reads body lines by their prefix until a hunk header, a file header or a line that cannot be in
 * a hunk. Counts do not delimit the body (they may be wrong), but they settle whether a
 * `--- x` + `+++ y` pair is a removed and an added line or the next file's header.
 */
function readHunkBody(source: HunkSource, counts: HunkCounts): Body {
  const start = source.index;
  let pairsAreBody: boolean | undefined;
  while (source.index < source.lines.length) {
    const line = lineAt(source, source.index);
    if (isHunkOrGitHeader(line)) break;
    if (isFileHeaderAt(source.lines, source.index)) {
      pairsAreBody ??= headerPairIsBody(source, start, counts);
      if (!pairsAreBody) break;
    }
    if (bodyKind(line) === undefined) break;
    source.index++;
  }
  return { lines: source.lines, start, end: source.index };
}

/** The kind of hunk line `line` is by its prefix, if any; a totally empty line is a blank context line. */
function bodyKind(line: string): BodyItemKind | undefined {
  return isBlankBodyLine(line) ? 'context' : BODY_PREFIXES[line.charAt(0)];
}

function isBlankBodyLine(line: string): boolean {
  return line === '' || line === '\r';
}

const BODY_PREFIXES: Readonly<Record<string, BodyItemKind>> = { ' ': 'context', '-': 'remove', '+': 'add', '\\': 'marker' };

function isHunkOrGitHeader(line: string): boolean {
  return line.startsWith('@@') || line.startsWith(GIT_HEADER);
}

/**
 * A `--- x` line followed by `+++ y` inside a hunk is body text only if the declared counts come
 * out exactly when it is read as body; otherwise it starts the next file. Evaluated once per hunk
 * (the scan reads the rest of the hunk as if every such pair were body), so reading stays linear.
 */
function headerPairIsBody(source: HunkSource, bodyStart: number, counts: HunkCounts): boolean {
  if (counts.oldCount === undefined) return false;
  const before = tally({ lines: source.lines, start: bodyStart, end: source.index });
  const ahead = tallyBodyAhead(source.lines, source.index);
  return blankLinesToDrop({ old: before.old + ahead.old, new: before.new + ahead.new }, ahead.trailingBlanks, counts) !== undefined;
}

/**
 * The old-side and new-side lines of the body from `from` on, as far as it would go with every
 * `---`/`+++` pair read as body, and how many blank lines end it (counted, not collected: the
 * rest of a long hunk would otherwise be held twice).
 */
function tallyBodyAhead(lines: readonly string[], from: number): Sides & { readonly trailingBlanks: number } {
  let old = 0;
  let added = 0;
  let trailingBlanks = 0;
  for (let index = from; index < lines.length; index++) {
    const line = lines[index] ?? '';
    const kind = isHunkOrGitHeader(line) ? undefined : bodyKind(line);
    if (kind === undefined) break;
    if (kind === 'context' || kind === 'remove') old++;
    if (kind === 'context' || kind === 'add') added++;
    if (kind !== 'marker') trailingBlanks = isBlankBodyLine(line) ? trailingBlanks + 1 : 0;
  }
  return { old, new: added, trailingBlanks };
}

/** How many old-side and new-side lines the body makes. */
function tally(body: Body): Sides {
  let old = 0;
  let added = 0;
  for (let index = body.start; index < body.end; index++) {
    const kind = bodyKind(body.lines[index]!);
    if (kind === 'context' || kind === 'remove') old++;
    if (kind === 'context' || kind === 'add') added++;
  }
  return { old, new: added };
}

/** How many trailing blank lines to drop so the body matches the declared counts; undefined if none does. */
function blankLinesToDrop(seen: Sides, trailingBlanks: number, counts: HunkCounts): number | undefined {
  if (counts.oldCount === undefined || counts.newCount === undefined) return undefined;
  const extra = seen.old - counts.oldCount;
  if (extra !== seen.new - counts.newCount || extra < 0 || extra > trailingBlanks) return undefined;
  return extra;
}

/**
 * Empty lines at the end of a hunk are usually separators or the patch's last newline, not context.
 * Keep exactly as many as the declared counts need; when the counts do not settle it, drop them all
 * (dropping trailing context only loosens the match, keeping a spurious one would break it).
 */
function dropTrailingBlankLines(body: Body, counts: HunkCounts): void {
  let trailing = 0;
  while (trailing < body.end - body.start && isBlankBodyLine(body.lines[body.end - 1 - trailing]!)) trailing++;
  if (trailing === 0) return;
  const drop = blankLinesToDrop(tally(body), trailing, counts) ?? trailing;
  body.end -= drop;
}

/**
 * The body stopped at a line that is not a hunk line. That ends the diff (prose or a fence after
 * it) when the counts came out exactly, when the line is a fence, or when nothing diff-like
 * follows; otherwise the line sits inside a hunk (say, a context line that lost its space) and
 * reading on would silently cut the hunk short.
 */
function checkHunkEnd(context: HunkContext, seen: Sides, counts: HunkCounts): EngineError | undefined {
  const { source } = context;
  if (source.index >= source.lines.length) return undefined;
  const line = lineAt(source, source.index);
  if (isHunkOrGitHeader(line) || isFileHeaderAt(source.lines, source.index)) return undefined;
  if (countsMatch(seen, counts) || FENCE.test(line) || !diffLinesFollow(source.lines, source.index + 1)) return undefined;
  return engineError('parse_error', `Line ${source.index + 1} (${quoteLine(line)}) interrupts hunk ${context.hunkIndex + 1} of ${context.path}: every hunk line must start with " " (context), "-", "+" or "\\". If it is a context line, add the missing leading space.`, { path: context.path, hunkIndex: context.hunkIndex });
}

/** A tool's hunk that ends where the patch ends with fewer lines than it counts was cut off (unifiedCutOff.ts). */
function checkCutOff(context: HunkContext, body: Body, seen: Sides, counts: HunkCounts): EngineError | undefined {
  const { source, maker, path, hunkIndex } = context;
  if (maker === undefined || source.index < source.lines.length || counts.oldCount === undefined || counts.newCount === undefined) return undefined;
  const declared = { old: counts.oldCount, new: counts.newCount };
  if (!isShortOf(seen, declared)) return undefined;
  const kinds = body.lines.slice(body.start, body.end).map((line) => bodyKind(line)!);
  return cutOffError({ path, hunkIndex, line: context.headerIndex + 1, maker, declared, seen, kinds });
}

/** Do the lines come out as the header declares? Never for a header without numbers. */
function countsMatch(seen: Sides, counts: HunkCounts): boolean {
  return seen.old === counts.oldCount && seen.new === counts.newCount;
}

/** Are there hunk-like lines after `from`, before the next file header? */
function diffLinesFollow(lines: readonly string[], from: number): boolean {
  for (let index = from; index < lines.length; index++) {
    const line = lines[index] ?? '';
    if (line.startsWith(GIT_HEADER) || isFileHeaderAt(lines, index)) return false;
    if (line.startsWith('@@') || HUNK_LINE.test(line)) return true;
  }
  return false;
}

/** `seen`: the body's tally, as the hunk lines built from it come out. */
function buildHunk(context: HunkContext, body: Body, seen: Sides, counts: HunkCounts): Result<Hunk> {
  const { path, hunkIndex } = context;
  const read = applyNoNewlineMarkers(context, body);
  if (!read.ok) return read;
  const { lines, oldLacksNewline, newLacksNewline } = read.value;
  if (lines.length === 0) {
    return fail(engineError('parse_error', `Hunk ${hunkIndex + 1} of ${path} (line ${context.headerIndex + 1}) has no lines. Give it context (" "), removed ("-") or added ("+") lines.`, { path, hunkIndex }));
  }
  if (lines.every((line) => line.kind !== 'context' && SUBPROJECT_LINE.test(line.text))) {
    return fail(engineError('unsupported_git_patch_feature', `Hunk ${hunkIndex + 1} of ${path} (line ${context.headerIndex + 1}) changes a submodule commit; submodule patches are not supported.`, { path, hunkIndex }));
  }
  noteCountMismatch(context, seen, counts);
  const marked = oldLacksNewline || newLacksNewline;
  const hunk: { -readonly [K in keyof Hunk]: Hunk[K] } = { anchors: [], lines, atEndOfFile: marked };
  if (counts.oldStart !== undefined) hunk.oldStart = counts.oldStart;
  if (marked) hunk.finalNewline = { old: !oldLacksNewline, new: !newLacksNewline };
  return ok(hunk);
}

interface MarkedBody {
  readonly lines: HunkLine[];
  readonly oldLacksNewline: boolean;
  readonly newLacksNewline: boolean;
}

/** `\ No newline at end of file` ends the side(s) of the line before it; nothing of that side may follow. */
function applyNoNewlineMarkers(context: HunkContext, body: Body): Result<MarkedBody> {
  const lines: HunkLine[] = [];
  let oldEnded = false;
  let newEnded = false;
  let previousLine: HunkLine | undefined;
  let afterMarker = false;
  for (let index = body.start; index < body.end; index++) {
    const line = body.lines[index]!;
    const kind = bodyKind(line)!;
    const problem = markerProblem(kind, previousLine, oldEnded, newEnded);
    if (problem) return fail(engineError('parse_error', `Line ${index + 1} (${quoteLine(line)}) ${problem}`, { path: context.path, hunkIndex: context.hunkIndex }));
    if (kind !== 'marker') {
      // A totally empty line is an empty context line; any other starts with its prefix.
      previousLine = { kind, text: isBlankBodyLine(line) ? line : line.slice(1) };
      lines.push(previousLine);
    } else if (previousLine && !afterMarker) {
      // A repeated marker says nothing new.
      oldEnded ||= previousLine.kind !== 'add';
      newEnded ||= previousLine.kind !== 'remove';
    }
    afterMarker = kind === 'marker';
  }
  return ok({ lines, oldLacksNewline: oldEnded, newLacksNewline: newEnded });
}

function markerProblem(kind: BodyItemKind, previousLine: HunkLine | undefined, oldEnded: boolean, newEnded: boolean): string | undefined {
  if (kind === 'marker') return previousLine === undefined ? 'must follow the hunk line that lacks its newline.' : undefined;
  if (oldEnded && kind !== 'add') return 'comes after a `\\ No newline at end of file` marker for the old side; no old-side line may follow it.';
  if (newEnded && kind !== 'remove') return 'comes after a `\\ No newline at end of file` marker for the new side; no new-side line may follow it.';
  return undefined;
}

function noteCountMismatch(context: HunkContext, seen: Sides, counts: HunkCounts): void {
  if (counts.oldCount === undefined || counts.newCount === undefined || countsMatch(seen, counts)) return;
  context.source.diagnostics.push({
    code: 'hunk_count_mismatch',
    message: `Hunk ${context.hunkIndex + 1} of ${context.path} (line ${context.headerIndex + 1}) declares ${counts.oldCount} old and ${counts.newCount} new lines but has ${seen.old} and ${seen.new}; the counts were ignored.`,
    path: context.path,
    hunkIndex: context.hunkIndex,
  });
}
