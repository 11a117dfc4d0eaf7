/**
 * Chunk parsing shared by the `*** Begin Patch` envelope (codex) and V4A diffs: `@@` headers
 * with anchors, then ` `/`-`/`+`/empty body lines, `\ No newline at end of file` and
 * `*** End of File`, turned into `Hunk`s. Also the limit error both parsers report.
 */
import { engineError, type EngineError } from './errors.ts';
import { LIMITS, type LimitName } from './limits.ts';
import { fail, ok, type Hunk, type HunkLine, type HunkLineKind, type Result } from './types.ts';

/** The lines a chunk list is read from, and how to name one of them in an error message. */
export interface ChunkSource {
  readonly lines: readonly string[];
  /** Index one past the last line that belongs to the chunks' section. */
  readonly end: number;
  /** The file the chunks edit, for error details. */
  readonly path: string;
  /** Names line `index` for a model, e.g. `patch line 7`. */
  readonly where: (index: number) => string;
}

export interface ParsedChunks {
  readonly hunks: readonly Hunk[];
  /** The first line not consumed: `end`, or a `***` directive for the caller to read. */
  readonly next: number;
}

interface ParsedChunk {
  readonly hunk: Hunk;
  readonly next: number;
}

const END_OF_FILE = '*** End of File';
/** `@@ -1,2 +1,3 @@ tail`: a unified header some models write in codex/V4A patches; it is no anchor. */
const UNIFIED_RANGE_HEADER = /^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@/;
const MAX_QUOTED_CHARS = 80;

/**
 * Reads the chunks of one file section starting at `start`. Blank lines between chunks are
 * skipped; the first chunk may omit its `@@` line. Stops at the end or at a `***` directive
 * (left to the caller); any other unexpected line is a `parse_error`.
 */
export function parseChunks(source: ChunkSource, start: number, hunksBefore: number): Result<ParsedChunks> {
  const hunks: Hunk[] = [];
  let index = skipBlankLines(source, start);
  while (index < source.end && !isDirective(source.lines[index] ?? '')) {
    if (hunksBefore + hunks.length >= LIMITS.maxHunks) return fail(limitExceeded('maxHunks', LIMITS.maxHunks + 1, 'hunks'));
    const chunk = parseChunk(source, index, hunks.length);
    if (!chunk.ok) return chunk;
    hunks.push(chunk.value.hunk);
    index = skipBlankLines(source, chunk.value.next);
  }
  return ok({ hunks, next: index });
}

/** `limit_exceeded` naming the limit; `actual` may be a lower bound when parsing stopped early. */
export function limitExceeded(name: LimitName, actual: number, what: string): EngineError {
  const max = LIMITS[name];
  return engineError('limit_exceeded', `The patch has more than ${max} ${what}; split it into smaller patches.`, { limit: { name, max, actual } });
}

/** A patch line for an error message: JSON-quoted, long lines cut short. */
export function quoteLine(line: string): string {
  return JSON.stringify(line.length > MAX_QUOTED_CHARS ? `${line.slice(0, MAX_QUOTED_CHARS)}…` : line);
}

export function isBlank(line: string): boolean {
  return line.trim() === '';
}

function skipBlankLines(source: ChunkSource, index: number): number {
  let next = index;
  while (next < source.end && isBlank(source.lines[next] ?? '')) next++;
  return next;
}

/** Markers are recognised with surrounding whitespace where no body line can stand. */
function isDirective(line: string): boolean {
  const trimmed = line.trim();
  return trimmed.startsWith('***') && trimmed !== END_OF_FILE;
}

function parseChunk(source: ChunkSource, index: number, hunkIndex: number): Result<ParsedChunk> {
  const line = source.lines[index] ?? '';
  if (line.trim().startsWith('@@')) {
    const header = readChunkHeaders(source, index, hunkIndex);
    if (!header.ok) return header;
    return parseChunkBody(source, header.value.next, header.value.anchors, hunkIndex);
  }
  if (hunkIndex === 0 && isBodyLine(line)) return parseChunkBody(source, index, [], hunkIndex);
  return fail(chunkError(source, hunkIndex, unexpectedLineMessage(source, index, hunkIndex)));
}

function unexpectedLineMessage(source: ChunkSource, index: number, hunkIndex: number): string {
  const line = source.lines[index] ?? '';
  const at = `${source.where(index)} (${quoteLine(line)})`;
  if (line.trim() === END_OF_FILE) return `${at}: *** End of File must close a chunk that has lines.`;
  if (hunkIndex > 0 && isBodyLine(line)) return `${at}: a chunk after *** End of File must start with an @@ line.`;
  return `${at} is not a chunk line. Start each chunk with @@ (or "@@ <a line of the file>") and each line with " " (context), "-" (remove) or "+" (add).`;
}

function isBodyLine(line: string): boolean {
  return line === '' || line.startsWith(' ') || line.startsWith('-') || line.startsWith('+');
}

/**
 * Consecutive `@@` lines: each `@@ text` stacks an anchor, outermost first. Only the first may
 * be indented: after it, an indented `@@` is a context line of a file that holds `@@` text.
 */
function readChunkHeaders(source: ChunkSource, start: number, hunkIndex: number): Result<{ anchors: string[]; next: number }> {
  const anchors: string[] = [];
  let index = start;
  for (; index < source.end; index++) {
    const line = source.lines[index] ?? '';
    const text = index === start ? line.trimStart() : line;
    if (!text.startsWith('@@')) break;
    const anchor = anchorOf(text);
    if (anchor === null) {
      return fail(chunkError(source, hunkIndex, `${source.where(index)} (${quoteLine(line)}) is not a chunk header: write "@@" or "@@ <a line of the file>".`));
    }
    if (anchor !== undefined) anchors.push(anchor);
  }
  return ok({ anchors, next: index });
}

/** The anchor of an `@@` line; undefined for none, null when the line is malformed. */
function anchorOf(text: string): string | undefined | null {
  if (text.trimEnd() === '@@' || UNIFIED_RANGE_HEADER.test(text)) return undefined;
  const separator = text[2];
  if (separator !== ' ' && separator !== '\t') return null;
  // Only the separating space goes: an anchor's own indentation helps to pick the right line.
  // A CR at its end is the line's ending: anchors are compared without endings.
  return text.endsWith('\r') ? text.slice(3, -1) : text.slice(3);
}

/** Where a chunk body stands while its lines are read. */
interface BodyState {
  readonly lines: HunkLine[];
  /** Empty lines (`''`, or `'\r'` copied from a CRLF file) not yet known to be context: trailing ones separate chunks or sections. */
  readonly pendingBlankLines: string[];
  lastKind: HunkLineKind | 'marker' | undefined;
  oldEnded: boolean;
  newEnded: boolean;
}

interface BodyRead {
  readonly state: BodyState;
  readonly next: number;
  readonly endOfFileMarker: boolean;
}

function parseChunkBody(source: ChunkSource, start: number, anchors: readonly string[], hunkIndex: number): Result<ParsedChunk> {
  const read = readBody(source, start, hunkIndex);
  if (!read.ok) return read;
  const { state, next, endOfFileMarker } = read.value;
  if (state.lines.length === 0) {
    const at = Math.max(start - 1, 0);
    return fail(chunkError(source, hunkIndex, `${source.where(at)}: chunk ${hunkIndex + 1} has no lines. Give it context (" "), removed ("-") or added ("+") lines.`));
  }
  const marked = state.oldEnded || state.newEnded;
  const hunk: Hunk = { anchors: [...anchors], lines: state.lines, atEndOfFile: endOfFileMarker || marked };
  return ok({ hunk: marked ? { ...hunk, finalNewline: { old: !state.oldEnded, new: !state.newEnded } } : hunk, next });
}

/** Reads body lines from `start` until `*** End of File`, an `@@` line, a `***` directive or the end. */
function readBody(source: ChunkSource, start: number, hunkIndex: number): Result<BodyRead> {
  const state: BodyState = { lines: [], pendingBlankLines: [], lastKind: undefined, oldEnded: false, newEnded: false };
  for (let index = start; index < source.end; index++) {
    const line = source.lines[index] ?? '';
    if (line.startsWith('@@') || line.startsWith('***')) return closeBody(source, state, index, hunkIndex);
    const problem = readBodyLine(state, line);
    if (problem !== undefined) return fail(lineError(source, index, hunkIndex, problem));
  }
  return ok({ state, next: source.end - state.pendingBlankLines.length, endOfFileMarker: false });
}

function closeBody(source: ChunkSource, state: BodyState, index: number, hunkIndex: number): Result<BodyRead> {
  const line = source.lines[index] ?? '';
  if (line.trimEnd() !== END_OF_FILE) return ok({ state, next: index - state.pendingBlankLines.length, endOfFileMarker: false });
  // Empty lines right before `*** End of File` are the file's last lines, not separators.
  const problem = flushBlankLines(state);
  if (problem !== undefined) return fail(lineError(source, index, hunkIndex, problem));
  return ok({ state, next: index + 1, endOfFileMarker: true });
}

/** Adds one body line to the chunk; returns what is wrong with it, if anything. */
function readBodyLine(state: BodyState, line: string): string | undefined {
  if (line === '' || line === '\r') {
    state.pendingBlankLines.push(line);
    return undefined;
  }
  if (line.startsWith('\\ ')) return readNoNewlineMarker(state);
  const kind = kindOf(line);
  if (kind === undefined) {
    return 'is not a chunk line: every line must start with " " (context), "-" (remove) or "+" (add); write a single space for an empty context line.';
  }
  return flushBlankLines(state) ?? pushLine(state, kind, line.slice(1));
}

function kindOf(line: string): HunkLineKind | undefined {
  if (line.startsWith(' ')) return 'context';
  if (line.startsWith('-')) return 'remove';
  if (line.startsWith('+')) return 'add';
  return undefined;
}

function flushBlankLines(state: BodyState): string | undefined {
  for (const blank of state.pendingBlankLines.splice(0)) {
    const problem = pushLine(state, 'context', blank);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function pushLine(state: BodyState, kind: HunkLineKind, text: string): string | undefined {
  const ended = kind === 'context' ? state.oldEnded || state.newEnded : kind === 'remove' ? state.oldEnded : state.newEnded;
  if (ended) return 'comes after "\\ No newline at end of file", which marks the last line of the file.';
  state.lines.push({ kind, text });
  state.lastKind = kind;
  return undefined;
}

/** `\ No newline at end of file` says the line above it is the last one of its side of the file. */
function readNoNewlineMarker(state: BodyState): string | undefined {
  const problem = flushBlankLines(state);
  if (problem !== undefined) return problem;
  const kind = state.lastKind;
  if (kind === undefined || kind === 'marker') return 'must follow a context, "-" or "+" line.';
  if (kind !== 'add') state.oldEnded = true;
  if (kind !== 'remove') state.newEnded = true;
  state.lastKind = 'marker';
  return undefined;
}

function lineError(source: ChunkSource, index: number, hunkIndex: number, problem: string): EngineError {
  return chunkError(source, hunkIndex, `${source.where(index)} (${quoteLine(source.lines[index] ?? '')}) ${problem}`);
}

function chunkError(source: ChunkSource, hunkIndex: number, message: string): EngineError {
  return engineError('parse_error', message, { path: source.path, hunkIndex });
}
