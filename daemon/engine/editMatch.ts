/**
 * Locating one text edit in the running content of a file; edits.ts applies the result.
 *
 * - A replace whose search is whole lines (ends with a newline) is matched line by line through
 *   the hunk tiers (match.ts). The tiers that ignore leading whitespace (`whitespace`,
 *   `unicode`) take a match only where the file indents the searched lines by one same amount
 *   more or less than the search does, and shift the new lines by it (relativeIndent.ts): new
 *   text written at the model's indentation would land at the wrong one. A whitespace match so
 *   shifted is reported `relative_indent`. A search found only with its indentation changed
 *   unevenly is `context_not_found`, saying so. SEARCH/REPLACE blocks (`relativeIndent`) also
 *   drop a spurious leading blank SEARCH line when nothing else matches. A str_replace edit
 *   tries an exact substring right after the exact line tier, so `foo()\n` still finds
 *   `  foo()\n` verbatim before a looser tier would match it with its indentation ignored.
 * - A replace whose search is not whole lines is a substring: exact, then folded (substring.ts).
 * - An insert goes after a 1-based line (0 = top); a line past the end is `context_not_found`.
 */
import { isBlank } from './chunks.ts';
import { engineError, type EngineError } from './errors.ts';
import { findNearestRegion, LineIndex, lowerBound, seekAll, seekHunk, type SeekRequest } from './match.ts';
import { applyIndentShift, uniformIndentShift } from './relativeIndent.ts';
import { findFoldedOccurrences, findOccurrences, type TextRange } from './substring.ts';
import { BOM, endingNear, lineCount, type LineEnding, type TextFile } from './text.ts';
import type { LineTier } from './tiers.ts';
import { fail, ok, type MatchTier, type Result, type TextEdit } from './types.ts';

/** Replace characters `[from, to)` of the running text with `text` (already in the file's EOL). */
export interface Splice {
  readonly from: number;
  readonly to: number;
  readonly text: string;
}

export interface LocatedEdit {
  /** Ascending and disjoint. */
  readonly splices: readonly Splice[];
  /** 1-based line of the running content where the (first) change starts. */
  readonly line: number;
  readonly tier: MatchTier;
}

export interface EditContext {
  readonly path: string;
  /** 0-based position of the edit in its file patch. */
  readonly editIndex: number;
  readonly tiers: readonly LineTier[];
  /** The file's edits carry their line endings (edits.ts): searches compare raw, new text is written as given. */
  readonly explicit: boolean;
}

type ReplaceEdit = Extract<TextEdit, { kind: 'replace' }>;
type InsertEdit = Extract<TextEdit, { kind: 'insert' }>;

interface Target {
  readonly file: TextFile;
  readonly index: LineIndex;
  readonly edit: ReplaceEdit;
  readonly context: EditContext;
}

/** A whole-line edit's search and replacement, as lines without endings. */
interface EditLines {
  readonly old: readonly string[];
  readonly new: readonly string[];
}

type Missing = { readonly kind: 'missing' };
type Ambiguous = { readonly kind: 'ambiguous'; readonly lines: readonly number[] };
/** The search is there only with its indentation shifted unevenly (1-based lines): its new lines have no place. */
type Uneven = { readonly kind: 'uneven'; readonly lines: readonly number[] };
type StepOutcome = { readonly kind: 'found'; readonly located: LocatedEdit } | Ambiguous | Uneven | Missing;
type Step = () => StepOutcome;

const MISSING: Missing = { kind: 'missing' };
const AMBIGUITY_SAMPLE = 5;
const FOLDED_TIERS = ['trailing_whitespace', 'unicode'] as const;
type SubstringTier = 'exact' | (typeof FOLDED_TIERS)[number];

export function locateEdit(file: TextFile, edit: TextEdit, context: EditContext): Result<LocatedEdit> {
  return edit.kind === 'insert' ? locateInsert(file, edit, context) : locateReplace(file, edit, context);
}

function locateReplace(file: TextFile, edit: ReplaceEdit, context: EditContext): Result<LocatedEdit> {
  if (edit.search === '') {
    const message = `${describe(edit, context)} has empty search text, but ${context.path} exists: insert lines with insertLine, or replace the whole file with a write.`;
    return fail(engineError('parse_error', message, { path: context.path, hunkIndex: context.editIndex }));
  }
  const usable = file.bom && edit.search.startsWith(BOM) ? { ...edit, search: edit.search.slice(1) } : edit;
  const target: Target = { file, index: new LineIndex(file, context.explicit ? 'raw' : 'content'), edit: usable, context };
  for (const step of replaceSteps(target)) {
    const outcome = step();
    if (outcome.kind === 'found') return ok(outcome.located);
    if (outcome.kind === 'ambiguous') return fail(ambiguous(target, outcome.lines));
    if (outcome.kind === 'uneven') return fail(unevenIndent(target, outcome.lines));
  }
  const uneven = unevenlyIndented(target);
  return fail(uneven.length > 0 ? unevenIndent(target, uneven) : notFound(target));
}

function replaceSteps(target: Target): Step[] {
  const { edit, context } = target;
  if (!edit.search.endsWith('\n')) {
    return [() => substringStep(target, 'exact'), ...FOLDED_TIERS.map((tier) => () => substringStep(target, tier))];
  }
  const lines: EditLines = { old: toLines(edit.search), new: toLines(edit.replace) };
  if (!edit.relativeIndent) {
    const looser = context.tiers.filter((tier) => tier !== 'exact');
    return [() => lineStep(target, lines, ['exact']), () => substringStep(target, 'exact'), ...lineSteps(target, lines, looser)];
  }
  const trimmed = context.tiers.length > 1 ? withoutLeadingBlank(lines) : undefined;
  const { tiers } = context;
  return trimmed ? [...lineSteps(target, lines, tiers), ...lineSteps(target, trimmed, tiers)] : lineSteps(target, lines, tiers);
}

/** The line tiers, strictest first: those that compare indentation together, then each tier that ignores it, shifting. */
function lineSteps(target: Target, lines: EditLines, tiers: readonly LineTier[]): Step[] {
  const strict = tiers.filter((tier) => !ignoresIndent(tier));
  const loose = tiers.filter(ignoresIndent);
  return [() => lineStep(target, lines, strict), ...loose.map((tier) => () => lineStep(target, lines, [tier], true))];
}

/** The tiers that compare lines with their leading whitespace trimmed. */
function ignoresIndent(tier: LineTier): boolean {
  return tier === 'whitespace' || tier === 'unicode';
}

/** Aider's leniency for a blank first SEARCH line that is not in the file (SEARCH of 3+ lines); a blank first REPLACE line goes with it. */
function withoutLeadingBlank(lines: EditLines): EditLines | undefined {
  if (lines.old.length < 3 || !isBlank(lines.old[0]!)) return undefined;
  const replacement = lines.new.length > 0 && isBlank(lines.new[0]!) ? lines.new.slice(1) : lines.new;
  return { old: lines.old.slice(1), new: replacement };
}

/**
 * Line-wise matching; with `shifted` (one tier that ignores leading whitespace), only where the
 * indentation differs by a uniform shift, the new lines moved by it. At the whitespace tier
 * that is the `relative_indent` tier.
 */
function lineStep(target: Target, lines: EditLines, tiers: readonly LineTier[], shifted = false): StepOutcome {
  if (tiers.length === 0) return MISSING;
  const { file, index, edit } = target;
  const shiftAt = (start: number) => uniformIndentShift(lines.old, (offset) => index.line(start + offset));
  const accept = shifted ? (start: number) => shiftAt(start) !== undefined : undefined;
  const request: SeekRequest = { old: lines.old, from: 0, atEnd: false, tiers, accept };
  const found = seekStarts(index, request, edit.replaceAll === true);
  if (found.kind !== 'found') return found;
  if (shifted && edit.replaceAll === true) {
    // Every occurrence or none: one whose indentation differs unevenly cannot be replaced, nor silently left out.
    const uneven = (seekAll(index, { ...request, accept: undefined })?.starts ?? []).filter((start) => shiftAt(start) === undefined);
    if (uneven.length > 0) return { kind: 'uneven', lines: uneven.map((start) => start + 1) };
  }
  const splices = found.starts.map((start) => ({
    from: lineOffset(file, start),
    to: lineOffset(file, start + lines.old.length),
    text: joinLines(shifted ? applyIndentShift(lines.new, shiftAt(start)!) : lines.new, target.context.explicit ? '\n' : endingNear(file, start)),
  }));
  const tier = shifted && found.tier === 'whitespace' ? 'relative_indent' : found.tier;
  return { kind: 'found', located: { splices, line: found.starts[0]! + 1, tier } };
}

function seekStarts(index: LineIndex, request: SeekRequest, all: boolean): { kind: 'found'; starts: readonly number[]; tier: LineTier } | Ambiguous | Missing {
  if (all) {
    const every = seekAll(index, request);
    return every ? { kind: 'found', ...every } : MISSING;
  }
  const outcome = seekHunk(index, request);
  if (outcome.kind === 'found') return { kind: 'found', starts: [outcome.start], tier: outcome.tier };
  if (outcome.kind === 'ambiguous') return { kind: 'ambiguous', lines: outcome.starts.map((start) => start + 1) };
  return MISSING;
}

function substringStep(target: Target, tier: SubstringTier): StepOutcome {
  const { file, edit, context } = target;
  if (!context.tiers.includes(tier)) return MISSING;
  const limit = edit.replaceAll ? Infinity : AMBIGUITY_SAMPLE;
  const ranges = findSubstrings(file, edit.search, tier, context.explicit, limit);
  if (ranges.length === 0) return MISSING;
  if (ranges.length > 1 && !edit.replaceAll) return { kind: 'ambiguous', lines: ranges.map((range) => lineOfOffset(file, range.from)) };
  const splices = ranges.map((range) => ({ ...range, text: context.explicit ? edit.replace : withEnding(edit.replace, endingNear(file, lineOfOffset(file, range.from) - 1)) }));
  return { kind: 'found', located: { splices, line: lineOfOffset(file, ranges[0]!.from), tier } };
}

/**
 * Occurrences of `search` at `tier`. Without explicit endings a line break in the search is
 * either ending, so on a file with CRLF lines the exact search skips the CRs of CRLFs.
 */
function findSubstrings(file: TextFile, search: string, tier: SubstringTier, explicit: boolean, limit: number): TextRange[] {
  if (tier !== 'exact') return findFoldedOccurrences(file.text, search, tier, limit);
  if (explicit || file.crlfCount === 0 || !search.includes('\n')) return findOccurrences(file.text, search, limit);
  return findFoldedOccurrences(file.text, search, 'endings', limit);
}

function locateInsert(file: TextFile, edit: InsertEdit, context: EditContext): Result<LocatedEdit> {
  const count = lineCount(file);
  const details = { path: context.path, hunkIndex: context.editIndex };
  if (!Number.isInteger(edit.line) || edit.line < 0) {
    return fail(engineError('parse_error', `Edit ${context.editIndex + 1} inserts after line ${edit.line}; use 0 (the top) or a line number.`, details));
  }
  if (edit.line > count) {
    return fail(engineError('context_not_found', `Edit ${context.editIndex + 1} inserts after line ${edit.line}, but ${context.path} has ${count} line(s). Use a line from 0 (the top) to ${count} (the end).`, details));
  }
  const lines = toLines(edit.text);
  // After a last line without a newline, the inserted lines need one before them.
  const glue = edit.line === count && !file.finalNewline ? file.eol : '';
  const text = lines.length === 0 ? '' : glue + joinLines(lines, context.explicit ? '\n' : endingNear(file, edit.line));
  const at = lineOffset(file, edit.line);
  return ok({ splices: [{ from: at, to: at, text }], line: edit.line + 1, tier: 'exact' });
}

function ambiguous(target: Target, lines: readonly number[]): EngineError {
  const { edit, context } = target;
  const more = lines.length >= AMBIGUITY_SAMPLE ? ', …' : '';
  const remedy = edit.relativeIndent ? 'Add surrounding lines to the SEARCH section' : 'Include more surrounding text in oldText, or set replaceAll';
  const message = `${describe(edit, context)} matches at several places in ${context.path} (lines ${lines.join(', ')}${more}). ${remedy} so that it matches once.`;
  return engineError('ambiguous_context', message, { path: context.path, hunkIndex: context.editIndex });
}

function notFound(target: Target): EngineError {
  const { edit, context, index } = target;
  const nearest = findNearestRegion(index, toLines(edit.search), 0);
  const near = nearest ? ` The closest text starts at line ${nearest.line} (${Math.round(nearest.similarity * 100)}% of lines alike).` : '';
  const message = `${describe(edit, context)} is not in ${context.path}.${near} Re-read the file and copy the text exactly.`;
  return engineError('context_not_found', message, { path: context.path, hunkIndex: context.editIndex, nearest });
}

/** `context_not_found` for a search found at `lines` only with its indentation changed unevenly. */
function unevenIndent(target: Target, lines: readonly number[]): EngineError {
  const { edit, context, index } = target;
  const nearest = findNearestRegion(index, toLines(edit.search), lines[0]! - 1);
  const where = `line${lines.length > 1 ? 's' : ''} ${lines.slice(0, AMBIGUITY_SAMPLE).join(', ')}${lines.length >= AMBIGUITY_SAMPLE ? ', …' : ''}`;
  const replacement = edit.relativeIndent ? 'REPLACE lines' : 'newText';
  const message = `${describe(edit, context)} matches ${context.path} at ${where} only with leading whitespace ignored, and the file indents those lines by different amounts than the edit does (not one same shift on every line), so its ${replacement} cannot be placed at the file's indentation. Copy the lines with their indentation exactly as the file has them.`;
  return engineError('context_not_found', message, { path: context.path, hunkIndex: context.editIndex, nearest });
}

/** 1-based lines where a whole-line search matches with leading whitespace ignored, its indentation shifted unevenly (which `lineSteps` refuses). */
function unevenlyIndented(target: Target): readonly number[] {
  const { edit, context, index } = target;
  const tiers = context.tiers.filter(ignoresIndent);
  if (!edit.search.endsWith('\n') || tiers.length === 0) return [];
  const outcome = seekHunk(index, { old: toLines(edit.search), from: 0, atEnd: false, tiers });
  if (outcome.kind === 'found') return [outcome.start + 1];
  return outcome.kind === 'ambiguous' ? outcome.starts.map((start) => start + 1) : [];
}

function describe(edit: ReplaceEdit, context: EditContext): string {
  const number = context.editIndex + 1;
  return edit.relativeIndent ? `The SEARCH text of block ${number}` : `The oldText of edit ${number}`;
}

/** Lines of text that ends with a newline, or would if it were not missing; '' has none. */
function toLines(text: string): string[] {
  if (text === '') return [];
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n');
}

/** Each line with its ending: LF after a line that ends in CR (its CRLF), `ending` after any other. */
function joinLines(lines: readonly string[], ending: string): string {
  return lines.map((line) => line + (line.endsWith('\r') ? '\n' : ending)).join('');
}

/** `text` with each line break that is not already CRLF written as `ending`. */
function withEnding(text: string, ending: LineEnding): string {
  return ending === '\n' ? text : text.replace(/(?<!\r)\n/g, ending);
}

/** Offset in the text where 0-based line `line` starts; the end of the text past the last line. */
function lineOffset(file: TextFile, line: number): number {
  return line < lineCount(file) ? file.starts[line]! : file.text.length;
}

/** 1-based line holding text offset `offset`. */
function lineOfOffset(file: TextFile, offset: number): number {
  return Math.max(1, lowerBound(file.starts, offset + 1));
}
