/**
 * Locating a hunk's old lines in a file: hint first, then the whole search range, tier by
 * tier. Several matches at the lowest matching tier are ambiguous unless one sits at the hint.
 */
import type { NearestRegion } from './errors.ts';
import { allLines, lineCount, linesIn, type LineView, type TextFile } from './text.ts';
import { normalizeLine, type LineTier } from './tiers.ts';

/**
 * A file's lines for matching, in one view (text.ts: without endings, or raw as git compares
 * them). Lines near a hint are decoded on demand, a block at a time (a hunk reads its lines
 * together, and again when it is written); a search over the whole range materialises the
 * lines (normalised per tier) once, and repeated searches at a tier go through an index from
 * line text to positions, so many hunks without hints stay linear.
 */
const BLOCK_LINES = 16;

export class LineIndex {
  readonly #file: TextFile;
  readonly #view: LineView;
  /** Blocks of `BLOCK_LINES` lines decoded so far, by block number. */
  readonly #blocks = new Map<number, readonly string[]>();
  readonly #byTier = new Map<LineTier, readonly string[]>();
  readonly #positions = new Map<LineTier, Map<string, number[]>>();
  readonly #scans = new Map<LineTier, number>();
  readonly length: number;
  readonly finalNewline: boolean;

  constructor(file: TextFile, view: LineView = 'content') {
    this.#file = file;
    this.#view = view;
    this.length = lineCount(file);
    this.finalNewline = file.finalNewline;
  }

  /** Line `index` as the file spells it, in this index's view. */
  line(index: number): string {
    const all = this.#byTier.get('exact');
    if (all) return all[index]!;
    const block = Math.floor(index / BLOCK_LINES);
    let lines = this.#blocks.get(block);
    if (!lines) {
      const from = block * BLOCK_LINES;
      lines = linesIn(this.#file, from, Math.min(from + BLOCK_LINES, this.length), this.#view);
      this.#blocks.set(block, lines);
    }
    return lines[index % BLOCK_LINES]!;
  }

  /** Line `index` normalised for `tier`. */
  lineAt(tier: LineTier, index: number): string {
    const all = this.#byTier.get(tier);
    return all ? all[index]! : normalizeLine(tier, this.line(index));
  }

  at(tier: LineTier): readonly string[] {
    let normalized = this.#byTier.get(tier);
    if (!normalized) {
      const lines = tier === 'exact' ? allLines(this.#file, this.#view) : this.at('exact');
      normalized = tier === 'exact' ? lines : lines.map((line) => normalizeLine(tier, line));
      this.#byTier.set(tier, normalized);
    }
    return normalized;
  }

  /** Positions ≥ `from` whose line (at `tier`) is `line`, ascending. */
  *candidates(tier: LineTier, line: string, from: number, to: number): Generator<number> {
    const positions = this.#positionsFor(tier);
    if (positions) {
      const list = positions.get(line) ?? [];
      for (let at = lowerBound(list, from); at < list.length && list[at]! <= to; at++) yield list[at]!;
      return;
    }
    const lines = this.at(tier);
    for (let index = from; index <= to; index++) if (lines[index] === line) yield index;
  }

  #positionsFor(tier: LineTier): Map<string, number[]> | undefined {
    const scans = (this.#scans.get(tier) ?? 0) + 1;
    this.#scans.set(tier, scans);
    if (scans < 2) return undefined;
    let positions = this.#positions.get(tier);
    if (!positions) {
      positions = new Map();
      for (const [index, line] of this.at(tier).entries()) {
        const list = positions.get(line);
        if (list) list.push(index);
        else positions.set(line, [index]);
      }
      this.#positions.set(tier, positions);
    }
    return positions;
  }
}

/** The first position in ascending `sorted` whose value is ≥ `value`. */
export function lowerBound<T extends number | string>(sorted: ArrayLike<T>, value: T): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

export interface SeekRequest {
  /** The hunk's old side: context and removed lines. Never empty. */
  readonly old: readonly string[];
  /** First file index a match may start at. */
  readonly from: number;
  /** Index the hint points at, if any (already shifted and clamped). */
  readonly hint?: number | undefined;
  /** The match must end at the end of the file. */
  readonly atEnd: boolean;
  /** The match must start at the first line of the file. */
  readonly atStart?: boolean | undefined;
  readonly tiers: readonly LineTier[];
  /** A further condition on a match whose lines compare equal (relative indentation checks the indents). */
  readonly accept?: ((start: number) => boolean) | undefined;
}

export type SeekOutcome =
  | { readonly kind: 'found'; readonly start: number; readonly tier: LineTier }
  | { readonly kind: 'ambiguous'; readonly starts: readonly number[]; readonly tier: LineTier }
  | { readonly kind: 'missing' };

const AMBIGUITY_SAMPLE = 5;

export function seekHunk(file: LineIndex, request: SeekRequest): SeekOutcome {
  const bounds = searchBounds(file, request);
  if (!bounds) return { kind: 'missing' };
  const { hint } = request;
  for (const tier of request.tiers) {
    const wanted = request.old.map((line) => normalizeLine(tier, line));
    if (hint !== undefined && hint >= bounds.first && hint <= bounds.last && matchesAt(file, tier, wanted, hint) && accepted(request, hint)) {
      return { kind: 'found', start: hint, tier };
    }
    const starts = findMatches(file, tier, wanted, request, { ...bounds, limit: AMBIGUITY_SAMPLE, disjoint: false });
    if (starts.length === 1) return { kind: 'found', start: starts[0]!, tier };
    if (starts.length > 1) return { kind: 'ambiguous', starts, tier };
  }
  return { kind: 'missing' };
}

/**
 * Starts before `before` (ignoring `request.from`) where the old lines match at `tier`, a sample
 * of at most `AMBIGUITY_SAMPLE`, ascending: the places above its search range a hunk could mean.
 */
export function seekBefore(file: LineIndex, request: SeekRequest, tier: LineTier, before: number): readonly number[] {
  const bounds = searchBounds(file, { ...request, from: 0 });
  if (!bounds) return [];
  const wanted = request.old.map((line) => normalizeLine(tier, line));
  return findMatches(file, tier, wanted, request, { first: bounds.first, last: Math.min(bounds.last, before - 1), limit: AMBIGUITY_SAMPLE, disjoint: false });
}

/** Every non-overlapping match (top to bottom) at the lowest tier that has one; for replace-all edits. */
export function seekAll(file: LineIndex, request: SeekRequest): { readonly starts: readonly number[]; readonly tier: LineTier } | undefined {
  const bounds = searchBounds(file, request);
  if (!bounds) return undefined;
  for (const tier of request.tiers) {
    const wanted = request.old.map((line) => normalizeLine(tier, line));
    const starts = findMatches(file, tier, wanted, request, { ...bounds, limit: Infinity, disjoint: true });
    if (starts.length > 0) return { starts, tier };
  }
  return undefined;
}

interface MatchRange {
  /** First and last start a match may take. */
  readonly first: number;
  readonly last: number;
  readonly limit: number;
  /** Skip matches that overlap the previous one kept. */
  readonly disjoint: boolean;
}

function searchBounds(file: LineIndex, request: SeekRequest): { first: number; last: number } | undefined {
  const end = file.length - request.old.length;
  const first = request.atEnd ? end : request.from;
  const last = request.atStart === true ? Math.min(end, 0) : end;
  if (end < request.from || last < first) return undefined;
  return { first, last };
}

function accepted(request: SeekRequest, start: number): boolean {
  return request.accept === undefined || request.accept(start);
}

/** Whether `lines` (not none) sit at `start`, at one of `tiers`, inside the file and not before `from`. */
export function holdsAt(file: LineIndex, lines: readonly string[], start: number, from: number, tiers: readonly LineTier[]): boolean {
  if (lines.length === 0 || start < from || start + lines.length > file.length) return false;
  return tiers.some((tier) => matchesAt(file, tier, lines.map((line) => normalizeLine(tier, line)), start));
}

function matchesAt(file: LineIndex, tier: LineTier, wanted: readonly string[], start: number): boolean {
  for (let offset = 0; offset < wanted.length; offset++) {
    if (file.lineAt(tier, start + offset) !== wanted[offset]) return false;
  }
  return true;
}

function findMatches(file: LineIndex, tier: LineTier, wanted: readonly string[], request: SeekRequest, range: MatchRange): number[] {
  const starts: number[] = [];
  let free = range.first;
  for (const start of file.candidates(tier, wanted[0]!, range.first, range.last)) {
    if (start < free || !matchesAt(file, tier, wanted, start) || !accepted(request, start)) continue;
    starts.push(start);
    if (starts.length === range.limit) break;
    if (range.disjoint) free = start + wanted.length;
  }
  return starts;
}

/** The first line at or after `from` equal to `anchor`, at the strictest tier that has one. */
export function findAnchor(file: LineIndex, anchor: string, from: number, tiers: readonly LineTier[]): { index: number; tier: LineTier } | undefined {
  for (const tier of tiers) {
    for (const index of file.candidates(tier, normalizeLine(tier, anchor), from, file.length - 1)) return { index, tier };
  }
  return undefined;
}

const NEAREST_TEXT_CHARS = 2_000;
/** Upper bound on alignment votes counted, so a pathological file cannot stall the search. */
const NEAREST_VOTE_BUDGET = 2_000_000;

/**
 * The region most like the hunk's old side: each file line that equals some old line (at the
 * loosest tier) votes for the alignment it implies; the start with most votes wins.
 */
export function findNearestRegion(file: LineIndex, old: readonly string[], from: number): NearestRegion | undefined {
  const lines = file.at('unicode');
  const positions = positionsByLine(old.map((line) => normalizeLine('unicode', line)));
  const votes = new Map<number, number>();
  let budget = NEAREST_VOTE_BUDGET;
  for (let index = from; index < lines.length && budget > 0; index++) {
    const offsets = positions.get(lines[index]!);
    if (!offsets) continue;
    for (const offset of offsets) {
      const start = index - offset;
      if (start >= from) votes.set(start, (votes.get(start) ?? 0) + 1);
    }
    budget -= offsets.length;
  }
  let best: { start: number; score: number } | undefined;
  for (const [start, score] of votes) {
    if (!best || score > best.score || (score === best.score && start < best.start)) best = { start, score };
  }
  if (!best) return undefined;
  const text = file.at('exact').slice(best.start, best.start + old.length).join('\n').slice(0, NEAREST_TEXT_CHARS);
  return { line: best.start + 1, text, similarity: Math.round((best.score / old.length) * 100) / 100 };
}

function positionsByLine(lines: readonly string[]): Map<string, number[]> {
  const positions = new Map<string, number[]>();
  lines.forEach((line, offset) => {
    if (line === '') return; // blank lines say nothing about where a region is
    const list = positions.get(line);
    if (list) list.push(offset);
    else positions.set(line, [offset]);
  });
  return positions;
}
