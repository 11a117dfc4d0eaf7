/** The patches of `patchd apply --batch PATH…`: which files, and what each one holds. */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { BatchPatch, FormatName, StructuredEdit, V4AOperation } from '../../protocol/index.ts';
import { UsageError } from './options.ts';

/** Files as given; a directory stands for its files (not hidden, not recursing), sorted by name. */
export async function listBatchFiles(sources: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const source of sources) {
    const stats = await stat(source).catch(() => undefined);
    if (stats === undefined) throw new UsageError(`no such file or directory: ${source}`);
    files.push(...(stats.isDirectory() ? await filesIn(source) : [source]));
  }
  return files;
}

async function filesIn(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true });
  const names = entries.filter((entry) => entry.isFile() && !entry.name.startsWith('.')).map((entry) => entry.name);
  return names.sort().map((name) => path.join(directory, name));
}

/** How every patch of the batch is applied. */
export interface BatchPatchOptions {
  readonly format: FormatName;
  readonly dryRun: boolean;
  readonly fuzz: 'default' | 'exact';
}

/**
 * One patch from a file: a `.json` file holds V4A operations (an array) or `{"edits": […]}`;
 * any other file holds patch text in the dialect `format` names (default: detected).
 */
export async function readBatchPatch(file: string, options: BatchPatchOptions): Promise<BatchPatch> {
  const text = await readFile(file, 'utf8');
  const common = { dryRun: options.dryRun, fuzz: options.fuzz };
  if (!file.endsWith('.json')) return { patch: text, format: options.format, ...common };
  const json = parseJson(text, file);
  if (Array.isArray(json)) return { operations: json as V4AOperation[], format: 'v4a', ...common };
  const edits = (json as { edits?: unknown } | null)?.edits;
  if (Array.isArray(edits)) return { edits: edits as StructuredEdit[], ...common };
  throw new UsageError(`${file}: a JSON patch must be an array of V4A operations or {"edits": [...]}`);
}

function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON`);
  }
}
