/**
 * A file as text plus line offsets, keeping what must survive a rewrite: BOM, line ending,
 * final newline. Lines are sliced on demand, so a hunk near its hint costs only its own lines.
 */
import { engineError } from './errors.ts';
import { fail, ok, type Result } from './types.ts';

export type LineEnding = '\n' | '\r\n';

export interface TextFile {
  readonly bom: boolean;
  /** CRLF only when every line break in the file is CRLF; otherwise a CR is content. */
  readonly eol: LineEnding;
  /** An empty file counts as ending with a newline. */
  readonly finalNewline: boolean;
  /** The content without its BOM. */
  readonly text: string;
  /** Offset in `text` where each line starts; its length is the number of lines. */
  readonly starts: Int32Array;
  /** The bytes `text` came from, when every byte after the BOM is ASCII (offsets in text are then offsets in bytes). */
  readonly asciiBytes?: Uint8Array | undefined;
}

/** A run of the old file's lines `[from, to)`, or new text whose lines already carry the file's ending. */
export type Piece = { readonly from: number; readonly to: number } | string;

const BOM = '\uFEFF';
const BOM_BYTES = 3;
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
  let allCrlf = true;
  let at = 0;
  while (at < text.length) {
    if (count === starts.length) starts = grow(starts);
    starts[count++] = at;
    const newline = text.indexOf('\n', at);
    if (newline === -1) break;
    if (allCrlf && text.charCodeAt(newline - 1) !== 13) allCrlf = false;
    at = newline + 1;
  }
  const finalNewline = text === '' || text.endsWith('\n');
  const eol = allCrlf && text.includes('\n') ? '\r\n' : '\n';
  return { bom, eol, finalNewline, text, starts: starts.subarray(0, count) };
}

function grow(starts: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const larger = new Int32Array(starts.length * 2);
  larger.set(starts);
  return larger;
}

export function lineCount(file: TextFile): number {
  return file.starts.length;
}

/** Line `index` without its line ending. */
export function lineAt(file: TextFile, index: number): string {
  const start = file.starts[index]!;
  const next = file.starts[index + 1];
  if (next !== undefined) return file.text.slice(start, next - file.eol.length);
  const end = file.finalNewline ? file.text.length - file.eol.length : file.text.length;
  return file.text.slice(start, Math.max(start, end));
}

/** Every line, without line endings. */
export function allLines(file: TextFile): string[] {
  if (file.starts.length === 0) return [];
  const body = file.finalNewline ? file.text.slice(0, file.text.length - file.eol.length) : file.text;
  return body.split(file.eol);
}

/** Lines `from` up to `to`, each followed by the file's line ending (the last one too). */
export function sliceLines(file: TextFile, from: number, to: number): string {
  if (from >= to) return '';
  const start = file.starts[from]!;
  const end = file.starts[to];
  if (end !== undefined) return file.text.slice(start, end);
  return file.text.slice(start) + (file.finalNewline ? '' : file.eol);
}

/** The bytes of `text` as a new file: no BOM, UTF-8. */
export function encodeText(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * The bytes of a new version of `file` made of `pieces`, BOM restored. Runs of old lines are
 * copied byte for byte when the file is ASCII, so a large file costs a copy, not a re-encode.
 */
export function assemble(file: TextFile, pieces: readonly Piece[], finalNewline: boolean): Uint8Array {
  const bytes = file.asciiBytes ? assembleAscii(file, file.asciiBytes, pieces) : encoder.encode((file.bom ? BOM : '') + pieces.map((piece) => pieceText(file, piece)).join(''));
  const eol = file.eol.length;
  const endsWithEol = bytes.length >= eol && bytes[bytes.length - 1] === 10 && (eol === 1 || bytes[bytes.length - 2] === 13);
  return !finalNewline && endsWithEol ? bytes.subarray(0, bytes.length - eol) : bytes;
}

function pieceText(file: TextFile, piece: Piece): string {
  return typeof piece === 'string' ? piece : sliceLines(file, piece.from, piece.to);
}

function assembleAscii(file: TextFile, source: Uint8Array, pieces: readonly Piece[]): Uint8Array {
  const offset = file.bom ? BOM_BYTES : 0;
  const parts: Uint8Array[] = [source.subarray(0, offset)];
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      parts.push(encoder.encode(piece));
    } else if (piece.from < piece.to) {
      const next = file.starts[piece.to];
      parts.push(source.subarray(file.starts[piece.from]! + offset, next === undefined ? source.length : next + offset));
      if (next === undefined && !file.finalNewline) parts.push(encoder.encode(file.eol));
    }
  }
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
