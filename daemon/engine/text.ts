/**
 * A file as text plus line offsets, keeping what must survive a rewrite: BOM, each line's
 * ending, final newline. Lines are sliced on demand, so a hunk near its hint costs only its
 * own lines; an ASCII file (the common case) is not even decoded: its line breaks are found
 * in its bytes, and a line is decoded when it is read.
 *
 * Line endings (DESIGN, Matching → Line endings): a line ends in CRLF when a CR stands right
 * before its LF, in LF otherwise; the file's last line may have no ending. A CR anywhere else
 * is content. A line is read in one of two ways:
 * - `content`: without its ending, for patches that say nothing about endings;
 * - `raw`: everything but its LF (a CRLF line keeps its CR), as `git apply` compares them,
 *   for patches whose lines carry their CRs.
 */
import { engineError } from './errors.ts';
import { fail, ok, type Result } from './types.ts';

export type LineEnding = '\n' | '\r\n';

/** How lines are compared and spelled: without endings, or byte for byte up to the LF. */
export type LineView = 'content' | 'raw';

export interface TextFile {
  readonly bom: boolean;
  /** The file's own ending, for lines a patch adds without saying: CRLF when most line breaks are CRLF. */
  readonly eol: LineEnding;
  /** How many line breaks are CRLF: 0 in an LF file. */
  readonly crlfCount: number;
  /** An empty file counts as ending with a newline. */
  readonly finalNewline: boolean;
  /** The content without its BOM (an ASCII file's is decoded from its bytes the first time it is read). */
  readonly text: string;
  /** Offset in `text` where each line starts; its length is the number of lines. */
  readonly starts: Int32Array;
  /** The bytes `text` came from, when every byte after the BOM is ASCII (offsets in text are then offsets in bytes). */
  readonly asciiBytes?: Uint8Array | undefined;
}

/** A run of the old file's lines `[from, to)`, copied byte for byte, or new text. */
export type Piece = { readonly from: number; readonly to: number } | string;

/** The byte order mark, which a `TextFile` keeps apart from its text (`bom`). */
export const BOM = '\uFEFF';
const BOM_BYTES = 3;
const CR = 13;
const LF = 10;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** Decodes UTF-8 bytes; NUL bytes or invalid UTF-8 are `binary_file`. */
export function decodeText(bytes: Uint8Array, path: string): Result<TextFile> {
  const ascii = indexAsciiBytes(bytes);
  if (ascii !== undefined) return ok(ascii);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return fail(engineError('binary_file', `${path} is not valid UTF-8 text.`, { path }));
  }
  if (text.includes('\0')) return fail(engineError('binary_file', `${path} contains NUL bytes; it is not a text file.`, { path }));
  const bom = text.startsWith(BOM);
  const file = indexText(bom ? text.slice(1) : text, bom);
  const asciiAfterBom = bytes.length === file.text.length + (bom ? BOM_BYTES : 0);
  return ok(asciiAfterBom ? { ...file, asciiBytes: bytes } : file);
}

/** Line starts of ASCII files are collected here, reused from one file to the next up to this many lines. */
const MAX_KEPT_STARTS = 1 << 20;
let scratchStarts = new Int32Array(1 << 16);

/** Line breaks found so far in an ASCII file. */
interface AsciiScan {
  starts: Int32Array<ArrayBuffer>;
  count: number;
  breaks: number;
  crlfCount: number;
}

const HIGH_BITS = 0x80808080;
const LOW_BITS = 0x7f7f7f7f;
const ONES = 0x01010101;
const ELEVENS = 0x0b0b0b0b;
const LFS = 0x0a0a0a0a;
/** The word scan below reads the bytes of a 32-bit word lowest address first, as little-endian hosts store them; elsewhere the full decode does the work. */
const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/**
 * The fast path of `decodeText` for the common case, a file of ASCII bytes other than NUL:
 * one pass over the bytes, a 32-bit word at a time, finds the line breaks without decoding;
 * the text is decoded only if someone asks for all of it (lines near hunks are read from the
 * bytes, see `sliceText`). Undefined for any other file (a BOM, non-ASCII, NUL), which the
 * full decode handles.
 */
function indexAsciiBytes(bytes: Uint8Array): TextFile | undefined {
  if (!LITTLE_ENDIAN) return undefined;
  const length = bytes.length;
  const scan: AsciiScan = { starts: scratchStarts, count: 0, breaks: 0, crlfCount: 0 };
  if (length > 0) scan.starts[scan.count++] = 0;
  const head = Math.min(length, (4 - (bytes.byteOffset & 3)) & 3);
  if (!scanBytes(bytes, 0, head, scan)) return undefined;
  const count = (length - head) >>> 2;
  // The view must start on a multiple of 4, which `head` reaches only when the file is long enough.
  const words = count === 0 ? new Uint32Array(0) : new Uint32Array(bytes.buffer, bytes.byteOffset + head, count);
  for (let word = 0; word < words.length; word++) {
    const value = words[word]!;
    // Most words hold no LF, NUL or byte ≥ 0x80, nor any other byte below 11 (TAB…): one test lets them by.
    if (!hasByteBelow11OrAbove127(value)) continue;
    if (((zeroByteAlarm(value) | value) & HIGH_BITS) !== 0) return undefined;
    noteLineBreaks(zeroBytes(value ^ LFS), head + word * 4, bytes, scan); // an LF byte is zero once XORed with LFS
  }
  if (!scanBytes(bytes, head + words.length * 4, length, scan)) return undefined;
  const { starts } = scan;
  let lines = scan.count;
  if (lines > 0 && starts[lines - 1] === length) lines--;
  if (starts.length <= MAX_KEPT_STARTS) scratchStarts = starts;
  return lazyAsciiText(bytes, starts.slice(0, lines), scan.crlfCount, scan.crlfCount * 2 > scan.breaks ? '\r\n' : '\n');
}

/**
 * Subtracting 11 from each byte borrows into the high bit of the lowest byte below 11, and
 * bytes under that one (none below 11) neither borrow nor set theirs; bytes above 127 have theirs.
 */
function hasByteBelow11OrAbove127(word: number): boolean {
  return (((word - ELEVENS) | word) & HIGH_BITS) !== 0;
}

/** A high bit in every zero byte of `word` (and maybe in bytes above one): nonzero exactly when `word` has a zero byte. */
function zeroByteAlarm(word: number): number {
  return (word - ONES) & ~word;
}

/** The high bit of every zero byte of `word`, and of no other byte. */
function zeroBytes(word: number): number {
  return ~(((word & LOW_BITS) + LOW_BITS) | word | LOW_BITS);
}

/** Notes an LF for each high bit of `lfs`, a word's LF bytes from `first` on, lowest byte first. */
function noteLineBreaks(lfs: number, first: number, bytes: Uint8Array, scan: AsciiScan): void {
  for (let rest = lfs; rest !== 0; rest &= rest - 1) {
    const at = first + ((31 - Math.clz32(rest & -rest)) >>> 3);
    if (scan.count === scan.starts.length) scan.starts = grow(scan.starts);
    scan.starts[scan.count++] = at + 1;
    scan.breaks++;
    if (at > 0 && bytes[at - 1] === CR) scan.crlfCount++;
  }
}

/** Notes the line breaks of `bytes[from, to)`; false at a byte that is not ASCII, or NUL. */
function scanBytes(bytes: Uint8Array, from: number, to: number, scan: AsciiScan): boolean {
  for (let at = from; at < to; at++) {
    const byte = bytes[at]!;
    if (byte === LF) {
      if (scan.count === scan.starts.length) scan.starts = grow(scan.starts);
      scan.starts[scan.count++] = at + 1;
      scan.breaks++;
      if (at > 0 && bytes[at - 1] === CR) scan.crlfCount++;
    } else if (byte === 0 || byte >= 0x80) {
      return false;
    }
  }
  return true;
}

/** An ASCII `TextFile` whose `text` is decoded on first use. */
function lazyAsciiText(bytes: Uint8Array, starts: Int32Array<ArrayBuffer>, crlfCount: number, eol: LineEnding): TextFile {
  let text: string | undefined;
  return {
    bom: false, eol, crlfCount, starts, asciiBytes: bytes,
    finalNewline: bytes.length === 0 || bytes[bytes.length - 1] === LF,
    get text(): string {
      text ??= utf8.decode(bytes);
      return text;
    },
  };
}

/** Length of `file.text`, without decoding it. */
function textLength(file: TextFile): number {
  return file.asciiBytes ? file.asciiBytes.length - (file.bom ? BOM_BYTES : 0) : file.text.length;
}

/** `file.text.charCodeAt(at)`, without decoding it. */
function codeAt(file: TextFile, at: number): number {
  if (!file.asciiBytes) return file.text.charCodeAt(at);
  return at < 0 ? Number.NaN : (file.asciiBytes[at + (file.bom ? BOM_BYTES : 0)] ?? Number.NaN);
}

/** `file.text.slice(from, to)` for a short range (a line), without decoding the whole text. */
function sliceText(file: TextFile, from: number, to: number): string {
  if (to <= from) return '';
  if (!file.asciiBytes) return file.text.slice(from, to);
  const offset = file.bom ? BOM_BYTES : 0;
  return utf8.decode(file.asciiBytes.subarray(from + offset, to + offset));
}

/** Indexes decoded text (no BOM) by line. */
export function indexText(text: string, bom = false): TextFile {
  let starts = new Int32Array(1024);
  let count = 0;
  let breaks = 0;
  let crlfCount = 0;
  let at = 0;
  while (at < text.length) {
    if (count === starts.length) starts = grow(starts);
    starts[count++] = at;
    const newline = text.indexOf('\n', at);
    if (newline === -1) break;
    breaks++;
    if (text.charCodeAt(newline - 1) === CR) crlfCount++;
    at = newline + 1;
  }
  const finalNewline = text === '' || text.endsWith('\n');
  const eol = crlfCount * 2 > breaks ? '\r\n' : '\n';
  return { bom, eol, crlfCount, finalNewline, text, starts: starts.subarray(0, count) };
}

function grow(starts: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const larger = new Int32Array(starts.length * 2);
  larger.set(starts);
  return larger;
}

export function lineCount(file: TextFile): number {
  return file.starts.length;
}

/** Offset in `text` just past line `index`'s LF, or the end of the text for the last line. */
function lineEnd(file: TextFile, index: number): number {
  return file.starts[index + 1] ?? textLength(file);
}

/** The ending line `index` has: '' for a last line without a newline. */
export function lineEnding(file: TextFile, index: number): LineEnding | '' {
  const end = lineEnd(file, index);
  if (codeAt(file, end - 1) !== LF) return '';
  return codeAt(file, end - 2) === CR ? '\r\n' : '\n';
}

/** Where a patch adds a line without saying its ending: that of line `index`, else of the line before it, else the file's own. */
export function endingNear(file: TextFile, index: number): LineEnding {
  const here = index < lineCount(file) ? lineEnding(file, index) : '';
  return here || (index > 0 ? lineEnding(file, index - 1) : '') || file.eol;
}

/** Line `index` in `view`: without its ending, or without its LF only. */
export function lineAt(file: TextFile, index: number, view: LineView = 'content'): string {
  const end = lineEnd(file, index);
  const cut = view === 'raw' ? (codeAt(file, end - 1) === LF ? 1 : 0) : lineEnding(file, index).length;
  return sliceText(file, file.starts[index]!, end - cut);
}

/** Lines `[from, to)` in `view`, decoded in one piece. */
export function linesIn(file: TextFile, from: number, to: number, view: LineView = 'content'): string[] {
  if (to <= from) return [];
  const end = lineEnd(file, to - 1);
  const terminated = codeAt(file, end - 1) === LF;
  return splitInView(file, sliceText(file, file.starts[from]!, terminated ? end - 1 : end), terminated, view);
}

/** Every line in `view`. */
export function allLines(file: TextFile, view: LineView = 'content'): string[] {
  if (file.starts.length === 0) return [];
  const breaks = file.finalNewline ? file.starts.length : file.starts.length - 1;
  if (view === 'content' && file.crlfCount === breaks) return (file.finalNewline ? file.text.slice(0, -2) : file.text).split('\r\n');
  return splitInView(file, file.finalNewline ? file.text.slice(0, -1) : file.text, file.finalNewline, view);
}

/** Whole lines of `file` (the last one without its LF, if it had one: `terminated`) split into lines in `view`. */
function splitInView(file: TextFile, text: string, terminated: boolean, view: LineView): string[] {
  const raw = text.split('\n');
  if (view === 'raw' || file.crlfCount === 0) return raw;
  // Each line but an unterminated last one loses the CR of its CRLF.
  const last = terminated ? raw.length : raw.length - 1;
  for (let index = 0; index < last; index++) {
    const line = raw[index]!;
    if (line.charCodeAt(line.length - 1) === CR) raw[index] = line.slice(0, -1);
  }
  return raw;
}

/**
 * Builds a new version of a file line by line: runs of old lines copied as they are, new lines
 * with the ending the caller chose. Keeps the final-newline state exact: an unterminated old
 * last line gets the file's ending when more lines follow it, and `finish` drops the last
 * line's ending (the whole CRLF of an old line, just what `add` appended for a new one).
 */
export class TextWriter {
  readonly #file: TextFile;
  readonly #pieces: Piece[] = [];
  #pending: string[] = [];
  /** The output ends in the old file's last line, which has no newline. */
  #open = false;
  /** The output ends in an added line, whose ending is the last pending string. */
  #endsInAdded = false;
  lineCount = 0;

  constructor(file: TextFile) {
    this.#file = file;
  }

  copy(from: number, to: number): void {
    if (from >= to) return;
    this.#close();
    this.#flush();
    const last = this.#pieces[this.#pieces.length - 1];
    if (last !== undefined && typeof last !== 'string' && last.to === from) this.#pieces[this.#pieces.length - 1] = { from: last.from, to };
    else this.#pieces.push({ from, to });
    this.lineCount += to - from;
    this.#open = to === lineCount(this.#file) && !this.#file.finalNewline;
    this.#endsInAdded = false;
  }

  add(line: string, ending: string): void {
    this.#close();
    this.#pending.push(line, ending);
    this.lineCount++;
    this.#endsInAdded = true;
  }

  /** The pieces of the new version, ending with a newline or not. */
  finish(finalNewline: boolean): Piece[] {
    if (finalNewline) this.#close();
    else if (!this.#open && this.lineCount > 0) this.#dropLastEnding();
    this.#flush();
    return this.#pieces;
  }

  #close(): void {
    if (!this.#open) return;
    this.#pending.push(this.#file.eol);
    this.#open = false;
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    this.#pieces.push(this.#pending.join(''));
    this.#pending = [];
  }

  #dropLastEnding(): void {
    if (this.#endsInAdded) {
      this.#pending.pop();
      return;
    }
    const last = this.#pieces.pop() as { from: number; to: number };
    if (last.from < last.to - 1) this.#pieces.push({ from: last.from, to: last.to - 1 });
    this.#pending.push(lineAt(this.#file, last.to - 1));
  }
}

/** The bytes of `text` as a new file: no BOM, UTF-8. */
export function encodeText(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * The bytes of a new version of `file` made of `pieces`, BOM restored. Runs of old lines are
 * copied byte for byte when the file is ASCII, so a large file costs a copy, not a re-encode.
 */
export function assemble(file: TextFile, pieces: readonly Piece[]): Uint8Array {
  const source = file.asciiBytes;
  if (!source) return encodeWhole(file, pieces);
  const offset = file.bom ? BOM_BYTES : 0;
  let size = offset;
  for (const piece of pieces) size += typeof piece === 'string' ? utf8Length(piece) : lineEnd(file, piece.to - 1) - file.starts[piece.from]!;
  const out = new Uint8Array(size);
  out.set(source.subarray(0, offset));
  let at = offset;
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      const { read, written } = encoder.encodeInto(piece, out.subarray(at));
      if (read !== piece.length) return encodeWhole(file, pieces);
      at += written;
    } else {
      const run = source.subarray(file.starts[piece.from]! + offset, lineEnd(file, piece.to - 1) + offset);
      out.set(run, at);
      at += run.length;
    }
  }
  return at === size ? out : encodeWhole(file, pieces);
}

function encodeWhole(file: TextFile, pieces: readonly Piece[]): Uint8Array {
  return encoder.encode(textWithBom(file, pieces.map((piece) => pieceText(file, piece)).join('')));
}

/** `text` (the file's own by default) with the file's BOM, if it has one, in front: as its bytes hold it, and git shows it (line 1's). */
export function textWithBom(file: TextFile, text = file.text): string {
  return file.bom ? BOM + text : text;
}

/** How many bytes `text` takes in UTF-8 (a lone surrogate is encoded as U+FFFD, 3 bytes). */
export function utf8Length(text: string): number {
  let length = text.length;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) continue;
    const pairs = code >= 0xd800 && code <= 0xdbff && (text.charCodeAt(index + 1) & 0xfc00) === 0xdc00;
    if (pairs) index++;
    length += code < 0x800 ? 1 : 2;
  }
  return length;
}

/** The text of one piece of a new version of `file`. */
export function pieceText(file: TextFile, piece: Piece): string {
  return typeof piece === 'string' ? piece : file.text.slice(file.starts[piece.from]!, lineEnd(file, piece.to - 1));
}
