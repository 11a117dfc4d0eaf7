/**
 * A lazy chokidar watcher over single files of one workspace. Nothing is watched, and chokidar
 * is not even loaded, until the first `watch`; the tree is never scanned, so opening a huge
 * workspace costs nothing. At most `maxPaths` files are watched (least recently touched
 * dropped first, reported through `onDrop`), since each one costs an inotify watch; with
 * `maxPaths` 0 nothing ever is (the one-shot CLI, which ends before any event could matter).
 *
 * Events are hints: only the workspace-relative path is reported, never what happened. A
 * deleted file is watched again at once, so that its recreation is seen too.
 */
import path from 'node:path';
import type { FSWatcher } from 'chokidar';

export interface WatcherOptions {
  /** Real path of the workspace root. */
  readonly root: string;
  readonly maxPaths: number;
  /** Something may have happened to this path. */
  readonly onHint: (path: string) => void;
  /** The path is no longer watched (evicted to stay under `maxPaths`). */
  readonly onDrop: (path: string) => void;
  readonly onError: (error: unknown) => void;
}

export const DEFAULT_MAX_WATCHED_PATHS = 8192;

let chokidarModule: Promise<typeof import('chokidar')> | undefined;

/** Loads chokidar, once per process; a daemon calls it at start so that the first watch does not wait for the load. */
export function loadChokidar(): Promise<typeof import('chokidar')> {
  return (chokidarModule ??= import('chokidar'));
}

export class LazyWatcher {
  readonly #options: WatcherOptions;
  /** Insertion order is recency order. */
  readonly #watched = new Set<string>();
  /** Loading chokidar takes a moment; adds and removals wait for it, in order. */
  #chokidar: Promise<FSWatcher> | undefined;
  /** Adds and removals not yet handed to chokidar (see `#use`). */
  readonly #pending: ((chokidar: FSWatcher) => void)[] = [];
  #closed = false;

  constructor(options: WatcherOptions) {
    this.#options = options;
  }

  /** Starts watching `relative` (a normalised workspace path), or marks it recently used. True when it is newly watched. */
  watch(relative: string): boolean {
    if (this.#closed || this.#options.maxPaths === 0) return false;
    if (this.#watched.delete(relative)) {
      this.#watched.add(relative);
      return false;
    }
    this.#watched.add(relative);
    this.#use((chokidar) => chokidar.add(this.#absolute(relative)));
    this.#dropOverflow();
    return true;
  }

  unwatch(relative: string): void {
    if (!this.#watched.delete(relative)) return;
    if (this.#chokidar !== undefined) this.#use((chokidar) => chokidar.unwatch(this.#absolute(relative)));
  }

  isWatching(relative: string): boolean {
    return this.#watched.has(relative);
  }

  /** Watched paths. */
  get size(): number {
    return this.#watched.size;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#watched.clear();
    const chokidar = await this.#chokidar?.catch(() => undefined);
    await chokidar?.close();
  }

  /**
   * Runs `action` on the chokidar instance (loaded and started on first use) unless closed by
   * then. Actions wait for chokidar to load, then for the turn of the event loop to end, and run
   * in order, together: a chokidar add costs more than the read it follows, and the reply to the
   * request that read the file need not wait for it. The re-check of a newly watched file (see
   * `changes.ts`) covers the moments before a watch is active, this wait included.
   */
  #use(action: (chokidar: FSWatcher) => void): void {
    this.#chokidar ??= loadChokidar().then(({ watch }) =>
      // persistent: false — a watcher must never be what keeps the process alive.
      watch([], { ignoreInitial: true, persistent: false, followSymlinks: false, atomic: true })
        .on('all', (event, absolute) => this.#onEvent(event, absolute))
        .on('error', (error) => this.#options.onError(error)));
    this.#pending.push(action);
    if (this.#pending.length > 1) return;
    this.#chokidar.then((chokidar) => setImmediate(() => this.#runPending(chokidar)), (error: unknown) => {
      this.#pending.length = 0;
      this.#options.onError(error);
    });
  }

  #runPending(chokidar: FSWatcher): void {
    for (const action of this.#pending.splice(0)) {
      if (this.#closed) return;
      try {
        action(chokidar);
      } catch (error) {
        this.#options.onError(error);
      }
    }
  }

  #onEvent(event: string, absolute: string): void {
    const relative = path.relative(this.#options.root, absolute).split(path.sep).join('/');
    if (!this.#watched.has(relative)) return;
    // chokidar stops watching a deleted file; watch its name again to see it come back.
    if (event === 'unlink') setImmediate(() => this.#rewatch(relative));
    this.#options.onHint(relative);
  }

  #rewatch(relative: string): void {
    if (!this.#closed && this.#watched.has(relative)) this.#use((chokidar) => chokidar.add(this.#absolute(relative)));
  }

  #dropOverflow(): void {
    for (const relative of this.#watched) {
      if (this.#watched.size <= this.#options.maxPaths) return;
      this.unwatch(relative);
      this.#options.onDrop(relative);
    }
  }

  #absolute(relative: string): string {
    return path.join(this.#options.root, ...relative.split('/'));
  }
}
