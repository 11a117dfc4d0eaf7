/**
 * The content cache of one workspace: the bytes (and, through `sha256Hex`, the hash) of files
 * patchd has read, so a file read again is not read and hashed again. An entry is served only
 * while an lstat taken now shows the very stamp it was read with, and only when that stamp
 * is not racy (see `stamp.ts`); watcher events drop entries early. The disk stays the truth:
 * commits re-read what they replace.
 *
 * Bounded: entries over `maxEntryBytes` are not kept, and the least recently used go first
 * once `maxBytes` is exceeded.
 */
import type { BigIntStats } from 'node:fs';
import type { DiskEntry } from './files.ts';
import { isRacy, sameStamp, stampOf } from './stamp.ts';

export type CachedFile = Extract<DiskEntry, { kind: 'file' }>;

export interface ContentCacheOptions {
  readonly maxBytes: number;
  readonly maxEntryBytes: number;
}

export const DEFAULT_CACHE_OPTIONS: ContentCacheOptions = { maxBytes: 64 * 1024 * 1024, maxEntryBytes: 4 * 1024 * 1024 };

export class ContentCache {
  readonly #options: ContentCacheOptions;
  /** Insertion order is recency order: a hit moves its entry to the end. */
  readonly #entries = new Map<string, CachedFile>();
  #bytes = 0;

  constructor(options: ContentCacheOptions = DEFAULT_CACHE_OPTIONS) {
    this.#options = options;
  }

  has(path: string): boolean {
    return this.#entries.has(path);
  }

  /** The cached file, when `current` (an lstat taken just now) shows it unchanged. */
  lookup(path: string, current: BigIntStats): CachedFile | undefined {
    const entry = this.#entries.get(path);
    if (entry === undefined) return undefined;
    if (!current.isFile() || !sameStamp(entry.stamp, stampOf(current, 0n))) {
      this.forget(path);
      return undefined;
    }
    this.#entries.delete(path);
    this.#entries.set(path, entry);
    return entry;
  }

  /** Keeps a file just read from disk, unless its stamp is racy or it is too large. */
  remember(path: string, entry: DiskEntry): void {
    this.forget(path);
    if (entry.kind !== 'file' || isRacy(entry.stamp) || entry.bytes.byteLength > this.#options.maxEntryBytes) return;
    this.#entries.set(path, entry);
    this.#bytes += entry.bytes.byteLength;
    this.#evictOverflow();
  }

  forget(path: string): void {
    const entry = this.#entries.get(path);
    if (entry === undefined) return;
    this.#entries.delete(path);
    this.#bytes -= entry.bytes.byteLength;
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }

  /** Cached bytes in total. */
  get bytes(): number {
    return this.#bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  #evictOverflow(): void {
    for (const path of this.#entries.keys()) {
      if (this.#bytes <= this.#options.maxBytes) return;
      this.forget(path);
    }
  }
}
