/**
 * OpenAI V4A operations (dialect `v4a`, as openai-agents-js `applyDiff` reads them) →
 * `ParsedPatch`. Pure; never throws.
 */
import { limitExceeded, parseChunks, quoteLine, type ChunkSource } from './chunks.ts';
import { engineError, type EngineError } from './errors.ts';
import { LIMITS } from './limits.ts';
import { splitPatchLines } from './patchText.ts';
import { normalizePatchPath, pathErrorAt } from './paths.ts';
import { fail, hunksOf, ok, type FilePatch, type ParsedPatch, type Result, type V4AOperation } from './types.ts';

/** One operation being read, and how to name it in an error message. */
interface OperationContext {
  readonly operation: V4AOperation;
  readonly label: string;
  readonly path: string;
}

/** Parses V4A `create_file` / `update_file` / `delete_file` operations into one atomic patch. */
export function parseV4AOperations(ops: readonly V4AOperation[]): Result<ParsedPatch> {
  const size = checkSize(ops);
  if (size !== undefined) return fail(size);
  const files: FilePatch[] = [];
  const claimed = new Map<string, number>();
  let hunkCount = 0;
  for (const [index, operation] of ops.entries()) {
    const file = parseOperation(operation, index, hunkCount);
    if (!file.ok) return file;
    const duplicate = claimPath(file.value.path, index, claimed);
    if (duplicate !== undefined) return fail(duplicate);
    hunkCount += hunksOf(file.value).length;
    files.push(file.value);
  }
  if (files.length === 0) return fail(engineError('parse_error', 'There are no operations to apply. Send at least one create_file, update_file or delete_file operation.'));
  return ok({ dialect: 'v4a', files, diagnostics: [], ignoredMetadata: [] });
}

function checkSize(ops: readonly V4AOperation[]): EngineError | undefined {
  if (ops.length > LIMITS.maxOperations) return limitExceeded('maxOperations', ops.length, 'operations');
  if (ops.length > LIMITS.maxFiles) return limitExceeded('maxFiles', ops.length, 'files');
  let chars = 0;
  for (const operation of ops) chars += typeof operation?.diff === 'string' ? operation.diff.length : 0;
  if (chars > LIMITS.maxPatchChars) return limitExceeded('maxPatchChars', chars, 'characters of diff text');
  return undefined;
}

function parseOperation(operation: V4AOperation, index: number, hunksBefore: number): Result<FilePatch> {
  const shape = checkShape(operation, index);
  if (shape !== undefined) return fail(shape);
  const label = `operation ${index + 1} (${operation.type} ${quoteLine(operation.path)})`;
  const path = normalizePatchPath(operation.path);
  if (!path.ok) return fail(pathErrorAt(label, operation.path, path.error));
  const context: OperationContext = { operation, label, path: path.value };
  if (operation.type === 'delete_file') return ok({ op: 'delete', path: path.value, hunks: [] });
  const lines = readDiffLines(context);
  if (!lines.ok) return lines;
  if (operation.type === 'create_file') return parseCreate(context, lines.value);
  return parseUpdate(context, lines.value, hunksBefore);
}

/** Operations arrive from JSON: a malformed one is a parse error, never a crash. */
function checkShape(operation: V4AOperation, index: number): EngineError | undefined {
  const what = `operation ${index + 1}`;
  if (typeof operation !== 'object' || operation === null) return engineError('parse_error', `${what} is not an object with type, path and diff.`);
  if (operation.type !== 'create_file' && operation.type !== 'update_file' && operation.type !== 'delete_file') {
    return engineError('parse_error', `${what} has type ${JSON.stringify(operation.type)}; use create_file, update_file or delete_file.`);
  }
  if (typeof operation.path !== 'string') return engineError('parse_error', `${what} has no path.`);
  return undefined;
}

function readDiffLines(context: OperationContext): Result<readonly string[]> {
  const { diff } = context.operation;
  if (typeof diff !== 'string') return fail(parseError(context, `${context.label} has no diff. ${context.operation.type} needs one.`));
  const split = splitPatchLines(diff, { transport: false });
  if (!split.ok) return fail(engineError(split.error.code, `${context.label}: ${split.error.message}`, { path: context.path, limit: split.error.limit }));
  return ok(split.value.lines);
}

/** The `+` lines joined with `\n`: only a final bare `+` line gives the file a trailing newline. */
function parseCreate(context: OperationContext, lines: readonly string[]): Result<FilePatch> {
  const invalid = lines.findIndex((line) => !line.startsWith('+'));
  if (invalid !== -1) {
    const line = lines[invalid] ?? '';
    return fail(parseError(context, `${diffLine(context, invalid)} (${quoteLine(line)}) does not start with "+": every line of a create_file diff is "+" followed by the file's text.`));
  }
  return ok({ op: 'add', path: context.path, content: lines.map((line) => line.slice(1)).join('\n') });
}

function parseUpdate(context: OperationContext, lines: readonly string[], hunksBefore: number): Result<FilePatch> {
  const source: ChunkSource = { lines, end: lines.length, path: context.path, where: (index) => diffLine(context, index) };
  const parsed = parseChunks(source, 0, hunksBefore);
  if (!parsed.ok) return parsed;
  const { hunks, next } = parsed.value;
  if (next < lines.length) {
    return fail(parseError(context, `${diffLine(context, next)} (${quoteLine(lines[next] ?? '')}) does not belong in a V4A diff: use @@ lines, " ", "-" and "+" lines, and *** End of File.`));
  }
  if (hunks.length === 0) return fail(parseError(context, `${context.label} has an empty diff. Send the @@ sections to change, or leave the file out.`));
  return ok({ op: 'update', path: context.path, hunks });
}

function claimPath(path: string, index: number, claimed: Map<string, number>): EngineError | undefined {
  const earlier = claimed.get(path);
  if (earlier !== undefined) {
    return engineError('duplicate_file_patch', `Operations ${earlier + 1} and ${index + 1} both name ${path}. Put all changes to one file in a single operation.`, { path });
  }
  claimed.set(path, index);
  return undefined;
}


function diffLine(context: OperationContext, index: number): string {
  return `${context.label}, diff line ${index + 1}`;
}

function parseError(context: OperationContext, message: string): EngineError {
  return engineError('parse_error', message, { path: context.path });
}
