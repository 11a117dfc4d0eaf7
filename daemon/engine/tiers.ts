/** The tolerance tiers of context matching, loosest last (DESIGN, Matching). */
import type { MatchTier } from './types.ts';

/** The tiers that compare line by line; `relative_indent` compares whole blocks (SEARCH/REPLACE blocks and str_replace edits). */
export type LineTier = Exclude<MatchTier, 'relative_indent'>;

export const ALL_TIERS: readonly LineTier[] = ['exact', 'trailing_whitespace', 'whitespace', 'unicode'];
export const EXACT_ONLY: readonly LineTier[] = ['exact'];

const PUNCTUATION: Readonly<Record<string, string>> = {
  '\u2018': "'", '\u2019': "'", '\u201A': "'", '\u201B': "'", '\u2032': "'",
  '\u201C': '"', '\u201D': '"', '\u201E': '"', '\u201F': '"', '\u2033': '"', '\u00AB': '"', '\u00BB': '"',
  '\u2010': '-', '\u2011': '-', '\u2012': '-', '\u2013': '-', '\u2014': '-', '\u2015': '-', '\u2212': '-',
  '\u00A0': ' ', '\u2002': ' ', '\u2003': ' ', '\u2004': ' ', '\u2005': ' ', '\u2006': ' ', '\u2007': ' ',
  '\u2008': ' ', '\u2009': ' ', '\u200A': ' ', '\u202F': ' ', '\u205F': ' ', '\u3000': ' ',
  '\u2026': '...',
};
const FOLDABLE = new RegExp(`[${Object.keys(PUNCTUATION).join('')}]`, 'g');

/** The ASCII spelling of one character at the `unicode` tier, or the character itself. */
export function foldPunctuationChar(char: string): string {
  return PUNCTUATION[char] ?? char;
}

function foldPunctuation(line: string): string {
  return line.replace(FOLDABLE, (char) => PUNCTUATION[char] ?? char);
}

/** The form of a line compared at a tier. */
export function normalizeLine(tier: LineTier, line: string): string {
  switch (tier) {
    case 'exact': return line;
    case 'trailing_whitespace': return line.trimEnd();
    case 'whitespace': return line.trim();
    case 'unicode': return foldPunctuation(line).trim();
  }
}
