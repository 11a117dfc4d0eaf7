/** Dispatching a patch to its dialect's parser. */
import { detectTextDialect } from './detect.ts';
import { parseEnvelope } from './envelope.ts';
import { engineError } from './errors.ts';
import { splitPatchLines } from './patchText.ts';
import { fail, type ParsedPatch, type PatchInput, type Result } from './types.ts';
import { parseUnified } from './unified.ts';
import { parseV4AOperations } from './v4a.ts';

export function parsePatch(input: PatchInput): Result<ParsedPatch> {
  const format = input.format ?? 'auto';
  if (input.operations !== undefined) {
    if (input.patch !== undefined) return fail(engineError('parse_error', 'Send either patch text or operations, not both.'));
    if (format !== 'auto' && format !== 'v4a') return fail(engineError('parse_error', `Operations are V4A; format ${format} needs patch text.`));
    return parseV4AOperations(input.operations);
  }
  if (input.patch === undefined) return fail(engineError('parse_error', 'Nothing to apply: the request has neither patch text nor operations.'));
  if (format === 'v4a') return fail(engineError('parse_error', 'The v4a format takes operations, not patch text.'));
  const split = splitPatchLines(input.patch);
  if (!split.ok) return split;
  const { lines } = split.value;
  const dialect = format === 'auto' ? detectTextDialect(lines) : format;
  return dialect === 'codex' ? parseEnvelope(lines) : parseUnified(lines);
}

/** Every path whose current state the plan needs, in patch order, once each. */
export function requiredPaths(parsed: ParsedPatch): string[] {
  const paths = new Set<string>();
  for (const file of parsed.files) {
    if (file.op === 'rename') paths.add(file.fromPath);
    paths.add(file.path);
  }
  return [...paths];
}
