/** Removing what the state dir keeps for a while: files past the age their name earns them. */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

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
