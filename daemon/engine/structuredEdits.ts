/**
 * str_replace-style structured edits (dialect `edits`) → `ParsedPatch`. Pure; never throws.
 *
 *   {path, oldText, newText, replaceAll?}  → replace edit (no relative indentation)
 *   {path, insertLine, text}               → insert after 1-based line `insertLine` (0 = top)
 *   {path, content, expectedSha256?}       → whole-file write; it may replace an existing file
 *                                            only with `expectedSha256` (checked by the workspace)
 *
 * Edits to one path become one `edit` file patch, in order; a write and edits to one path are
 * `duplicate_file_patch`. oldText / newText / text are JSON values, like V4A diffs: their CRs
 * are deliberate, never transport (DESIGN, Line endings), and a CRLF in them makes the file's
 * edits EOL-explicit (edits.ts); a write's content is kept byte for byte.
 */
import { limitExceeded, quoteLine } from './chunks.ts';
import { engineError, type EngineError } from './errors.ts';
import { LIMITS } from './limits.ts';
import { splitPatchLines } from './patchText.ts';
import { normalizePatchPath, pathErrorAt } from './paths.ts';
import { fail, ok, type FilePatch, type ParsedPatch, type Result, type StructuredEdit, type TextEdit } from './types.ts';

type Parsed = { readonly path: string; readonly write: FilePatch } | { readonly path: string; readonly edit: TextEdit };
type Group = { readonly write: FilePatch; readonly index: number } | { readonly edits: TextEdit[]; readonly index: number };

const SHAPES = 'Each edit is {path, oldText, newText, replaceAll?}, {path, insertLine, text} or {path, content, expectedSha256?}.';

export function parseStructuredEdits(edits: readonly StructuredEdit[]): Result<ParsedPatch> {
  const size = checkSize(edits);
  if (size !== undefined) return fail(size);
  const groups = new Map<string, Group>();
  for (const [index, edit] of edits.entries()) {
    const parsed = parseEdit(edit, index);
    if (!parsed.ok) return parsed;
    const clash = addToGroup(groups, parsed.value, index);
    if (clash !== undefined) return fail(clash);
  }
  if (groups.size > LIMITS.maxFiles) return fail(limitExceeded('maxFiles', groups.size, 'files'));
  const files = [...groups].map(([path, group]): FilePatch => ('write' in group ? group.write : { op: 'edit', path, edits: group.edits }));
  return ok({ dialect: 'edits', files, diagnostics: [], ignoredMetadata: [] });
}

function checkSize(edits: readonly StructuredEdit[]): EngineError | undefined {
  if (!Array.isArray(edits)) return engineError('parse_error', `The edits are not a list. ${SHAPES}`);
  if (edits.length === 0) return engineError('parse_error', `There are no edits to apply. ${SHAPES}`);
  if (edits.length > LIMITS.maxOperations) return limitExceeded('maxOperations', edits.length, 'edits');
  let chars = 0;
  for (const edit of edits) for (const value of Object.values(edit ?? {})) chars += typeof value === 'string' ? value.length : 0;
  if (chars > LIMITS.maxPatchChars) return limitExceeded('maxPatchChars', chars, 'characters of edit text');
  return undefined;
}

function parseEdit(edit: StructuredEdit, index: number): Result<Parsed> {
  const label = `edit ${index + 1}`;
  if (typeof edit !== 'object' || edit === null || typeof edit.path !== 'string') return fail(parseError(`${label} has no path. ${SHAPES}`));
  const kinds = ['oldText', 'insertLine', 'content'].filter((key) => key in edit);
  if (kinds.length !== 1) return fail(parseError(`${label} (${quoteLine(edit.path)}) ${kinds.length === 0 ? 'says nothing to do' : `mixes ${kinds.join(' and ')}`}. ${SHAPES}`, edit.path));
  const path = normalizePatchPath(edit.path);
  if (!path.ok) return fail(pathErrorAt(label, edit.path, path.error));
  const context = { label: `${label} (${path.value})`, path: path.value };
  if ('content' in edit) return parseWrite(edit, context);
  if ('oldText' in edit) return parseReplace(edit, context);
  return parseInsert(edit, context);
}

interface EditContext {
  readonly label: string;
  readonly path: string;
}

type WriteEdit = Extract<StructuredEdit, { content: string }>;
type ReplaceEdit = Extract<StructuredEdit, { oldText: string }>;
type InsertEdit = Extract<StructuredEdit, { insertLine: number }>;

function parseWrite(edit: WriteEdit, context: EditContext): Result<Parsed> {
  const { content, expectedSha256 } = edit;
  if (typeof content !== 'string') return fail(parseError(`${context.label}: content must be a string.`, context.path));
  if (expectedSha256 !== undefined && typeof expectedSha256 !== 'string') return fail(parseError(`${context.label}: expectedSha256 must be a hex string.`, context.path));
  return ok({ path: context.path, write: { op: 'write', path: context.path, content, mayReplace: expectedSha256 !== undefined } });
}

function parseReplace(edit: ReplaceEdit, context: EditContext): Result<Parsed> {
  const { oldText, newText, replaceAll } = edit;
  if (typeof oldText !== 'string' || typeof newText !== 'string') return fail(parseError(`${context.label}: oldText and newText must both be strings.`, context.path));
  if (replaceAll !== undefined && typeof replaceAll !== 'boolean') return fail(parseError(`${context.label}: replaceAll must be true or false.`, context.path));
  const search = editText(oldText, context);
  if (!search.ok) return search;
  const replace = editText(newText, context);
  if (!replace.ok) return replace;
  return ok({ path: context.path, edit: { kind: 'replace', search: search.value, replace: replace.value, replaceAll, relativeIndent: false } });
}

function parseInsert(edit: InsertEdit, context: EditContext): Result<Parsed> {
  const { insertLine, text } = edit;
  if (!Number.isInteger(insertLine) || insertLine < 0) return fail(parseError(`${context.label}: insertLine must be 0 (the top) or a 1-based line number.`, context.path));
  if (typeof text !== 'string') return fail(parseError(`${context.label}: text must be a string.`, context.path));
  const lines = editText(text, context);
  if (!lines.ok) return lines;
  return ok({ path: context.path, edit: { kind: 'insert', line: insertLine, text: lines.value } });
}

/** The text as given, once its lines are within the limits. */
function editText(text: string, context: EditContext): Result<string> {
  const split = splitPatchLines(text, { transport: false });
  if (!split.ok) return fail(engineError(split.error.code, `${context.label}: ${split.error.message}`, { path: context.path, limit: split.error.limit }));
  return ok(text);
}

function addToGroup(groups: Map<string, Group>, parsed: Parsed, index: number): EngineError | undefined {
  const group = groups.get(parsed.path);
  if (group === undefined) {
    groups.set(parsed.path, 'write' in parsed ? { write: parsed.write, index } : { edits: [parsed.edit], index });
    return undefined;
  }
  if ('write' in parsed || 'write' in group) {
    return engineError('duplicate_file_patch', `Edits ${group.index + 1} and ${index + 1} both name ${parsed.path}, and one of them writes the whole file. Send the write alone, or only edits.`, { path: parsed.path });
  }
  group.edits.push(parsed.edit);
  return undefined;
}

function parseError(message: string, path?: string): EngineError {
  return engineError('parse_error', message, { path });
}
