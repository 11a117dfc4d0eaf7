/**
 * The one input reader of `patchd apply`, single or batch: a file (or stdin) holds patch text
 * in any text dialect, or JSON — an array of V4A operations, `{"operations": [...]}` or
 * `{"edits": [...]}`. JSON is recognised by its content (and a `.json` name), the same way
 * for every file; `--format` overrides the detection.
 */
import { readFile } from 'node:fs/promises';
import type { FormatName, StructuredEdit, V4AOperation } from '../engine/types.ts';
import { plainWordsFor } from '../workspace/ioErrors.ts';
import { UsageError } from './args.ts';

/** What to apply: exactly one of patch text, V4A operations and structured edits. */
export type PatchSource =
  | { readonly patch: string }
  | { readonly operations: readonly V4AOperation[] }
  | { readonly edits: readonly StructuredEdit[] };

/** The file's content could not be a patch: the reason, in one sentence. */
export interface UnreadablePatch {
  readonly reason: string;
}

const JSON_SHAPES = 'a JSON patch is an array of V4A operations, {"operations": [...]} or {"edits": [...]}';

/** The text of `source` (`-`: stdin); a file that cannot be read is a usage error in plain words. */
export async function readPatchText(source: string, stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (source !== '-') return readFile(source, 'utf8').catch((error: unknown) => {
    throw new UsageError(cannotRead(source, error));
  });
  if (stdin.isTTY === true) throw new UsageError('no patch given: name a PATCHFILE or pipe the patch to stdin');
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Why `path` could not be read, as a sentence a user understands (no errno codes). */
export function cannotRead(path: string, error: unknown): string {
  return codeOf(error) === 'EISDIR' ? `${path} is a directory, not a patch file (use --batch to apply every file in it)` : `${path} cannot be read: ${fsReason(error)}`;
}

/** A filesystem failure in plain words. */
export function fsReason(error: unknown): string {
  switch (codeOf(error)) {
    case 'ENOENT': return 'it does not exist';
    case 'EISDIR': return 'it is a directory';
    default: return plainWordsFor(error) ?? 'the filesystem refused';
  }
}

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code;
}

/** Patch text or JSON, by `format` when it is given, else by content. */
export function patchSourceOf(text: string, format: FormatName, name: string): PatchSource | UnreadablePatch {
  if (format !== 'auto' && format !== 'v4a' && format !== 'edits') return { patch: text };
  const looksJson = /^\s*[[{]/.test(text);
  if (format === 'auto' && !looksJson && !name.endsWith('.json')) return { patch: text };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { reason: `${name} is not valid JSON (${JSON_SHAPES})` };
  }
  return jsonSource(json, format) ?? { reason: `${name} is not a patch: ${JSON_SHAPES}${format === 'auto' ? '' : ` (--format ${format})`}` };
}

function jsonSource(json: unknown, format: FormatName): PatchSource | undefined {
  const operations = Array.isArray(json) ? json : (json as { operations?: unknown } | null)?.operations;
  const edits = (json as { edits?: unknown } | null)?.edits;
  if (Array.isArray(operations) && format !== 'edits') return { operations: operations as V4AOperation[] };
  if (Array.isArray(edits) && format !== 'v4a') return { edits: edits as StructuredEdit[] };
  return undefined;
}

export function isUnreadable(source: PatchSource | UnreadablePatch): source is UnreadablePatch {
  return 'reason' in source;
}
