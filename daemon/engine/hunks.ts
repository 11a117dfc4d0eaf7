/** Applying one file's hunks: locate each in order (match.ts), then splice the new lines in. */
import { alreadyThere, engineError, type EngineError } from './errors.ts';
import { findAnchor, findNearestRegion, holdsAt, LineIndex, seekBefore, seekHunk, type SeekRequest } from './match.ts';
import { BOM, endingNear, indexText, lineEnding, TextWriter, textWithBom, type Piece, type TextFile } from './text.ts';
import type { LineTier } from './tiers.ts';
import { fail, ok, type Hunk, type HunkReport, type Result } from './types.ts';

export interface AppliedHunks {
  /**
   * The file as the hunks were applied to it, which `pieces` are runs of: the file given, or,
   * when the hunks spell its BOM (see `applyHunks`), the same file with the BOM as text.
   */
  readonly file: TextFile;
  /** The new content: runs of old lines and new text (see `assemble`). */
  readonly pieces: readonly Piece[];
  readonly lineCount: number;
  readonly reports: readonly HunkReport[];
}

interface Located {
  readonly hunk: Hunk;
  readonly start: number;
  readonly length: number;
}

/**
 * With `literalEndings`, the hunks are EOL-explicit even when none of their lines ends in CR (see `carriesEndings`).
 *
 * A file's BOM is kept apart from its lines, and a hunk that says nothing of it leaves it be
 * (DESIGN, Matching: keep the BOM). A hunk that spells it, its old side starting with the BOM
 * where the file starts (git diffs bytes), says what becomes of it: the file's first line is
 * then read with its BOM, as `git apply` reads it, and the BOM stays only where the new side
 * writes it. So `-\uFEFFx` `+x` removes it.
 */
export function applyHunks(file: TextFile, hunks: readonly Hunk[], path: string, tiers: readonly LineTier[], literalEndings = false): Result<AppliedHunks> {
  if (!file.bom) return applyAsGiven(file, hunks, path, tiers, literalEndings);
  const stripped = applyAsGiven(file, hunks.map((hunk) => stripBom(hunk, file.text === '')), path, tiers, literalEndings);
  if (!stripped.ok || !spellsBom(hunks, stripped.value.reports)) return stripped;
  return applyAsGiven(indexText(textWithBom(file)), hunks, path, tiers, literalEndings);
}

function applyAsGiven(file: TextFile, hunks: readonly Hunk[], path: string, tiers: readonly LineTier[], literalEndings: boolean): Result<AppliedHunks> {
  const explicit = literalEndings || carriesEndings(hunks);
  const index = new LineIndex(file, explicit ? 'raw' : 'content');
  const anchors = explicit ? new LineIndex(file) : index;
  const located = locateHunks({ index, anchors }, hunks, path, tiers);
  if (!located.ok) return located;
  return ok(spliceHunks({ file, index, explicit }, located.value.located, located.value.reports));
}

/** Whether the hunk found at the file's first line starts its old side with the BOM (`reports`: where the hunks, BOM stripped, were found). */
function spellsBom(hunks: readonly Hunk[], reports: readonly HunkReport[]): boolean {
  return reports.some((report) => report.line === 1 && sideLines(hunks[report.index]!, 'old')[0]?.startsWith(BOM) === true);
}

/**
 * A file's hunks are EOL-explicit when one of their lines ends in CR (DESIGN, Line endings,
 * rules 3 and 4): lines then compare raw, as `git apply` compares them, and each added line
 * ends exactly as the patch spells it. (A git diff with no context, `-U0`, may show CRs on
 * added lines only.) Otherwise the patch says nothing about endings: lines compare without them.
 */
export function carriesEndings(hunks: readonly Hunk[]): boolean {
  return hunks.some((hunk) => hunk.lines.some((line) => line.text.endsWith('\r')));
}

/** The file's lines in the hunks' view, and without endings for `@@` anchors. */
interface Indexes {
  readonly index: LineIndex;
  readonly anchors: LineIndex;
}

function locateHunks({ index, anchors }: Indexes, hunks: readonly Hunk[], path: string, tiers: readonly LineTier[]): Result<{ located: Located[]; reports: HunkReport[] }> {
  const located: Located[] = [];
  const reports: HunkReport[] = [];
  let from = 0;
  let previousStart = 0;
  let shift = 0;
  for (const [hunkIndex, hunk] of hunks.entries()) {
    const context = { index, anchors, path, hunkIndex, tiers, previousStart };
    const found = locateHunk(hunk, from, shift, context);
    if (!found.ok) return found;
    const { start, tier } = found.value;
    const length = sideLines(hunk, 'old').length;
    const declared = hunk.oldStart === undefined ? undefined : hunk.oldStart - 1;
    if (declared !== undefined) shift = start - declared;
    located.push({ hunk, start, length });
    reports.push({ index: hunkIndex, line: start + 1, tier, offset: declared === undefined ? 0 : start - declared });
    previousStart = start;
    from = start + length;
  }
  return ok({ located, reports });
}

interface LocateContext extends Indexes {
  readonly path: string;
  readonly hunkIndex: number;
  readonly tiers: readonly LineTier[];
  readonly previousStart: number;
}

function locateHunk(hunk: Hunk, from: number, shift: number, context: LocateContext): Result<{ start: number; tier: LineTier }> {
  const { index, path, hunkIndex, tiers } = context;
  const anchored = followAnchors(hunk, from, context);
  if (!anchored.ok) return anchored;
  const searchFrom = anchored.value === undefined ? from : anchored.value.index + 1;
  const hint = hunk.oldStart === undefined ? undefined : hunk.oldStart - 1 + shift;
  const old = sideLines(hunk, 'old');
  if (old.length === 0) {
    const start = insertionPoint(hunk, searchFrom, hint, index.length);
    if (start === undefined) return fail(engineError('context_not_found', `Hunk ${hunkIndex + 1} of ${path} adds lines to an empty file, but ${path} is not empty.`, { path, hunkIndex }));
    return endsAsSaid(hunk, context) ?? ok({ start, tier: 'exact' });
  }
  const clampedHint = hint === undefined ? undefined : Math.min(Math.max(hint, searchFrom), index.length - old.length);
  const request: SeekRequest = { old, from: searchFrom, hint: clampedHint, atEnd: hunk.atEndOfFile, atStart: hunk.atStartOfFile, tiers };
  const outcome = seekHunk(index, request);
  if (outcome.kind === 'found') {
    const seen = { ...outcome, from: searchFrom, hint, atHint: outcome.start === clampedHint };
    return endsAsSaid(hunk, context) ?? appliedBefore(hunk, seen, context) ?? misordered(hunk, request, hint, outcome, context) ?? ok({ start: outcome.start, tier: outcome.tier });
  }
  if (outcome.kind === 'missing' && hunk.edgesYield === true) return beyondEdges(hunk, from, shift, context);
  if (outcome.kind === 'ambiguous') {
    const start = anchored.value === undefined ? undefined : onlyOneInReach(outcome.starts, anchored.value, context);
    if (start !== undefined) return endsAsSaid(hunk, context) ?? ok({ start, tier: outcome.tier });
    const lines = outcome.starts.map((at) => at + 1).join(', ');
    const after = anchored.value === undefined ? '' : `, even after its @@ anchor${hunk.anchors.length > 1 ? 's' : ''} (the last at line ${anchored.value.index + 1}); add context lines that tell them apart`;
    return fail(engineError('ambiguous_context', `Hunk ${hunkIndex + 1} of ${path} matches at several places (lines ${lines}${outcome.starts.length >= 5 ? ', …' : ''})${after}.`, { path, hunkIndex }));
  }
  return fail(explainMissing(old, hunk, searchFrom, context));
}

/** Where the last `@@` anchor of a hunk was found, and how. */
interface FoundAnchor {
  readonly text: string;
  readonly index: number;
  readonly tier: LineTier;
}

/**
 * Codex / V4A `@@` anchors, outermost first: each is the first line matching it after the
 * previous one (after `from` for the first), and the hunk is searched after the last. An anchor
 * found nowhere there is `context_not_found`. Undefined for a hunk without anchors.
 */
function followAnchors(hunk: Hunk, from: number, { anchors, path, hunkIndex, tiers }: LocateContext): Result<FoundAnchor | undefined> {
  let last: FoundAnchor | undefined;
  for (const text of hunk.anchors) {
    const searchFrom = last === undefined ? from : last.index + 1;
    const found = findAnchor(anchors, text, searchFrom, tiers);
    if (!found) {
      return fail(engineError('context_not_found', `The @@ anchor ${JSON.stringify(text)} of hunk ${hunkIndex + 1} is not in ${path}${searchFrom > 0 ? ` after line ${searchFrom}` : ''}.`, { path, hunkIndex }));
    }
    last = { text, ...found };
  }
  return ok(last);
}

/**
 * The anchor binds the hunk to the lines it heads: up to the next line like it (at the tier it
 * was found at), where another copy of that block begins. Of several matches after the anchor,
 * the one that is alone in that reach is the one the patch means — so stacked anchors (`@@ class
 * A:` then `@@ def run(self):`) pick a block that is repeated further down, as the apply_patch
 * guidance tells models to write them. Two matches in the reach stay ambiguous. `starts`:
 * ascending, the first few matches.
 */
function onlyOneInReach(starts: readonly number[], anchor: FoundAnchor, context: LocateContext): number | undefined {
  const next = findAnchor(context.anchors, anchor.text, anchor.index + 1, [anchor.tier]);
  const reach = next === undefined ? context.index.length : next.index;
  const [first, second] = starts;
  return first !== undefined && first < reach && (second === undefined || second >= reach) ? first : undefined;
}

/** A hunk whose marker says the file ends without a final newline (or with one) must find it so, as `git apply` does. */
function endsAsSaid(hunk: Hunk, { index, path, hunkIndex }: LocateContext): Result<never> | undefined {
  if (hunk.finalNewline === undefined || hunk.finalNewline.old === index.finalNewline) return undefined;
  const said = hunk.finalNewline.old ? 'with a newline (its `\\ No newline at end of file` marks only the new side)' : 'without a newline (`\\ No newline at end of file`)';
  return fail(engineError('context_not_found', `Hunk ${hunkIndex + 1} of ${path} says the file ends ${said}, but it ${index.finalNewline ? 'has one' : 'has none'}.`, { path, hunkIndex }));
}

/**
 * A hunk held to an edge the file no longer has there, whose edges yield (`Hunk.edgesYield`):
 * already applied when its new side is in the file, else placed as if it had no edges.
 */
function beyondEdges(hunk: Hunk, from: number, shift: number, context: LocateContext): Result<{ start: number; tier: LineTier }> {
  const { index, path, hunkIndex, tiers } = context;
  const newSide = sideLines(hunk, 'new');
  const applied = seekHunk(index, { old: newSide, from: 0, atStart: false, atEnd: false, tiers });
  if (applied.kind !== 'missing') {
    const at = applied.kind === 'found' ? `line ${applied.start + 1}` : `lines ${applied.starts.map((start) => start + 1).join(', ')}`;
    return fail(alreadyThere(path, `Hunk ${hunkIndex + 1} of ${path} is not${edgeOf(hunk) ?? ''}, and its new side is in the file already (${at}).`, hunkIndex));
  }
  const unheld = { ...hunk, atStartOfFile: false, atEndOfFile: hunk.finalNewline !== undefined, edgesYield: false };
  return locateHunk(unheld, from, shift, context);
}

/** Where a hunk's old side was found, and where its numbers put it (shifted, not clamped). */
interface Found {
  readonly start: number;
  readonly tier: LineTier;
  /** First line the hunk may start at (after the previous hunk). */
  readonly from: number;
  readonly hint: number | undefined;
  /** Found at the hint (as clamped for the search). */
  readonly atHint: boolean;
}

/**
 * Applied already, a hunk whose old lines reappear inside its new ones (lines it adds above or
 * below its context) is found again there, and would be written a second time. It is taken as
 * applied when its new side, around the old lines found, is where the hunk belongs:
 * - at its hint, the old side found only by moving;
 * - beginning (ending) the file, for a hunk that begins (ends) with added lines, the old side
 *   found by moving but not at that edge itself (where a diff made with context would have it);
 *   or, for one that ends with them, found at its hint where the new side starts too (lines
 *   appended after the last one, as `svn diff` or a model writes them, leave the old side there).
 * A diff made from the file finds its old side at its hint and at any edge it shows, so none of
 * this holds for it; a model's wrong numbers move only the hint. The refusal is
 * `context_not_found`: the whole file's reverse makes it `already_applied` when every hunk is
 * there (alreadyApplied.ts), and a file patched only in part stays refused.
 */
function appliedBefore(hunk: Hunk, found: Found, { index, path, hunkIndex, tiers }: LocateContext): Result<never> | undefined {
  const newSide = sideLines(hunk, 'new');
  const oldLength = sideLines(hunk, 'old').length;
  if (newSide.length <= oldLength) return undefined; // its old lines cannot lie inside fewer new ones
  const ends = index.length - newSide.length;
  const places: { at: number; where: string }[] = [];
  if (found.hint !== undefined && !found.atHint) places.push({ at: found.hint, where: `is at line ${found.hint + 1}, where its numbers put it` });
  if (hunk.lines[0]?.kind === 'add' && !found.atHint && found.start !== 0) places.push({ at: 0, where: 'already begins the file' });
  if (hunk.lines.at(-1)?.kind === 'add' && (found.atHint ? found.start === ends : found.start !== index.length - oldLength)) places.push({ at: ends, where: 'already ends the file' });
  const upTo = tiers.slice(0, tiers.indexOf(found.tier) + 1);
  const around = (at: number) => at <= found.start && found.start + oldLength <= at + newSide.length && holdsAt(index, newSide, at, found.from, upTo);
  const place = places.find(({ at }) => around(at));
  if (place === undefined) return undefined;
  const why = `its new side ${place.where}, and its old lines are only inside it, at line ${found.start + 1}`;
  return fail(engineError('context_not_found', `Hunk ${hunkIndex + 1} of ${path} reads as applied already, so it is not applied again: ${why}.`, { path, hunkIndex }));
}

/**
 * A hunk whose line numbers (shifted as the earlier hunks moved) point above where its search
 * starts, the end of the previous hunk, is out of order or misnumbered. Found only below, it
 * goes there (models misnumber hunks). If its text also matches above, at the tier it was found
 * at, the place below would be a guess against the patch's own numbers: refused, naming both
 * (GNU patch refuses "misordered hunks"). Asked only then, so in-order hunks pay nothing; an
 * `@@` anchor binds the search, so a hunk with one is not asked.
 */
function misordered(hunk: Hunk, request: SeekRequest, hint: number | undefined, found: { readonly start: number; readonly tier: LineTier }, context: LocateContext): Result<never> | undefined {
  if (hint === undefined || hint >= request.from || hunk.anchors.length > 0) return undefined;
  const earlier = seekBefore(context.index, request, found.tier, request.from);
  if (earlier.length === 0) return undefined;
  const { path, hunkIndex, previousStart } = context;
  const lines = `line${earlier.length > 1 ? 's' : ''} ${earlier.map((start) => start + 1).join(', ')}${earlier.length >= 5 ? ', …' : ''}`;
  const relation = earlier.every((start) => start < previousStart)
    ? `before hunk ${hunkIndex} (line ${previousStart + 1})`
    : `before the end of hunk ${hunkIndex} (lines ${previousStart + 1}–${request.from})`;
  const why = `its line numbers do not put it after hunk ${hunkIndex}, so the patch does not say which is meant. Hunks must be in file order.`;
  return fail(engineError('ambiguous_context', `Hunk ${hunkIndex + 1} of ${path} matches ${lines}, ${relation}, and again at line ${found.start + 1}; ${why}`, { path, hunkIndex }));
}

/** A hunk of added lines only: at the edge it must be at, after its anchor, at its hinted line, or else at the end of the file. */
function insertionPoint(hunk: Hunk, searchFrom: number, hint: number | undefined, length: number): number | undefined {
  if (hunk.atStartOfFile === true) return hunk.atEndOfFile && length > 0 ? undefined : 0;
  if (hunk.anchors.length > 0 || hunk.atEndOfFile) return hunk.atEndOfFile ? length : searchFrom;
  if (hint === undefined) return length;
  return Math.min(Math.max(hint, searchFrom), length);
}

function explainMissing(old: readonly string[], hunk: Hunk, searchFrom: number, context: LocateContext): EngineError {
  const { index, path, hunkIndex, tiers, previousStart } = context;
  if (hunkIndex > 0 && previousStart < searchFrom) {
    const overlapping = seekHunk(index, { old, from: previousStart, atEnd: hunk.atEndOfFile, atStart: hunk.atStartOfFile, tiers });
    if (overlapping.kind === 'found' && overlapping.start < searchFrom) {
      return engineError('overlapping_edits', `Hunk ${hunkIndex + 1} of ${path} overlaps the lines changed by hunk ${hunkIndex}.`, { path, hunkIndex });
    }
  }
  const nearest = findNearestRegion(index, old, 0);
  const where = edgeOf(hunk) ?? (searchFrom > 0 ? ` after line ${searchFrom}` : '');
  const near = nearest ? ` The closest text starts at line ${nearest.line} (${Math.round(nearest.similarity * 100)}% of lines alike).` : '';
  return engineError('context_not_found', `The context of hunk ${hunkIndex + 1} is not in ${path}${where}.${near}`, { path, hunkIndex, nearest });
}

function edgeOf(hunk: Hunk): string | undefined {
  if (hunk.atStartOfFile === true) return hunk.atEndOfFile ? ' as the whole file' : ' at the start of the file';
  return hunk.atEndOfFile ? ' at the end of the file' : undefined;
}

/** The hunk's lines on one side: context and removed lines (old), or context and added lines (new). */
export function sideLines(hunk: Hunk, side: 'old' | 'new'): string[] {
  const skipped = side === 'old' ? 'add' : 'remove';
  const lines: string[] = [];
  for (const line of hunk.lines) if (line.kind !== skipped) lines.push(line.text);
  return lines;
}

/** What a located hunk is written into. */
interface Target {
  readonly file: TextFile;
  readonly index: LineIndex;
  readonly explicit: boolean;
}

function spliceHunks(target: Target, located: readonly Located[], reports: readonly HunkReport[]): AppliedHunks {
  const writer = new TextWriter(target.file);
  let copied = 0;
  let finalNewline = target.file.finalNewline;
  for (const { hunk, start, length } of located) {
    writer.copy(copied, start);
    writeHunk(hunk, target, start, writer);
    copied = start + length;
    if (copied === target.index.length && hunk.finalNewline) finalNewline = hunk.finalNewline.new;
  }
  writer.copy(copied, target.index.length);
  return { file: target.file, pieces: writer.finish(finalNewline), lineCount: writer.lineCount, reports };
}

/**
 * Context lines are copied as the file has them. An added line ending in CR is written with
 * an LF after it (CRLF); so is every added line of an EOL-explicit hunk. Otherwise an added
 * line takes the file's own ending where it goes: that of the nearest old line above it in
 * the hunk (below it, for lines added at the hunk's top).
 */
function writeHunk(hunk: Hunk, target: Target, start: number, writer: TextWriter): void {
  const { file, explicit } = target;
  let ending = explicit ? '\n' : endingNear(file, start);
  let cursor = start;
  for (const line of hunk.lines) {
    if (line.kind === 'add') {
      writer.add(line.text, line.text.endsWith('\r') ? '\n' : ending);
      continue;
    }
    if (line.kind === 'context') writer.copy(cursor, cursor + 1);
    if (!explicit) ending = lineEnding(file, cursor) || ending;
    cursor++;
  }
}

/**
 * The file keeps its BOM apart from its lines; a hunk that spells it (git diffs bytes) loses it,
 * to be found (`applyHunks` then reads it literally when it does so at the file's start).
 * In a file that is nothing but a BOM, an old line that is just the BOM is the BOM, not a line.
 */
function stripBom(hunk: Hunk, bomOnly: boolean): Hunk {
  if (!hunk.lines.some((line) => line.text.startsWith(BOM))) return hunk;
  const lines = bomOnly ? hunk.lines.filter((line) => line.kind === 'add' || line.text !== BOM) : hunk.lines;
  const stripped = { ...hunk, lines: lines.map((line) => (line.text.startsWith(BOM) ? { ...line, text: line.text.slice(1) } : line)) };
  // git reads a lone BOM as a line without its newline; without it, the file is empty, which counts as ending with one.
  return bomOnly && hunk.finalNewline ? { ...stripped, finalNewline: { ...hunk.finalNewline, old: true } } : stripped;
}
