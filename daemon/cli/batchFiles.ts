/** The patches of `patchd apply --batch PATH…`: which files, and what each one holds. */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FormatName } from '../engine/types.ts';
import { UsageError } from './args.ts';
import { cannotRead, patchSourceOf, type PatchSource, type UnreadablePatch } from './input.ts';

/** Files as given; a directory stands for its files (not hidden, not recursing), sorted by name. */
export async function listBatchFiles(sources: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const source of sources) {
    const stats = await stat(source).catch((error: unknown) => {
      throw new UsageError(cannotRead(source, error));
    });
    files.push(...(stats.isDirectory() ? await filesIn(source) : [source]));
  }
  return files;
}

async function filesIn(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true }).catch((error: unknown) => {
    throw new UsageError(cannotRead(directory, error));
  });
  const names = entries.filter((entry) => entry.isFile() && !entry.name.startsWith('.')).map((entry) => entry.name);
  return names.sort().map((name) => path.join(directory, name));
}

/** One file's patch, read by the same rules as a single patch; a file that cannot be read says why. */
export async function readBatchFile(file: string, format: FormatName): Promise<PatchSource | UnreadablePatch> {
  try {
    return patchSourceOf(await readFile(file, 'utf8'), format, file);
  } catch (error) {
    return { reason: cannotRead(file, error) };
  }
}
