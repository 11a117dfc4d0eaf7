/** Applying one file's hunks: locate each in order (match.ts), then splice the new lines in. */
import { engineError, type EngineError } from './errors.ts';
import { findAnchor, findNearestRegion, LineIndex, seekHunk } from './match.ts';
import type { Piece, TextFile } from './text.ts';
import type { LineTier } from './tiers.ts';
import { fail, ok, type Hunk, type HunkReport, type Result } from './types.ts';

/** One hunk as applied: the lines it replaced (as the file had them) and the lines it wrote, 0-based. */
export interface AppliedEdit {
  readonly oldStart: number;
  readonly oldLines: readonly string[];
  readonly newStart: number;
  readonly newLines: readonly string[];
  /** The hunk as unified-diff lines (` x`, `-x`, `+x`), context spelled as in the file. */
  readonly diffLines: readonly string[];
  readonly changed: boolean;
}

export interface AppliedHunks {
  /** The new content: runs of old lines and new text (see `assemble`). */
  readonly pieces: readonly Piece[];
  readonly finalNewline: boolean;
  readonly lineCount: number;
  readonly reports: readonly HunkReport[];
  readonly edits: readonly AppliedEdit[];
}

interface Located {
  readonly hunk: Hunk;
  readonly start: number;
  readonly length: number;
}

export function applyHunks(file: TextFile, hunks: readonly Hunk[], path: string, tiers: readonly LineTier[]): Result<AppliedHunks> {
  const usable = file.bom ? hunks.map(stripBom) : hunks;
  const index = new LineIndex(file);
  const located = locateHunks(index, usable, path, tiers);
  if (!located.ok) return located;
  return ok(spliceHunks(file, index, located.value.located, located.value.reports));
}

function locateHunks(index: LineIndex, hunks: readonly Hunk[], path: string, tiers: readonly LineTier[]): Result<{ located: Located[]; reports: HunkReport[] }> {
  const located: Located[] = [];
  const reports: HunkReport[] = [];
  let from = 0;
  let previousStart = 0;
  let shift = 0;
  for (const [hunkIndex, hunk] of hunks.entries()) {
    const context = { index, path, hunkIndex, tiers, previousStart };
    const found = locateHunk(hunk, from, shift, context);
    if (!found.ok) return found;
    const { start, tier } = found.value;
    const length = oldLines(hunk).length;
    const declared = hunk.oldStart === undefined ? undefined : hunk.oldStart - 1;
    if (declared !== undefined) shift = start - declared;
    located.push({ hunk, start, length });
    reports.push({ index: hunkIndex, line: start + 1, tier, offset: declared === undefined ? 0 : start - declared });
    previousStart = start;
    from = start + length;
  }
  return ok({ located, reports });
}

interface LocateContext {
  readonly index: LineIndex;
  readonly path: string;
  readonly hunkIndex: number;
  readonly tiers: readonly LineTier[];
  readonly previousStart: number;
}

function locateHunk(hunk: Hunk, from: number, shift: number, context: LocateContext): Result<{ start: number; tier: LineTier }> {
  const { index, path, hunkIndex, tiers } = context;
  let searchFrom = from;
  for (const anchor of hunk.anchors) {
    const found = findAnchor(index, anchor, searchFrom, tiers);
    if (!found) {
      return fail(engineError('context_not_found', `The @@ anchor ${JSON.stringify(anchor)} of hunk ${hunkIndex + 1} is not in ${path}${searchFrom > 0 ? ` after line ${searchFrom}` : ''}.`, { path, hunkIndex }));
    }
    searchFrom = found.index + 1;
  }
  const hint = hunk.oldStart === undefined ? undefined : hunk.oldStart - 1 + shift;
  const old = oldLines(hunk);
  if (old.length === 0) return ok({ start: insertionPoint(hunk, searchFrom, hint, index.length), tier: 'exact' });
  const clampedHint = hint === undefined ? undefined : Math.min(Math.max(hint, searchFrom), index.length - old.length);
  const outcome = seekHunk(index, { old, from: searchFrom, hint: clampedHint, atEnd: hunk.atEndOfFile, tiers });
  if (outcome.kind === 'found') return ok({ start: outcome.start, tier: outcome.tier });
  if (outcome.kind === 'ambiguous') {
    const lines = outcome.starts.map((start) => start + 1).join(', ');
    return fail(engineError('ambiguous_context', `Hunk ${hunkIndex + 1} of ${path} matches at several places (lines ${lines}${outcome.starts.length >= 5 ? ', …' : ''}).`, { path, hunkIndex }));
  }
  return fail(explainMissing(old, hunk, searchFrom, context));
}

/** A hunk of added lines only: after its anchor, at its hinted line, or else at the end of the file. */
function insertionPoint(hunk: Hunk, searchFrom: number, hint: number | undefined, length: number): number {
  if (hunk.anchors.length > 0 || hunk.atEndOfFile) return hunk.atEndOfFile ? length : searchFrom;
  if (hint === undefined) return length;
  return Math.min(Math.max(hint, searchFrom), length);
}

function explainMissing(old: readonly string[], hunk: Hunk, searchFrom: number, context: LocateContext): EngineError {
  const { index, path, hunkIndex, tiers, previousStart } = context;
  if (hunkIndex > 0 && previousStart < searchFrom) {
    const overlapping = seekHunk(index, { old, from: previousStart, atEnd: hunk.atEndOfFile, tiers });
    if (overlapping.kind === 'found' && overlapping.start < searchFrom) {
      return engineError('overlapping_edits', `Hunk ${hunkIndex + 1} of ${path} overlaps the lines changed by hunk ${hunkIndex}.`, { path, hunkIndex });
    }
  }
  const nearest = findNearestRegion(index, old, 0);
  const where = hunk.atEndOfFile ? ' at the end of the file' : searchFrom > 0 ? ` after line ${searchFrom}` : '';
  const near = nearest ? ` The closest text starts at line ${nearest.line} (${Math.round(nearest.similarity * 100)}% of lines alike).` : '';
  return engineError('context_not_found', `The context of hunk ${hunkIndex + 1} is not in ${path}${where}.${near}`, { path, hunkIndex, nearest });
}

function oldLines(hunk: Hunk): string[] {
  const old: string[] = [];
  for (const line of hunk.lines) if (line.kind !== 'add') old.push(line.text);
  return old;
}

function spliceHunks(file: TextFile, index: LineIndex, located: readonly Located[], reports: readonly HunkReport[]): AppliedHunks {
  const pieces: Piece[] = [];
  const edits: AppliedEdit[] = [];
  let copied = 0;
  let newLineCount = 0;
  let finalNewline = file.finalNewline;
  for (const { hunk, start, length } of located) {
    pieces.push({ from: copied, to: start });
    newLineCount += start - copied;
    const edit = applyHunkLines(hunk, index, start, newLineCount);
    if (edit.newLines.length > 0) pieces.push(edit.newLines.join(file.eol) + file.eol);
    edits.push(edit);
    newLineCount += edit.newLines.length;
    copied = start + length;
    if (copied === index.length && hunk.finalNewline) finalNewline = hunk.finalNewline === 'add';
  }
  pieces.push({ from: copied, to: index.length });
  newLineCount += index.length - copied;
  return { pieces, finalNewline, lineCount: newLineCount, reports, edits };
}

function applyHunkLines(hunk: Hunk, index: LineIndex, start: number, newStart: number): AppliedEdit {
  const oldLines: string[] = [];
  const newLines: string[] = [];
  const diffLines: string[] = [];
  let cursor = start;
  for (const line of hunk.lines) {
    if (line.kind === 'add') {
      newLines.push(line.text);
      diffLines.push(`+${line.text}`);
      continue;
    }
    const current = index.line(cursor++);
    oldLines.push(current);
    if (line.kind === 'context') newLines.push(current);
    diffLines.push(`${line.kind === 'context' ? ' ' : '-'}${current}`);
  }
  const changed = hunk.lines.some((line) => line.kind !== 'context');
  return { oldStart: start, oldLines, newStart, newLines, diffLines, changed };
}

function stripBom(hunk: Hunk): Hunk {
  if (!hunk.lines.some((line) => line.text.startsWith('\uFEFF'))) return hunk;
  return { ...hunk, lines: hunk.lines.map((line) => (line.text.startsWith('\uFEFF') ? { ...line, text: line.text.slice(1) } : line)) };
}
