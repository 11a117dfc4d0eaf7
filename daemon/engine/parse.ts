/** Dispatching a patch to its dialect's parser. */
import { stripTerminalColours } from './ansi.ts';
import { detectTextDialect, type TextDialect } from './detect.ts';
import { findDirectoryMention, weighDirectoryMention } from './directoryMention.ts';
import { parseEnvelope } from './envelope.ts';
import { engineError } from './errors.ts';
import { splitPatchLines } from './patchText.ts';
import { parseSearchReplace } from './searchReplace.ts';
import { reversePatch } from './reverse.ts';
import { parseShellCommand } from './shell.ts';
import { parseStructuredEdits } from './structuredEdits.ts';
import { readMailbox } from './mail.ts';
import { fail, ok, type Diagnostic, type ParsedPatch, type PatchInput, type Result } from './types.ts';
import { parseUnified, type UnifiedOptions } from './unified.ts';
import { parseV4AOperations } from './v4a.ts';

export function parsePatch(input: PatchInput): Result<ParsedPatch> {
  const parsed = parseInput(input);
  const final = parsed.ok && input.reverse === true ? reversePatch(parsed.value) : parsed;
  return final.ok ? weighDirectoryMention(final.value, input) : final;
}

function parseInput(input: PatchInput): Result<ParsedPatch> {
  const format = input.format ?? 'auto';
  const given = [input.patch, input.operations, input.edits].filter((source) => source !== undefined).length;
  if (given > 1) return fail(parseError('Send one of patch text, operations or edits, not several.'));
  if (input.operations !== undefined) {
    if (format !== 'auto' && format !== 'v4a') return fail(parseError(`Operations are V4A; format ${format} needs patch text.`));
    return parseV4AOperations(input.operations);
  }
  if (input.edits !== undefined) {
    if (format !== 'auto' && format !== 'edits') return fail(parseError(`Edits are structured edits; format ${format} needs patch text.`));
    return parseStructuredEdits(input.edits);
  }
  if (input.patch === undefined) return fail(parseError('Nothing to apply: the request has no patch text, operations or edits.'));
  if (format === 'v4a' || format === 'edits') return fail(parseError(`The ${format} format takes ${format === 'v4a' ? 'operations' : 'edits'}, not patch text.`));
  const uncoloured = stripTerminalColours(input.patch);
  const split = splitPatchLines(uncoloured.text);
  if (!split.ok) return split;
  const { lines } = split.value;
  const parsed = parseLines(lines, format, unifiedOptions(input));
  return uncoloured.removed > 0 && parsed.ok ? ok(withDiagnostics(parsed.value, [colourDiagnostic(uncoloured.removed)])) : parsed;
}

/** A mailbox (`git format-patch` / `git am`) is a series of unified diffs; other text goes to its dialect's parser. */
function parseLines(lines: readonly string[], format: TextDialect | 'auto', options: UnifiedOptions): Result<ParsedPatch> {
  const mailbox = format === 'auto' || format === 'unified' ? readMailbox(lines) : undefined;
  if (mailbox === undefined) return withDirectoryMention(lines, parseText(lines, dialectOf(lines, format), options));
  if (!mailbox.ok) return mailbox;
  const parsed = parseUnified(mailbox.value.lines, { ...options, parts: mailbox.value.parts });
  return parsed.ok ? ok(withDiagnostics(parsed.value, mailbox.value.diagnostics)) : parsed;
}

/**
 * The patch, with the directory a `cd` named in the text before it leads to, unless that is the
 * directory its shell command runs in (the text describes the command).
 */
function withDirectoryMention(lines: readonly string[], parsed: Result<ParsedPatch>): Result<ParsedPatch> {
  if (!parsed.ok) return parsed;
  const mention = findDirectoryMention(lines);
  if (!mention.ok) return mention;
  const directory = mention.value;
  if (directory === undefined || directory === parsed.value.workingDirectory) return parsed;
  return ok({ ...parsed.value, mentionedDirectory: directory });
}

function colourDiagnostic(removed: number): Diagnostic {
  return { code: 'ansi_colors_stripped', message: `${removed} terminal colour codes (as \`git diff --color=always\` writes them) were removed before parsing.` };
}

function withDiagnostics(parsed: ParsedPatch, diagnostics: readonly Diagnostic[]): ParsedPatch {
  return { ...parsed, diagnostics: [...diagnostics, ...parsed.diagnostics] };
}

function unifiedOptions(input: PatchInput): UnifiedOptions {
  const existing = input.existingPaths === undefined ? undefined : new Set(input.existingPaths);
  return { strip: input.strip, existing, probe: input.probe };
}

/**
 * The detected dialect, or the one the caller gave — unless a shell command stands before the
 * patch (a `cd`, or apply_patch run through one): that changes what every path means, so the
 * shell parser honours it or refuses it whatever the format says, rather than let another parser
 * skip it as surrounding text and apply the paths relative to the root.
 */
function dialectOf(lines: readonly string[], format: TextDialect | 'auto'): TextDialect {
  const detected = detectTextDialect(lines);
  return format === 'auto' || detected === 'shell' ? detected : format;
}

function parseText(lines: readonly string[], dialect: TextDialect, options: UnifiedOptions): Result<ParsedPatch> {
  switch (dialect) {
    case 'codex': return parseEnvelope(lines);
    case 'search-replace': return parseSearchReplace(lines);
    case 'shell': return parseShellCommand(lines, options.strip);
    case 'unified': return parseUnified(lines, options);
  }
}

/** Every path whose current state the plan needs, in patch order, once each. */
export function requiredPaths(parsed: ParsedPatch): string[] {
  const paths = new Set<string>();
  if (parsed.workingDirectory !== undefined) paths.add(parsed.workingDirectory);
  for (const file of parsed.files) {
    if (file.op === 'rename') paths.add(file.fromPath);
    paths.add(file.path);
  }
  return [...paths];
}

function parseError(message: string) {
  return engineError('parse_error', message);
}
