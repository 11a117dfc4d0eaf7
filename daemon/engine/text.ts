/**
 * A file as text plus line offsets, keeping what must survive a rewrite: BOM, each line's
 * ending, final newline. Lines are sliced on demand, so a hunk near its hint costs only its
 * own lines.
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
  /** The content without its BOM. */
  readonly text: string;
  /** Offset in `text` where each line starts; its length is the number of lines. */
  readonly starts: Int32Array;
  /** The bytes `text` came from, when every byte after the BOM is ASCII (offsets in text are then offsets in bytes). */
  readonly asciiBytes?: Uint8Array | undefined;
}

/** A run of the old file's lines `[from, to)`, copied byte for byte, or new text. */
export type Piece = { readonly from: number; readonly to: number } | string;

const BOM = '\uFEFF';
const BOM_BYTES = 3;
const CR = 13;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** Decodes UTF-8 bytes; NUL bytes or invalid UTF-8 are `binary_file`. */
export function decodeText(bytes: Uint8Array, path: string): Result<TextFile> {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return fail(engineError('binary_file', `${path} is not valid UTF-8 text.`, { path }));
  }
  if (text.includes('\0')) return fail(engineError('binary_file', `${path} contains NUL bytes; it is not a text file.`, { path }));
  const bom = text.startsWith(BOM);
  const file = indexText(bom ? text.slice(1) : text, bom);
  const ascii = bytes.length === file.text.length + (bom ? BOM_BYTES : 0);
  return ok(ascii ? { ...file, asciiBytes: bytes } : file);
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
  return file.starts[index + 1] ?? file.text.length;
}

/** The ending line `index` has: '' for a last line without a newline. */
export function lineEnding(file: TextFile, index: number): LineEnding | '' {
  const end = lineEnd(file, index);
  if (file.text.charCodeAt(end - 1) !== 10) return '';
  return file.text.charCodeAt(end - 2) === CR ? '\r\n' : '\n';
}

/** Where a patch adds a line without saying its ending: that of line `index`, else of the line before it, else the file's own. */
export function endingNear(file: TextFile, index: number): LineEnding {
  const here = index < lineCount(file) ? lineEnding(file, index) : '';
  return here || (index > 0 ? lineEnding(file, index - 1) : '') || file.eol;
}

/** Line `index` in `view`: without its ending, or without its LF only. */
export function lineAt(file: TextFile, index: number, view: LineView = 'content'): string {
  const end = lineEnd(file, index);
  const cut = view === 'raw' ? (file.text.charCodeAt(end - 1) === 10 ? 1 : 0) : lineEnding(file, index).length;
  return file.text.slice(file.starts[index]!, end - cut);
}

/** Every line in `view`. */
export function allLines(file: TextFile, view: LineView = 'content'): string[] {
  if (file.starts.length === 0) return [];
  const breaks = file.finalNewline ? file.starts.length : file.starts.length - 1;
  if (view === 'content' && file.crlfCount === breaks) return (file.finalNewline ? file.text.slice(0, -2) : file.text).split('\r\n');
  const raw = (file.finalNewline ? file.text.slice(0, -1) : file.text).split('\n');
  if (view === 'raw' || file.crlfCount === 0) return raw;
  // Each line but an unterminated last one loses the CR of its CRLF.
  const last = file.finalNewline ? raw.length : raw.length - 1;
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
  if (!file.asciiBytes) return encoder.encode((file.bom ? BOM : '') + pieces.map((piece) => pieceText(file, piece)).join(''));
  const source = file.asciiBytes;
  const offset = file.bom ? BOM_BYTES : 0;
  const parts: Uint8Array[] = [source.subarray(0, offset)];
  for (const piece of pieces) {
    if (typeof piece === 'string') parts.push(encoder.encode(piece));
    else parts.push(source.subarray(file.starts[piece.from]! + offset, lineEnd(file, piece.to - 1) + offset));
  }
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function pieceText(file: TextFile, piece: Piece): string {
  return typeof piece === 'string' ? piece : file.text.slice(file.starts[piece.from]!, lineEnd(file, piece.to - 1));
}
