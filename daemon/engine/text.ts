/** A file as lines, keeping what must survive a rewrite: BOM, line ending, final newline. */
import { engineError } from './errors.ts';
import { fail, ok, type Result } from './types.ts';

export type LineEnding = '\n' | '\r\n';

export interface TextFile {
  readonly bom: boolean;
  /** CRLF only when every line break in the file is CRLF; otherwise a CR is content. */
  readonly eol: LineEnding;
  /** Lines without their line ending. */
  readonly lines: readonly string[];
  /** An empty file counts as ending with a newline. */
  readonly finalNewline: boolean;
}

const BOM = '\uFEFF';
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const encoder = new TextEncoder();

/** Decodes UTF-8 bytes into lines; NUL bytes or invalid UTF-8 are `binary_file`. */
export function decodeText(bytes: Uint8Array, path: string): Result<TextFile> {
  if (bytes.includes(0)) return fail(engineError('binary_file', `${path} contains NUL bytes; it is not a text file.`, { path }));
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return fail(engineError('binary_file', `${path} is not valid UTF-8 text.`, { path }));
  }
  const bom = text.startsWith(BOM);
  if (bom) text = text.slice(1);
  return ok(splitText(text, bom));
}

/** Splits decoded text (no BOM) into a TextFile. */
export function splitText(text: string, bom = false): TextFile {
  if (text === '') return { bom, eol: '\n', lines: [], finalNewline: true };
  const eol = isAllCrlf(text) ? '\r\n' : '\n';
  const lines = text.split(eol);
  const finalNewline = lines[lines.length - 1] === '';
  if (finalNewline) lines.pop();
  return { bom, eol, lines, finalNewline };
}

function isAllCrlf(text: string): boolean {
  let newlines = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) {
    if (text.charCodeAt(at - 1) !== 13) return false;
    newlines++;
  }
  return newlines > 0;
}

export function joinText(file: TextFile): string {
  const bom = file.bom ? BOM : '';
  if (file.lines.length === 0) return bom;
  return bom + file.lines.join(file.eol) + (file.finalNewline ? file.eol : '');
}

export function encodeText(file: TextFile): Uint8Array {
  return encoder.encode(joinText(file));
}

export function encodeString(text: string): Uint8Array {
  return encoder.encode(text);
}
