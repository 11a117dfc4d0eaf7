/**
 * Where a watched file stands, and waiting for one that is gone to come back. `locate` finds
 * the file (told from an earlier one at the same path by `fileIdentity`), or else the nearest
 * directory above it that exists. chokidar watches files, and a file's watch ends with the
 * file; chokidar's own wait for a missing file looks one directory up, for the file's own name,
 * so a file whose directory went too (`rm -r sub`) would never be seen again. Here each missing
 * file waits on the nearest directory above it that exists, for the next name on its path: one
 * plain `fs.watch` per directory, shared by every file waiting there, closed once none is. A
 * directory is never read, and nothing under it is watched.
 *
 * Events are hints, as in `watcher.ts`: `onStir` is told which waiting files may have come
 * closer (the awaited name appeared or went, or the directory itself did), and finds out for
 * itself — the file is back, or waits on a deeper (or shallower) directory now.
 */
import { watch, type FSWatcher } from 'node:fs';
import { lstat } from 'node:fs/promises';
import path from 'node:path';

/** Where a watched file stands: a file, or the nearest directory above it that exists and the name it waits for there; undefined when not even the root exists. */
export type Place = { readonly identity: string } | { readonly directory: string; readonly name: string } | undefined;

/** Tells one file from another at the same path: inode number and birth time (a new file may take a deleted one's inode number). */
export function fileIdentity(stats: { readonly ino: bigint; readonly birthtimeNs: bigint }): string {
  return `${stats.ino}:${stats.birthtimeNs}`;
}

/** The file at `relative` (a normalised path under `root`), or else the nearest directory above it, within the root, that exists. */
export async function locate(root: string, relative: string): Promise<Place> {
  const parts = relative.split('/');
  try {
    const stats = await lstat(path.join(root, ...parts), { bigint: true });
    if (stats.isFile()) return { identity: fileIdentity(stats) };
  } catch {
    // Gone (or unreadable): wait above it.
  }
  for (let depth = parts.length - 1; depth >= 0; depth--) {
    const directory = path.join(root, ...parts.slice(0, depth));
    const isDirectory = await lstat(directory).then((stats) => stats.isDirectory(), () => false);
    if (isDirectory) return { directory, name: parts[depth]! };
  }
  return undefined;
}

interface Waiting {
  readonly watcher: FSWatcher;
  /** Waiting file → the name it awaits in this directory. */
  readonly files: Map<string, string>;
}

export class Arrivals {
  readonly #onStir: (relative: string) => void;
  /** Absolute directory → what waits on it. */
  readonly #directories = new Map<string, Waiting>();
  /** Waiting file → the directory it waits on. */
  readonly #waitingOn = new Map<string, string>();

  constructor(onStir: (relative: string) => void) {
    this.#onStir = onStir;
  }

  /**
   * Makes `relative` wait on `directory` for `name`. True when it did not wait there already:
   * the caller must then look once more, since the name may have appeared before the watch was
   * active. Throws what `fs.watch` throws (the directory just went: ENOENT; no watches left: ENOSPC).
   */
  wait(relative: string, directory: string, name: string): boolean {
    if (this.#waitingOn.get(relative) === directory) return false;
    this.cancel(relative);
    let waiting = this.#directories.get(directory);
    if (waiting === undefined) {
      // persistent: false — a watch must never be what keeps the process alive.
      const watcher = watch(directory, { persistent: false }, (_event, changed) => this.#stir(directory, changed));
      watcher.on('error', () => this.#stir(directory, null));
      waiting = { watcher, files: new Map() };
      this.#directories.set(directory, waiting);
    }
    waiting.files.set(relative, name);
    this.#waitingOn.set(relative, directory);
    return true;
  }

  isWaiting(relative: string): boolean {
    return this.#waitingOn.has(relative);
  }

  /** `relative` waits no more (it is back, or no longer watched). */
  cancel(relative: string): void {
    const directory = this.#waitingOn.get(relative);
    if (directory === undefined) return;
    this.#waitingOn.delete(relative);
    const waiting = this.#directories.get(directory);
    waiting?.files.delete(relative);
    if (waiting?.files.size === 0) this.#closeDirectory(directory);
  }

  /** Directories watched (diagnostics, tests). */
  get directories(): number {
    return this.#directories.size;
  }

  close(): void {
    for (const directory of [...this.#directories.keys()]) this.#closeDirectory(directory);
    this.#waitingOn.clear();
  }

  /**
   * An event in `directory` on `changed`. Its own name (or none) is the directory itself going or
   * moving away, which ends what this watch can see: it closes, and every file waiting on it
   * looks again, for a directory further up.
   */
  #stir(directory: string, changed: string | Buffer | null): void {
    const waiting = this.#directories.get(directory);
    if (waiting === undefined) return;
    const name = changed?.toString();
    const itself = name === undefined || name === path.basename(directory);
    const stirred = [...waiting.files].filter(([, awaited]) => itself || awaited === name).map(([relative]) => relative);
    if (itself) {
      for (const relative of waiting.files.keys()) this.#waitingOn.delete(relative);
      this.#closeDirectory(directory);
    }
    for (const relative of stirred) this.#onStir(relative);
  }

  #closeDirectory(directory: string): void {
    this.#directories.get(directory)?.watcher.close();
    this.#directories.delete(directory);
  }
}
