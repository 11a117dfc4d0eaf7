/** Removing what the state dir keeps for a while: files past the age their name earns them. */
import { readdir, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import type { DiskCalls } from './diskCalls.ts';

/**
 * Removes each file of `directory` older (by mtime) than `ageLimitOf(name)` milliseconds, through
 * `remove`; a name whose limit is undefined is kept whatever its age. Returns the names removed.
 */
export async function removeAgedFiles(directory: string, ageLimitOf: (name: string) => number | undefined, now: number, remove: (file: string) => Promise<void>): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await readdir(directory).catch(() => [])) {
    const ageLimit = ageLimitOf(name);
    if (ageLimit === undefined) continue;
    const file = path.join(directory, name);
    const stats = await stat(file).catch(() => undefined);
    if (stats === undefined || now - stats.mtimeMs <= ageLimit) continue;
    await remove(file);
    removed.push(name);
  }
  return removed;
}

/**
 * Renames `file` to itself plus `suffix`, out of its readers' way, dated now: its age, for
 * `removeAgedFiles`, counts from when it was set aside, not from when it was written (else one
 * that waited longer than the age kept would go with the same open's prune). Returns the new path.
 */
export async function setAsideAs(file: string, suffix: string, disk: DiskCalls): Promise<string> {
  const kept = `${file}${suffix}`;
  const now = new Date();
  await utimes(file, now, now);
  await disk.rename(file, kept);
  return kept;
}
