/**
 * Aider SEARCH/REPLACE blocks (dialect `search-replace`) → `ParsedPatch`. Pure; never throws.
 *
 *     src/app.py
 *     ```python
 *     <<<<<<< SEARCH
 *     lines to find
 *     =======
 *     lines to put there
 *     >>>>>>> REPLACE
 *     ```
 *
 * - Markers take 5 to 9 characters (`SEARCH>` too); trailing whitespace is ignored.
 * - The path is read from the three lines before the block, nearest first, skipping blank and
 *   fence lines: a bare, `backticked`, **bold** or `### heading` path, with a trailing colon.
 *   A path in a fence's info string (```` ```src/app.py ````) is the fallback. A block with
 *   no path line reuses the previous block's path.
 * - A path must look like one (no spaces, a letter or digit, a `.` or `/` unless it is bare),
 *   so a line of prose before a block is not taken for a file name.
 * - A block with two divider lines is refused: which one divides is a guess, and a wrong guess
 *   would be a wrong edit.
 * - An empty (or blank) SEARCH creates the file (`add`). Every other block of a file becomes
 *   one replace edit of a single `edit` file patch, in reply order.
 */
import { isBlank, limitExceeded } from './chunks.ts';
import { engineError, type EngineError } from './errors.ts';
import { LIMITS } from './limits.ts';
import { normalizePatchPath, pathErrorAt } from './paths.ts';
import { fail, ok, type Diagnostic, type FilePatch, type ParsedPatch, type Result, type TextEdit } from './types.ts';

export const SEARCH_MARKER = /^<{5,9} SEARCH>?\s*$/;
const DIVIDER_MARKER = /^={5,9}\s*$/;
const REPLACE_MARKER = /^>{5,9} REPLACE\s*$/;
const FENCE = /^\s*(?:`{3,}|~{3,})\s*(\S*)/;
const PATH_LOOKBACK = 3;

interface Block {
  readonly path: string;
  readonly search: readonly string[];
  readonly replace: readonly string[];
  /** Index of the SEARCH marker line. */
  readonly head: number;
}

interface Sections {
  readonly search: readonly string[];
  readonly replace: readonly string[];
  /** Index of the line after the REPLACE marker. */
  readonly next: number;
}

interface Reader {
  readonly lines: readonly string[];
  readonly blocks: Block[];
  /** Lines a block's path was read from (they are not prose). */
  readonly pathLines: Set<number>;
  /** The first line the next block's path may come from: just after the previous block. */
  floor: number;
  previousPath: string | undefined;
}

interface PathLine {
  readonly path: string;
  readonly index: number;
  readonly inFence: boolean;
}

type FileGroup = { readonly kind: 'add'; readonly content: string } | { readonly kind: 'edit'; readonly edits: TextEdit[] };

/** Parses a reply holding SEARCH/REPLACE blocks. `lines` come from `splitPatchLines`. */
export function parseSearchReplace(lines: readonly string[]): Result<ParsedPatch> {
  const reader: Reader = { lines, blocks: [], pathLines: new Set(), floor: 0, previousPath: undefined };
  const prose = readBlocks(reader);
  if (!prose.ok) return prose;
  if (reader.blocks.length === 0) return fail(parseError(noBlocksMessage(lines)));
  const files = groupByFile(reader.blocks);
  if (!files.ok) return files;
  return ok({ dialect: 'search-replace', files: files.value, diagnostics: describeProse(prose.value), ignoredMetadata: [] });
}

/** Reads every block; returns how many lines of prose lay outside them. */
function readBlocks(reader: Reader): Result<number> {
  const outside: number[] = [];
  let index = 0;
  while (index < reader.lines.length) {
    const line = reader.lines[index]!;
    if (SEARCH_MARKER.test(line)) {
      const next = readBlock(reader, index);
      if (!next.ok) return next;
      index = next.value;
      continue;
    }
    if (REPLACE_MARKER.test(line)) {
      return fail(parseError(`${patchLine(index)} is a >>>>>>> REPLACE marker outside any block: each block starts with <<<<<<< SEARCH.`));
    }
    if (!isBlank(line) && !FENCE.test(line)) outside.push(index);
    index++;
  }
  return ok(outside.filter((at) => !reader.pathLines.has(at)).length);
}

function readBlock(reader: Reader, head: number): Result<number> {
  if (reader.blocks.length === LIMITS.maxHunks) return fail(limitExceeded('maxHunks', LIMITS.maxHunks + 1, 'SEARCH/REPLACE blocks'));
  const sections = readSections(reader.lines, head);
  if (!sections.ok) return sections;
  const path = blockPath(reader, head);
  if (!path.ok) return path;
  const { search, replace, next } = sections.value;
  reader.blocks.push({ path: path.value, search, replace, head });
  reader.floor = next;
  return ok(next);
}

function readSections(lines: readonly string[], head: number): Result<Sections> {
  const dividers: number[] = [];
  let end = head + 1;
  for (; end < lines.length && !REPLACE_MARKER.test(lines[end]!); end++) {
    if (SEARCH_MARKER.test(lines[end]!)) return fail(parseError(`${patchLine(end)} starts a new block before the block at ${patchLine(head)} ended with >>>>>>> REPLACE.`));
    if (DIVIDER_MARKER.test(lines[end]!)) dividers.push(end);
  }
  const divider = dividers[0];
  if (divider === undefined) {
    const what = end === lines.length ? 'has neither ======= nor >>>>>>> REPLACE: it may be truncated' : 'has no ======= line between its SEARCH and REPLACE sections';
    return fail(parseError(`The block at ${patchLine(head)} ${what}. Resend it complete.`));
  }
  if (end === lines.length) return fail(parseError(`The block at ${patchLine(head)} has no >>>>>>> REPLACE line: it may be truncated. Resend it complete.`));
  if (dividers.length > 1) {
    return fail(parseError(`The block at ${patchLine(head)} has several ======= lines (${dividers.map(patchLine).join(', ')}), so where SEARCH ends is unclear. Split it into blocks with one ======= each.`));
  }
  return ok({ search: lines.slice(head + 1, divider), replace: lines.slice(divider + 1, end), next: end + 1 });
}

function blockPath(reader: Reader, head: number): Result<string> {
  const found = findPathLine(reader.lines, head, reader.floor);
  if (found === undefined) {
    if (reader.previousPath !== undefined) return ok(reader.previousPath);
    return fail(parseError(`The block at ${patchLine(head)} names no file. Put the file's path alone on the line before the block (or before its opening fence).`));
  }
  const normalized = normalizePatchPath(found.path);
  if (!normalized.ok) return fail(pathErrorAt(patchLine(found.index), found.path, normalized.error));
  if (!found.inFence) reader.pathLines.add(found.index);
  reader.previousPath = normalized.value;
  return normalized;
}

/** The nearest path line among the few before the block; a fence's info string only when no line names one. */
function findPathLine(lines: readonly string[], head: number, floor: number): PathLine | undefined {
  let fromFence: PathLine | undefined;
  for (let index = head - 1; index >= Math.max(floor, head - PATH_LOOKBACK); index--) {
    const line = lines[index]!;
    const fence = FENCE.exec(line);
    if (fence !== null) {
      const info = fence[1] ?? '';
      if (fromFence === undefined && /[./]/.test(info) && looksLikePath(info, false)) fromFence = { path: info, index, inFence: true };
      continue;
    }
    if (isBlank(line)) continue;
    const path = pathFromLine(line);
    return path === undefined ? fromFence : { path, index, inFence: false };
  }
  return fromFence;
}

/** Strips Markdown decoration (`### `, `**`, backticks, a trailing colon) off a path line. */
function pathFromLine(line: string): string | undefined {
  let text = line.trim();
  const colon = text.endsWith(':');
  if (colon) text = text.slice(0, -1).trimEnd();
  text = text.replace(/^#+\s*/, '').replace(/^[*`]+|[*`]+$/g, '');
  return looksLikePath(text, colon) ? text : undefined;
}

function looksLikePath(text: string, hadColon: boolean): boolean {
  if (text === '' || /\s/.test(text) || !/[\p{L}\p{N}]/u.test(text) || text.endsWith('.')) return false;
  // `Note:` is prose; `Makefile` on its own line is a path.
  return /[./]/.test(text) || !hadColon;
}

function groupByFile(blocks: readonly Block[]): Result<FilePatch[]> {
  const groups = new Map<string, FileGroup>();
  for (const block of blocks) {
    const error = addToGroup(groups, block);
    if (error !== undefined) return fail(error);
  }
  if (groups.size > LIMITS.maxFiles) return fail(limitExceeded('maxFiles', groups.size, 'files'));
  return ok([...groups].map(([path, group]): FilePatch => (group.kind === 'add' ? { op: 'add', path, content: group.content } : { op: 'edit', path, edits: group.edits })));
}

function addToGroup(groups: Map<string, FileGroup>, block: Block): EngineError | undefined {
  const { path, head } = block;
  const group = groups.get(path);
  const creates = block.search.every(isBlank);
  if (group?.kind === 'add') {
    return parseError(`The block at ${patchLine(head)} edits ${path}, which an earlier block creates. Put the whole new file in that one block.`, path);
  }
  if (creates && group !== undefined) {
    return parseError(`The block at ${patchLine(head)} has an empty SEARCH, which creates ${path}, but earlier blocks edit it. To add lines, SEARCH for the lines they follow.`, path);
  }
  if (creates) {
    groups.set(path, { kind: 'add', content: linesText(block.replace) });
    return undefined;
  }
  const edit: TextEdit = { kind: 'replace', search: linesText(block.search), replace: linesText(block.replace), relativeIndent: true };
  if (group === undefined) groups.set(path, { kind: 'edit', edits: [edit] });
  else group.edits.push(edit);
  return undefined;
}

function linesText(lines: readonly string[]): string {
  return lines.map((line) => `${line}\n`).join('');
}

function noBlocksMessage(lines: readonly string[]): string {
  if (lines.every(isBlank)) return 'The patch is empty.';
  return 'No SEARCH/REPLACE block found. Write each edit as the file path on its own line, then <<<<<<< SEARCH, the exact lines to find, =======, the new lines, and >>>>>>> REPLACE (markers of 5 to 9 characters).';
}

function describeProse(count: number): Diagnostic[] {
  if (count === 0) return [];
  return [{ code: 'text_around_patch', message: `Ignored ${count} line(s) of text outside the SEARCH/REPLACE blocks.` }];
}

function patchLine(index: number): string {
  return `patch line ${index + 1}`;
}

function parseError(message: string, path?: string): EngineError {
  return engineError('parse_error', message, { path });
}
