/**
 * Reading guarded paths through the content cache: the guard's lstat of the file, taken just
 * before, decides whether the cached bytes still stand (see `cache.ts`); otherwise the file is
 * read from disk and cached.
 */
import type { Result } from '../engine/types.ts';
import { ok } from '../engine/types.ts';
import type { ContentCache } from './cache.ts';
import {
  readDiskEntry, readGuardedEntries, readGuardedWith, sha256Hex, type DiskEntry, type GuardedEntries,
} from './files.ts';
import type { GuardedPath, PathGuard } from './guard.ts';

export interface ReadOptions {
  /** Skip the cache: read every path from disk (and refresh the cache with it). */
  readonly fresh?: boolean | undefined;
}

export class CachedReader {
  readonly #guard: PathGuard;
  readonly #cache: ContentCache;

  constructor(guard: PathGuard, cache: ContentCache) {
    this.#guard = guard;
    this.#cache = cache;
  }

  /** Guards every path (nothing is read if one is refused), then reads each; keyed by normalised path. */
  async read(paths: readonly string[], options: ReadOptions = {}): Promise<Result<GuardedEntries>> {
    if (options.fresh === true) {
      const entries = await readGuardedEntries(this.#guard, paths);
      if (entries.ok) for (const [path, { entry }] of entries.value) this.#cache.remember(path, entry);
      return entries;
    }
    return readGuardedWith(this.#guard, paths, (target) => this.#readOne(target));
  }

  /**
   * The sha256 on disk now: null when missing or not a file, undefined when it cannot be read.
   * Served from the cache while its entry stands (an lstat shows the stamp it was read with):
   * a re-check of a file just read and watched costs the guard's walk, not a read and a hash.
   */
  async sha256Now(path: string): Promise<string | null | undefined> {
    const entries = await this.read([path]);
    if (!entries.ok) return undefined;
    const entry = [...entries.value.values()][0]?.entry;
    if (entry === undefined) return undefined;
    return entry.kind === 'file' ? sha256Hex(entry.bytes) : null;
  }

  async #readOne(target: GuardedPath): Promise<Result<DiskEntry>> {
    const cached = this.#fromCache(target);
    if (cached !== undefined) return ok(cached);
    const entry = await readDiskEntry(target.absolute, target.path);
    if (entry.ok) this.#cache.remember(target.path, entry.value);
    return entry;
  }

  #fromCache(target: GuardedPath): DiskEntry | undefined {
    if (!this.#cache.has(target.path)) return undefined;
    if (target.stats === undefined) {
      this.#cache.forget(target.path);
      return undefined;
    }
    return this.#cache.lookup(target.path, target.stats);
  }
}
