/** Splitting patch text into lines, with the CRLF-as-transport rule of DESIGN (Matching). */
import { engineError } from './errors.ts';
import { LIMITS } from './limits.ts';
import { fail, ok, type Result } from './types.ts';

export interface PatchLines {
  /** Lines without their `\n`; a final `\n` does not produce an empty last line. */
  readonly lines: readonly string[];
  /** Every line ended in CRLF, so the CRs were dropped as a transport artefact. */
  readonly crlfTransport: boolean;
}

/**
 * Splits a patch into lines. When every line ends in CRLF the CR is the line ending and is
 * removed; otherwise a CR is content and kept. Enforces the size and line-length limits.
 */
export function splitPatchLines(text: string): Result<PatchLines> {
  if (text.length > LIMITS.maxPatchChars) {
    return fail(engineError('limit_exceeded', `The patch is ${text.length} characters; at most ${LIMITS.maxPatchChars} are accepted.`, {
      limit: { name: 'maxPatchChars', max: LIMITS.maxPatchChars, actual: text.length },
    }));
  }
  if (text.includes('\0')) return fail(engineError('parse_error', 'The patch contains NUL bytes; patches must be text.'));
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  let longest = 0;
  let allCrlf = lines.length > 0;
  for (const line of lines) {
    if (line.length > longest) longest = line.length;
    if (allCrlf && !line.endsWith('\r')) allCrlf = false;
  }
  if (longest > LIMITS.maxLineChars) {
    return fail(engineError('limit_exceeded', `A patch line is ${longest} characters long; at most ${LIMITS.maxLineChars} are accepted.`, {
      limit: { name: 'maxLineChars', max: LIMITS.maxLineChars, actual: longest },
    }));
  }
  if (allCrlf) return ok({ lines: lines.map((line) => line.slice(0, -1)), crlfTransport: true });
  return ok({ lines, crlfTransport: false });
}
