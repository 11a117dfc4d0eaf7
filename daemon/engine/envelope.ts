/**
 * The `*** Begin Patch` envelope (Codex apply_patch, dialect `codex`): Add / Update (with
 * `*** Move to:`) / Delete / Move File sections → `ParsedPatch`. Pure; never throws.
 */
import { isBlank, limitExceeded, parseChunks, quoteLine, type ChunkSource, type ParsedChunks } from './chunks.ts';
import { isPatchLine } from './detect.ts';
import { engineError, type EngineError } from './errors.ts';
import { describeExpansion, type Heredoc } from './heredoc.ts';
import { LIMITS } from './limits.ts';
import { normalizePatchPath, pathErrorAt } from './paths.ts';
import { fail, ok, type Diagnostic, type FilePatch, type ParsedPatch, type Result } from './types.ts';
import { FENCE } from './unifiedLines.ts';

const BEGIN_PATCH = '*** Begin Patch';
const END_PATCH = '*** End Patch';
const SECTION_HEADER = /^\*\*\* (Add|Update|Delete|Move) File:(.*)$/;
const MOVE_TO = /^\*\*\* Move to:(.*)$/;
/** A context, removed or added line, or `\ No newline at end of file`. */
const CHUNK_LINE = /^(?:[ +-]|\\ )/;
/** `apply_patch <<'EOF'`, `<<"EOF"`, `<<EOF`: a shell heredoc the model sent literally. */
const HEREDOC_START = /^(?:apply_patch\s+)?<<(-?)\s*(['"]?)([A-Za-z_]\w*)\2$/;

interface Envelope {
  /** Index of the `*** Begin Patch` line. */
  readonly begin: number;
  /** Index of the `*** End Patch` line. */
  readonly end: number;
}

/** Reading state shared by the sections of one envelope. */
interface SectionReader {
  readonly lines: readonly string[];
  readonly end: number;
  hunkCount: number;
}

interface ParsedSection {
  readonly file: FilePatch;
  readonly next: number;
}

/** Parses `*** Begin Patch` … `*** End Patch` from patch lines (as `splitPatchLines` gives them). */
export function parseEnvelope(lines: readonly string[]): Result<ParsedPatch> {
  const envelope = findEnvelope(lines);
  if (!envelope.ok) return envelope;
  const outside = patchOutside(lines, envelope.value);
  if (outside !== undefined) return fail(outside);
  const files = parseSections(lines, envelope.value);
  if (!files.ok) return files;
  return ok({ dialect: 'codex', files: files.value, diagnostics: describeTextAround(lines, envelope.value), ignoredMetadata: [] });
}

function findEnvelope(lines: readonly string[]): Result<Envelope> {
  const begin = lines.findIndex((line) => line.trim() === BEGIN_PATCH);
  if (begin === -1) {
    if (lines.every(isBlank)) return fail(parseError('The patch is empty.'));
    return fail(parseError('The patch has no "*** Begin Patch" line. Start the patch with *** Begin Patch and end it with *** End Patch.'));
  }
  // The last `*** End Patch` closes the envelope, so a file line holding that text stays content.
  const end = lines.findLastIndex((line) => line.trim() === END_PATCH);
  if (end < begin) {
    return fail(parseError(`No "*** End Patch" line follows "*** Begin Patch" (patch line ${begin + 1}): the patch may be truncated. Resend the whole patch, ending with *** End Patch.`));
  }
  return ok({ begin, end });
}

/**
 * Text around the envelope is ignored only when it cannot be part of a patch. A patch line before
 * or after it (an envelope marker or section header, an `@@` line, a diff header) is another
 * envelope, or a cut-off second one: refused, rather than half the change applied. Chunk lines
 * right after the `*** End Patch` mean the patch may not end there: Codex's padded marker
 * ` *** End Patch` is also a context line of a file holding that text, and the lines after it the
 * rest of its chunk (a later unindented `*** End Patch` would have ended the envelope instead).
 */
function patchOutside(lines: readonly string[], envelope: Envelope): EngineError | undefined {
  for (let index = 0; index < lines.length; index++) {
    if (index === envelope.begin) index = envelope.end + 1;
    const line = lines[index];
    if (line === undefined || !isPatchLine(line, lines[index + 1])) continue;
    const where = index < envelope.begin ? `comes before the *** Begin Patch on ${patchLine(envelope.begin)}` : `comes after the *** End Patch on ${patchLine(envelope.end)}`;
    return parseError(`${patchLine(index)} (${quoteLine(line)}) ${where}: it is another envelope, or part of one (cut off?). Send one complete *** Begin Patch … *** End Patch envelope holding every change.`);
  }
  const next = lines.findIndex((line, index) => index > envelope.end && !isBlank(line));
  const line = lines[next] ?? '';
  if (next === -1 || !CHUNK_LINE.test(line) || FENCE.test(line)) return undefined;
  const marker = lines[envelope.end] ?? '';
  const padded = marker.startsWith(' ') ? ` (${quoteLine(marker)} is also a context line of a file holding that text)` : '';
  return parseError(`${patchLine(next)} (${quoteLine(line)}) looks like a chunk line, yet comes after the *** End Patch on ${patchLine(envelope.end)}: the patch may not end there${padded}. End the patch with an unindented *** End Patch after its last chunk, with no chunk lines after it.`);
}

/** Text around the envelope is noted, unless it is a heredoc wrapper (then only what a shell would have expanded in it is). */
function describeTextAround(lines: readonly string[], envelope: Envelope): Diagnostic[] {
  const before = nonBlankIndexes(lines, 0, envelope.begin);
  const after = nonBlankIndexes(lines, envelope.end + 1, lines.length);
  if (before.length + after.length === 0) return [];
  if (before.length === 1 && after.length === 1) {
    const wrapper = heredocWrapper(lines[before[0]!]!, lines[after[0]!]!);
    if (wrapper !== undefined) return describeExpansion(lines, { start: before[0]! + 1, end: after[0]! }, wrapper);
  }
  const message = `Ignored text around the *** Begin Patch … *** End Patch envelope: ${before.length} line(s) before it, ${after.length} after it.`;
  return [{ code: 'text_around_patch', message }];
}

function nonBlankIndexes(lines: readonly string[], from: number, to: number): number[] {
  const indexes: number[] = [];
  for (let index = from; index < to; index++) if (!isBlank(lines[index]!)) indexes.push(index);
  return indexes;
}

/** The heredoc `open` starts, when `close` closes it. */
function heredocWrapper(open: string, close: string): Heredoc | undefined {
  const start = HEREDOC_START.exec(open.trim());
  if (start === null || close.trim() !== start[3]) return undefined;
  return { delimiter: start[3]!, stripTabs: start[1] === '-', quoted: start[2] !== '' };
}

function parseSections(lines: readonly string[], envelope: Envelope): Result<FilePatch[]> {
  const reader: SectionReader = { lines, end: envelope.end, hunkCount: 0 };
  const files: FilePatch[] = [];
  const claimed = new Set<string>();
  let index = envelope.begin + 1;
  while (index < reader.end) {
    if (isBlank(lines[index] ?? '')) {
      index++;
      continue;
    }
    if (files.length === LIMITS.maxFiles) return fail(limitExceeded('maxFiles', files.length + 1, 'file sections'));
    const section = parseSection(reader, index);
    if (!section.ok) return section;
    const duplicate = claimPaths(section.value.file, claimed, index);
    if (duplicate !== undefined) return fail(duplicate);
    files.push(section.value.file);
    index = section.value.next;
  }
  if (files.length === 0) {
    return fail(parseError('The patch has no file sections. Put at least one *** Add File:, *** Update File:, *** Delete File: or *** Move File: section between *** Begin Patch and *** End Patch.'));
  }
  return ok(files);
}

function parseSection(reader: SectionReader, index: number): Result<ParsedSection> {
  const line = reader.lines[index] ?? '';
  const header = SECTION_HEADER.exec(line.trim());
  if (header === null) return fail(parseError(unexpectedSectionLine(line, index)));
  const argument = (header[2] ?? '').trim();
  switch (header[1]) {
    case 'Add':
      return parseAddSection(reader, index, argument);
    case 'Delete':
      return parseDeleteSection(reader, index, argument);
    case 'Update':
      return parseUpdateSection(reader, index, argument);
    default:
      return parseMoveSection(reader, index, argument);
  }
}

function unexpectedSectionLine(line: string, index: number): string {
  const at = `${patchLine(index)} (${quoteLine(line)})`;
  if (MOVE_TO.test(line.trim())) return `${at}: *** Move to: must come right after its *** Update File: line.`;
  if (line.trim() === BEGIN_PATCH || line.trim() === END_PATCH) return `${at}: send one *** Begin Patch … *** End Patch envelope per patch; merge the file sections into it.`;
  return `${at} is not a file section header. Expected *** Add File: <path>, *** Update File: <path>, *** Delete File: <path> or *** Move File: <from> -> <to>.`;
}

function parseAddSection(reader: SectionReader, index: number, rawPath: string): Result<ParsedSection> {
  const path = resolvePath(rawPath, index);
  if (!path.ok) return path;
  const body = readAddBody(reader, index + 1, path.value);
  if (!body.ok) return body;
  return ok({ file: { op: 'add', path: path.value, content: body.value.content }, next: body.value.next });
}

/** Each `+` line and its `\n` (as Codex builds it); a trailing `\ No newline at end of file` drops the last `\n`. */
function readAddBody(reader: SectionReader, start: number, path: string): Result<{ content: string; next: number }> {
  const added: string[] = [];
  let noFinalNewline = false;
  let index = start;
  for (; index < reader.end; index++) {
    const line = reader.lines[index] ?? '';
    if (line.startsWith('+') && !noFinalNewline) added.push(line.slice(1));
    else if (line.startsWith('\\ ') && added.length > 0 && !noFinalNewline) noFinalNewline = true;
    else if (endsAddBody(reader, index)) break;
    else return fail(addError(line, index, path, addLineProblem(line)));
  }
  const content = added.map((text) => `${text}\n`).join('');
  return ok({ content: noFinalNewline ? content.slice(0, -1) : content, next: index });
}

/** A directive, or blank lines up to one (or to the end), close the Add body. */
function endsAddBody(reader: SectionReader, index: number): boolean {
  const next = nextNonBlank(reader, index);
  return next === reader.end || (reader.lines[next] ?? '').trim().startsWith('***');
}

function addLineProblem(line: string): string {
  if (line.startsWith('+')) return 'comes after "\\ No newline at end of file", which marks the last line.';
  if (line.startsWith('\\ ')) return 'must follow the last "+" line of the file.';
  if (isBlank(line)) return 'is empty inside an Add File section: write a lone "+" for an empty line of the file.';
  return 'is not part of the Add File section: every line of the new file must start with "+".';
}

function addError(line: string, index: number, path: string, problem: string): EngineError {
  return parseError(`${patchLine(index)} (${quoteLine(line)}) ${problem}`, path);
}

function parseDeleteSection(reader: SectionReader, index: number, rawPath: string): Result<ParsedSection> {
  const path = resolvePath(rawPath, index);
  if (!path.ok) return path;
  const following = reader.lines[index + 1] ?? '';
  if (index + 1 < reader.end && looksLikeChunkLine(following)) {
    return fail(parseError(`${patchLine(index + 1)} (${quoteLine(following)}): a *** Delete File: section has no body; the header line alone deletes the file.`, path.value));
  }
  return ok({ file: { op: 'delete', path: path.value, hunks: [] }, next: index + 1 });
}

function looksLikeChunkLine(line: string): boolean {
  return /^[-+ @]/.test(line) && !isBlank(line) && !line.trim().startsWith('***');
}

function parseUpdateSection(reader: SectionReader, index: number, rawPath: string): Result<ParsedSection> {
  const path = resolvePath(rawPath, index);
  if (!path.ok) return path;
  const moveTo = readMoveTo(reader, index + 1);
  if (!moveTo.ok) return moveTo;
  const destination = moveTo.value;
  const chunks = readSectionChunks(reader, destination === undefined ? index + 1 : index + 2, path.value);
  if (!chunks.ok) return chunks;
  const { hunks, next } = chunks.value;
  if (hunks.length === 0) {
    const rename = destination === undefined ? '' : ' (for a move without edits use *** Move File: <from> -> <to>)';
    return fail(parseError(`${patchLine(index)}: *** Update File: ${path.value} has no chunks. Add @@ chunks with context, "-" and "+" lines${rename}.`, path.value));
  }
  if (destination === undefined) return ok({ file: { op: 'update', path: path.value, hunks }, next });
  if (destination === path.value) return fail(moveOntoItself(index + 1, path.value));
  return ok({ file: { op: 'rename', fromPath: path.value, path: destination, hunks }, next });
}

function readMoveTo(reader: SectionReader, index: number): Result<string | undefined> {
  if (index >= reader.end) return ok(undefined);
  const move = MOVE_TO.exec((reader.lines[index] ?? '').trim());
  if (move === null) return ok(undefined);
  return resolvePath((move[1] ?? '').trim(), index);
}

function parseMoveSection(reader: SectionReader, index: number, argument: string): Result<ParsedSection> {
  const arrow = argument.indexOf('->');
  if (arrow === -1) return fail(parseError(`${patchLine(index)}: write the move as *** Move File: <from> -> <to>.`));
  const fromPath = resolvePath(argument.slice(0, arrow).trim(), index);
  if (!fromPath.ok) return fromPath;
  const path = resolvePath(argument.slice(arrow + 2).trim(), index);
  if (!path.ok) return path;
  if (fromPath.value === path.value) return fail(moveOntoItself(index, path.value));
  const chunks = readSectionChunks(reader, index + 1, fromPath.value);
  if (!chunks.ok) return chunks;
  return ok({ file: { op: 'rename', fromPath: fromPath.value, path: path.value, hunks: chunks.value.hunks }, next: chunks.value.next });
}

function moveOntoItself(index: number, path: string): EngineError {
  return parseError(`${patchLine(index)}: the move names ${path} as both source and destination. Move it to another path, or use *** Update File: alone.`, path);
}

function readSectionChunks(reader: SectionReader, start: number, path: string): Result<ParsedChunks> {
  const source: ChunkSource = { lines: reader.lines, end: reader.end, path, where: patchLine };
  const parsed = parseChunks(source, start, reader.hunkCount);
  if (parsed.ok) reader.hunkCount += parsed.value.hunks.length;
  return parsed;
}

function resolvePath(raw: string, index: number): Result<string> {
  if (raw === '') return fail(parseError(`${patchLine(index)}: the section names no file path.`));
  const normalized = normalizePatchPath(raw);
  if (normalized.ok) return normalized;
  return fail(pathErrorAt(patchLine(index), raw, normalized.error));
}

/** Every path a file section touches may appear in one section only. */
function claimPaths(file: FilePatch, claimed: Set<string>, index: number): EngineError | undefined {
  const paths = file.op === 'rename' ? [file.fromPath, file.path] : [file.path];
  for (const path of paths) {
    if (claimed.has(path)) {
      return engineError('duplicate_file_patch', `${patchLine(index)}: ${path} already appears in an earlier file section. Put all changes to one file in a single section.`, { path });
    }
    claimed.add(path);
  }
  return undefined;
}

function nextNonBlank(reader: SectionReader, index: number): number {
  let next = index;
  while (next < reader.end && isBlank(reader.lines[next] ?? '')) next++;
  return next;
}

function patchLine(index: number): string {
  return `patch line ${index + 1}`;
}

function parseError(message: string, path?: string): EngineError {
  return engineError('parse_error', message, { path });
}
