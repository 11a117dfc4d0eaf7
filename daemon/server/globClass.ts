/**
 * A glob's character class (`[a-z0-9_]`, `[!a]`, see `pathGlob.ts`) compiled once to sorted,
 * merged ranges, negation folded in, and tested by binary search: a class of a thousand ranges
 * costs about ten probes per character where scanning them cost a thousand comparisons.
 * `searchSteps` bounds the probes of one test; the automaton counts them against its budget.
 *
 * Members are ordered as JavaScript orders one-code-point strings, by UTF-16 code units, as the
 * string comparisons this replaces did: not by code point. A character beyond the BMP sorts
 * among the surrogates (after U+D7FF, before U+E000), so `[\u{E000}-\u{10000}]` is empty.
 */

const SLASH = 0x2f;

export class CharClass {
  /** Where membership flips, ascending, as `utf16Rank`s: members are the ranks with an odd count of bounds at or below them. */
  readonly #bounds: Int32Array;
  /** Most probes one `has` makes. */
  readonly searchSteps: number;

  /** The class of the inclusive code-point `ranges` (one with its high below its low is empty), or of every character outside them. */
  constructor(ranges: readonly (readonly [low: number, high: number])[], negated: boolean) {
    const ranked = ranges
      .map(([low, high]) => [utf16Rank(low), utf16Rank(high)] as const)
      .filter(([low, high]) => low <= high)
      .sort((a, b) => a[0] - b[0]);
    const bounds: number[] = [];
    for (const [low, high] of ranked) {
      const end = bounds.length;
      if (end > 0 && low <= bounds[end - 1]!) bounds[end - 1] = Math.max(bounds[end - 1]!, high + 1);
      else bounds.push(low, high + 1);
    }
    // Negating flips the parity of every rank: one more bound at the very bottom, or one fewer.
    if (negated) {
      if (bounds[0] === 0) bounds.shift();
      else bounds.unshift(0);
    }
    this.#bounds = Int32Array.from(bounds);
    this.searchSteps = 32 - Math.clz32(this.#bounds.length);
  }

  /** Whether the character `code` is a member; `/` never is. */
  has(code: number): boolean {
    if (code === SLASH) return false;
    const rank = utf16Rank(code);
    const bounds = this.#bounds;
    let low = 0;
    let high = bounds.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (bounds[middle]! <= rank) low = middle + 1;
      else high = middle;
    }
    return (low & 1) === 1;
  }
}

/**
 * Where `String.fromCodePoint(code)` falls among the others under `<`: a BMP character (a lone
 * surrogate too) by its code unit, a pair just after its lead surrogate alone, by its trail.
 */
function utf16Rank(code: number): number {
  if (code <= 0xffff) return code * 0x401;
  const offset = code - 0x1_0000;
  return (0xd800 + (offset >> 10)) * 0x401 + (offset & 0x3ff) + 1;
}
