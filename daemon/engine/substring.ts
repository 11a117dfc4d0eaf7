/**
 * Finding a str_replace `oldText` that is not whole lines as a substring of a file's text:
 * exactly, with the CRs of CRLF endings dropped (a search that says nothing about endings), or
 * with trailing whitespace dropped (and Unicode punctuation folded) on both sides.
 * Folding keeps a map back to the original offsets, so a folded match still names the exact
 * characters to replace. Leading whitespace is never folded: inside a substring it is
 * indentation, and replacing it with text spelled at another indentation would be a wrong edit.
 */
import { foldPunctuationChar } from './tiers.ts';

const LF = 10;
const CR = 13;

/** Characters `[from, to)` of the searched text. */
export interface TextRange {
  readonly from: number;
  readonly to: number;
}

/** Up to `limit` non-overlapping occurrences of `needle`, top to bottom. */
export function findOccurrences(haystack: string, needle: string, limit: number): TextRange[] {
  const ranges: TextRange[] = [];
  if (needle === '') return ranges;
  for (let at = haystack.indexOf(needle); at !== -1 && ranges.length < limit; at = haystack.indexOf(needle, at + needle.length)) {
    ranges.push({ from: at, to: at + needle.length });
  }
  return ranges;
}

/** What folding drops: CRs before LF only, or all trailing whitespace (and, for `unicode`, folds punctuation too). */
export type Folding = 'endings' | 'trailing_whitespace' | 'unicode';

/**
 * Like `findOccurrences`, comparing folded forms; ranges are offsets in the unfolded `haystack`.
 * A range that starts at a line break takes in the CR before it, so that a replacement's own
 * line break never leaves a CR behind (`\r` + `\r\n`).
 */
export function findFoldedOccurrences(haystack: string, needle: string, folding: Folding, limit: number): TextRange[] {
  const wanted = fold(needle, folding).text;
  if (wanted === '') return [];
  const folded = fold(haystack, folding);
  const ranges: TextRange[] = [];
  for (const range of findOccurrences(folded.text, wanted, Infinity)) {
    const original = unfold(folded, range);
    if (original === undefined) continue;
    const startsAtCrlf = haystack.charCodeAt(original.from) === LF && haystack.charCodeAt(original.from - 1) === CR;
    ranges.push(startsAtCrlf ? { from: original.from - 1, to: original.to } : original);
    if (ranges.length === limit) break;
  }
  return ranges;
}

interface FoldedText {
  readonly text: string;
  /** Offset in the original text of each folded character. */
  readonly origin: Int32Array;
}

function fold(text: string, folding: Folding): FoldedText {
  const unicode = folding === 'unicode';
  const dropped = folding === 'endings' ? endingCrs(text) : trailingWhitespace(text);
  const changeAt = (at: number): string | undefined => {
    if (dropped[at] === 1) return '';
    if (!unicode || text.charCodeAt(at) < 128) return undefined;
    const folded = foldPunctuationChar(text[at]!);
    return folded === text[at] ? undefined : folded;
  };
  let length = text.length;
  for (let at = 0; at < text.length; at++) length += (changeAt(at)?.length ?? 1) - 1;
  const origin = new Int32Array(length);
  const pieces: string[] = [];
  let unchangedFrom = 0;
  let written = 0;
  for (let at = 0; at < text.length; at++) {
    const change = changeAt(at);
    if (change === undefined) {
      origin[written++] = at;
      continue;
    }
    pieces.push(text.slice(unchangedFrom, at), change);
    origin.fill(at, written, written + change.length);
    written += change.length;
    unchangedFrom = at + 1;
  }
  pieces.push(text.slice(unchangedFrom));
  return { text: pieces.join(''), origin };
}

/** Marks each CR that stands right before an LF. */
function endingCrs(text: string): Uint8Array {
  const marks = new Uint8Array(text.length);
  for (let at = text.indexOf('\r\n'); at !== -1; at = text.indexOf('\r\n', at + 2)) marks[at] = 1;
  return marks;
}

/** Marks whitespace (CR included) that only more whitespace separates from a line break or the end. */
function trailingWhitespace(text: string): Uint8Array {
  const marks = new Uint8Array(text.length);
  let trailing = true;
  for (let at = text.length - 1; at >= 0; at--) {
    const code = text.charCodeAt(at);
    if (code === LF) trailing = true;
    else if (!isWhitespace(code)) trailing = false;
    else if (trailing) marks[at] = 1;
  }
  return marks;
}

function isWhitespace(code: number): boolean {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return /\s/.test(String.fromCharCode(code));
}

/** The original characters of a folded match; none when it starts or ends inside a folded expansion (`…` → `...`). */
function unfold(folded: FoldedText, range: TextRange): TextRange | undefined {
  const { origin } = folded;
  const startsClean = range.from === 0 || origin[range.from - 1] !== origin[range.from];
  const endsClean = range.to === origin.length || origin[range.to] !== origin[range.to - 1];
  if (!startsClean || !endsClean) return undefined;
  return { from: origin[range.from]!, to: origin[range.to - 1]! + 1 };
}
