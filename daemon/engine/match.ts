/**
 * Locating a hunk's old lines in a file: hint first, then the whole search range, tier by
 * tier. Several matches at the lowest matching tier are ambiguous unless one sits at the hint.
 */
import type { NearestRegion } from './errors.ts';
import { normalizeLine } from './tiers.ts';
import type { MatchTier } from './types.ts';

/** File lines with their normalised forms computed once per tier, on first use. */
export class LineIndex {
  readonly lines: readonly string[];
  readonly #byTier = new Map<MatchTier, readonly string[]>();

  constructor(lines: readonly string[]) {
    this.lines = lines;
    this.#byTier.set('exact', lines);
  }

  get length(): number {
    return this.lines.length;
  }

  at(tier: MatchTier): readonly string[] {
    let normalized = this.#byTier.get(tier);
    if (!normalized) {
      normalized = this.lines.map((line) => normalizeLine(tier, line));
      this.#byTier.set(tier, normalized);
    }
    return normalized;
  }
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
  readonly tiers: readonly MatchTier[];
}

export type SeekOutcome =
  | { readonly kind: 'found'; readonly start: number; readonly tier: MatchTier }
  | { readonly kind: 'ambiguous'; readonly starts: readonly number[]; readonly tier: MatchTier }
  | { readonly kind: 'missing' };

const AMBIGUITY_SAMPLE = 5;

export function seekHunk(file: LineIndex, request: SeekRequest): SeekOutcome {
  const { old, from, hint, atEnd } = request;
  const last = file.length - old.length;
  if (last < from) return { kind: 'missing' };
  const first = atEnd ? last : from;
  for (const tier of request.tiers) {
    const lines = file.at(tier);
    const wanted = old.map((line) => normalizeLine(tier, line));
    if (hint !== undefined && hint >= first && hint <= last && matchesAt(lines, wanted, hint)) {
      return { kind: 'found', start: hint, tier };
    }
    const starts = findMatches(lines, wanted, first, last, AMBIGUITY_SAMPLE);
    if (starts.length === 1) return { kind: 'found', start: starts[0]!, tier };
    if (starts.length > 1) return { kind: 'ambiguous', starts, tier };
  }
  return { kind: 'missing' };
}

function matchesAt(lines: readonly string[], wanted: readonly string[], start: number): boolean {
  for (let offset = 0; offset < wanted.length; offset++) {
    if (lines[start + offset] !== wanted[offset]) return false;
  }
  return true;
}

function findMatches(lines: readonly string[], wanted: readonly string[], first: number, last: number, max: number): number[] {
  const starts: number[] = [];
  const head = wanted[0];
  for (let start = first; start <= last && starts.length < max; start++) {
    if (lines[start] === head && matchesAt(lines, wanted, start)) starts.push(start);
  }
  return starts;
}

/** The first line at or after `from` equal to `anchor` at the loosest tier needed; -1 when none. */
export function findAnchor(file: LineIndex, anchor: string, from: number, tiers: readonly MatchTier[]): { index: number; tier: MatchTier } | undefined {
  for (const tier of tiers) {
    const lines = file.at(tier);
    const wanted = normalizeLine(tier, anchor);
    for (let index = from; index < lines.length; index++) {
      if (lines[index] === wanted) return { index, tier };
    }
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
  const text = file.lines.slice(best.start, best.start + old.length).join('\n').slice(0, NEAREST_TEXT_CHARS);
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
