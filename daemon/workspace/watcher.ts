/**
 * A lazy chokidar watcher over single files of one workspace. Nothing is watched, and chokidar
 * is not even loaded, until the first `watch`; the tree is never scanned, so opening a huge
 * workspace costs nothing. At most `maxPaths` files are watched, since each one costs an
 * inotify watch; with `maxPaths` 0 nothing ever is (the one-shot CLI, which ends before any
 * event could matter).
 *
 * The bound is kept by generations, never by chokidar's `unwatch`: that adds the path to a list
 * of ignored paths which only grows (until the path is watched again), and every later `add`
 * scans the list and rebuilds a matcher of all of it — a daemon past its bound then spent more
 * on each new watch the longer it ran (milliseconds after a few thousand drops). Instead each
 * generation is a chokidar instance of its own, holding up to a third of the bound; when the
 * newest is full a new one starts, and once there are more than three the oldest is closed
 * whole, its files dropped (reported through `onDrop`). A file touched while in an older
 * generation moves to the newest (watched there too until the older one closes), so the files
 * dropped are the least recently touched, a generation at a time.
 *
 * Events are hints: only the workspace-relative path is reported, never what happened. A
 * deleted file is watched again at once, so that its recreation is seen too.
 */
import path from 'node:path';
import type { FSWatcher } from 'chokidar';
import { hasErrorCode } from './ioErrors.ts';

export interface WatcherOptions {
  /** Real path of the workspace root. */
  readonly root: string;
  readonly maxPaths: number;
  /** Something may have happened to this path. */
  readonly onHint: (path: string) => void;
  /** The path is no longer watched (its generation closed to stay under `maxPaths`). */
  readonly onDrop: (path: string) => void;
  readonly onError: (error: unknown) => void;
  /** Where chokidar comes from; tests give a stand-in that records what it is asked. */
  readonly load?: () => Promise<Pick<typeof import('chokidar'), 'watch'>>;
}

export const DEFAULT_MAX_WATCHED_PATHS = 8192;

let chokidarModule: Promise<typeof import('chokidar')> | undefined;

/** Loads chokidar, once per process; a daemon calls it at start so that the first watch does not wait for the load. */
export function loadChokidar(): Promise<typeof import('chokidar')> {
  return (chokidarModule ??= import('chokidar'));
}

/** Generations at most (fewer when `maxPaths` is smaller). */
const GENERATIONS = 3;

/** One chokidar instance, started on its first use, and the files it was asked to watch. */
interface Generation {
  /** Files watched through this generation and not moved to a newer one. */
  readonly paths: Set<string>;
  /** Files it was asked to watch, moved ones included: each holds a watch until it closes. */
  added: number;
  chokidar: Promise<FSWatcher> | undefined;
  /** Adds not yet handed to chokidar (see `#use`). */
  readonly pending: ((chokidar: FSWatcher) => void)[];
}

/** The system ran out of file watches (inotify's `max_user_watches` or `max_user_instances`). */
export class WatchLimitError extends Error {
  override name = 'WatchLimitError';

  constructor(cause: unknown) {
    super(
      `The system's limit of file watches is reached (${(cause as NodeJS.ErrnoException).code} from inotify): changes made outside patchd to files it reads or writes from now on may go unreported (file/changed). Patches are not affected: each is checked against the disk when it commits. Raise fs.inotify.max_user_watches (and max_user_instances) to restore it. Told once per workspace.`,
      { cause },
    );
  }
}

export class LazyWatcher {
  readonly #options: WatcherOptions;
  /** Newest first. */
  #generations: Generation[] = [];
  readonly #limit: number;
  /** Watches per generation: all generations together stay within `maxPaths`. */
  readonly #capacity: number;
  #closed = false;
  #limitTold = false;

  constructor(options: WatcherOptions) {
    this.#options = options;
    this.#limit = Math.max(1, Math.min(GENERATIONS, options.maxPaths));
    this.#capacity = Math.max(1, Math.floor(options.maxPaths / this.#limit));
  }

  /**
   * Starts watching `relative` (a normalised workspace path), or marks it recently used. True
   * when the caller should re-check the file as for a new watch: it was not watched, or it moved
   * out of a generation this very call closed, whose watch ended a moment before the new one is
   * active. (Not for every move: a re-check is itself a use, and it would move the file again
   * while generations come and go quickly, and be re-checked again, and again.)
   */
  watch(relative: string): boolean {
    if (this.#closed || this.#options.maxPaths === 0) return false;
    const holder = this.#generations.find((generation) => generation.paths.has(relative));
    if (holder !== undefined && holder === this.#generations[0]) return false;
    holder?.paths.delete(relative);
    const newest = this.#withRoom();
    newest.paths.add(relative);
    newest.added += 1;
    this.#use(newest, (chokidar) => chokidar.add(this.#absolute(relative)));
    return holder === undefined || !this.#generations.includes(holder);
  }

  isWatching(relative: string): boolean {
    return this.#generations.some((generation) => generation.paths.has(relative));
  }

  /** Watched paths. */
  get size(): number {
    return this.#generations.reduce((total, generation) => total + generation.paths.size, 0);
  }

  async close(): Promise<void> {
    this.#closed = true;
    const closing = this.#generations.map((generation) => this.#stop(generation));
    this.#generations = [];
    await Promise.all(closing);
  }

  /** The newest generation, a new one when it is full; the oldest is closed when that makes too many. */
  #withRoom(): Generation {
    const newest = this.#generations[0];
    if (newest !== undefined && newest.added < this.#capacity) return newest;
    const fresh: Generation = { paths: new Set(), added: 0, chokidar: undefined, pending: [] };
    this.#generations.unshift(fresh);
    for (const retired of this.#generations.splice(this.#limit)) {
      this.#stop(retired).catch((error: unknown) => this.#options.onError(error));
      for (const relative of retired.paths) this.#options.onDrop(relative);
    }
    return fresh;
  }

  async #stop(generation: Generation): Promise<void> {
    generation.pending.length = 0;
    const chokidar = await generation.chokidar?.catch(() => undefined);
    await chokidar?.close();
  }

  /**
   * Runs `action` on the generation's chokidar instance (loaded and started on first use) unless
   * closed by then. Actions wait for chokidar to load, then for the turn of the event loop to
   * end, and run in order, together: a chokidar add costs more than the read it follows, and the
   * reply to the request that read the file need not wait for it. The re-check of a newly
   * watched file (see `changes.ts`) covers the moments before a watch is active, this wait included.
   */
  #use(generation: Generation, action: (chokidar: FSWatcher) => void): void {
    generation.chokidar ??= (this.#options.load ?? loadChokidar)().then(({ watch }) =>
      // persistent: false — a watcher must never be what keeps the process alive.
      watch([], { ignoreInitial: true, persistent: false, followSymlinks: false, atomic: true })
        .on('all', (event, absolute) => this.#onEvent(event, absolute))
        .on('error', (error) => this.#onChokidarError(error)));
    generation.pending.push(action);
    if (generation.pending.length > 1) return;
    generation.chokidar.then((chokidar) => setImmediate(() => this.#runPending(generation, chokidar)), (error: unknown) => {
      generation.pending.length = 0;
      this.#options.onError(error);
    });
  }

  #runPending(generation: Generation, chokidar: FSWatcher): void {
    for (const action of generation.pending.splice(0)) {
      if (this.#closed) return;
      try {
        action(chokidar);
      } catch (error) {
        this.#onChokidarError(error);
      }
    }
  }

  /** The system's limit on watches is told once: past it, every new file would say the same. */
  #onChokidarError(error: unknown): void {
    if (!hasErrorCode(error, 'ENOSPC', 'EMFILE')) return this.#options.onError(error);
    if (this.#limitTold) return;
    this.#limitTold = true;
    this.#options.onError(new WatchLimitError(error));
  }

  #onEvent(event: string, absolute: string): void {
    const relative = path.relative(this.#options.root, absolute).split(path.sep).join('/');
    if (!this.isWatching(relative)) return;
    // chokidar stops watching a deleted file; watch its name again to see it come back.
    if (event === 'unlink') setImmediate(() => this.#rewatch(relative));
    this.#options.onHint(relative);
  }

  #rewatch(relative: string): void {
    const holder = this.#generations.find((generation) => generation.paths.has(relative));
    if (!this.#closed && holder !== undefined) this.#use(holder, (chokidar) => chokidar.add(this.#absolute(relative)));
  }

  #absolute(relative: string): string {
    return path.join(this.#options.root, ...relative.split('/'));
  }
}
