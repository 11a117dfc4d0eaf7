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
 * Splits a patch into lines and enforces the size and line-length limits. When every line
 * ends in CRLF (pasted through a Windows clipboard) those CRs are transport and are removed;
 * any other CR is kept, for the engine to read as a line's ending or as content (DESIGN,
 * Line endings). `transport: false` keeps every CR (V4A diffs are JSON values, not pasted text).
 */
export function splitPatchLines(text: string, { transport = true } = {}): Result<PatchLines> {
  if (text.length > LIMITS.maxPatchChars) {
    return fail(engineError('limit_exceeded', `The patch is ${text.length} characters; at most ${LIMITS.maxPatchChars} are accepted.`, {
      limit: { name: 'maxPatchChars', max: LIMITS.maxPatchChars, actual: text.length },
    }));
  }
  if (text.includes('\0')) return fail(engineError('parse_error', 'The patch contains NUL bytes; patches must be text.'));
  const lines = text.split('\n');
  const terminated = lines[lines.length - 1] === '';
  if (terminated) lines.pop();
  // A last line without a line ending says nothing about the ending the others use.
  const ended = terminated ? lines.length : lines.length - 1;
  let longest = 0;
  let allCrlf = transport && ended > 0;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (line.length > longest) longest = line.length;
    if (allCrlf && index < ended && !line.endsWith('\r')) allCrlf = false;
  }
  if (longest > LIMITS.maxLineChars) {
    return fail(engineError('limit_exceeded', `A patch line is ${longest} characters long; at most ${LIMITS.maxLineChars} are accepted.`, {
      limit: { name: 'maxLineChars', max: LIMITS.maxLineChars, actual: longest },
    }));
  }
  if (allCrlf) return ok({ lines: lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line)), crlfTransport: true });
  return ok({ lines, crlfTransport: false });
}
