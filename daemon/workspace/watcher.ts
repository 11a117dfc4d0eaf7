/**
 * A lazy watcher over single files of one workspace, on Node's `fs.watch` (inotify): one
 * watch per file patchd touched, never a scan of the tree, so opening a huge workspace costs
 * nothing. At most `maxPaths` files are watched (least recently touched dropped first,
 * reported through `onDrop`), since each one costs an inotify watch; with `maxPaths` 0
 * nothing ever is (the one-shot CLI, which ends before any event could matter).
 *
 * Events are hints: only the workspace-relative path is reported, never what happened. An
 * inotify watch follows an inode, not a name, so after any event the name is looked up again
 * (one lstat) and, when another inode or nothing is there now (an editor's temp + rename, a
 * delete), the watch moves: to the new file, or to the nearest existing directory above a
 * missing one, whose events bring it back to the file once it is recreated.
 *
 * (Not chokidar: per watched file it costs an asynchronous stat on add and on every event,
 * about 0.2 ms of main-thread time a file, and patchd watches every file it patches.)
 */
import { lstatSync, watch as watchPath, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { hasErrorCode } from './ioErrors.ts';

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

/** How a watched path is watched right now. */
type Watch =
  /** The file itself: the inode at the name when the watch started. */
  | { readonly kind: 'file'; readonly ino: number; readonly handle: FSWatcher }
  /** The file is missing: waiting in this (absolute) directory, the nearest existing one above it. */
  | { readonly kind: 'waiting'; readonly directory: string }
  /** Nothing could be watched (no directory above it inside the root, or the watch failed). */
  | { readonly kind: 'none' };

/** One watch on a directory, shared by every missing path waiting in it. */
interface DirectoryWatch {
  readonly handle: FSWatcher;
  readonly waiting: Set<string>;
}

/** A name looked up a few times while a watch starts, before it settles (a file replaced over and over meanwhile). */
const MAX_ATTACH_ATTEMPTS = 3;

export class LazyWatcher {
  readonly #options: WatcherOptions;
  /** Relative path → its watch; insertion order is recency order. */
  readonly #watched = new Map<string, Watch>();
  readonly #directories = new Map<string, DirectoryWatch>();
  #closed = false;

  constructor(options: WatcherOptions) {
    this.#options = options;
  }

  /** Starts watching `relative` (a normalised workspace path), or marks it recently used. True when it is newly watched. */
  watch(relative: string): boolean {
    if (this.#closed || this.#options.maxPaths === 0) return false;
    const current = this.#watched.get(relative);
    if (current !== undefined) {
      this.#watched.delete(relative);
      this.#watched.set(relative, current);
      return false;
    }
    this.#watched.set(relative, { kind: 'none' });
    this.#attach(relative);
    this.#dropOverflow();
    return true;
  }

  unwatch(relative: string): void {
    const current = this.#watched.get(relative);
    if (current === undefined) return;
    this.#detach(relative, current);
    this.#watched.delete(relative);
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
    for (const [relative, current] of this.#watched) this.#detach(relative, current);
    this.#watched.clear();
  }

  /** Watches the file at `relative` if it is there, else waits for it in the nearest existing directory above. */
  #attach(relative: string): void {
    const absolute = this.#absolute(relative);
    for (let attempt = 0; attempt < MAX_ATTACH_ATTEMPTS; attempt++) {
      const before = inodeAt(absolute);
      if (before === undefined) return this.#waitFor(relative);
      const handle = this.#watchFs(absolute, () => this.#onFileEvent(relative));
      if (handle === undefined) return this.#waitFor(relative);
      // The watch follows whatever inode the name held when it started: make sure it is the one looked up.
      if (inodeAt(absolute) === before) {
        this.#watched.set(relative, { kind: 'file', ino: before, handle });
        return;
      }
      handle.close();
    }
    this.#waitFor(relative);
  }

  #waitFor(relative: string): void {
    let directory = path.dirname(this.#absolute(relative));
    for (;;) {
      if (!this.#isInsideRoot(directory)) {
        this.#watched.set(relative, { kind: 'none' });
        return;
      }
      const shared = this.#directoryWatch(directory);
      if (shared !== undefined) {
        shared.waiting.add(relative);
        this.#watched.set(relative, { kind: 'waiting', directory });
        // Created between the lookup and the directory's watch: its event may be gone, so look again.
        if (inodeAt(this.#absolute(relative)) !== undefined) setImmediate(() => this.#lookAgain(relative));
        return;
      }
      directory = path.dirname(directory);
    }
  }

  #directoryWatch(directory: string): DirectoryWatch | undefined {
    const existing = this.#directories.get(directory);
    if (existing !== undefined) return existing;
    const handle = this.#watchFs(directory, () => this.#onDirectoryEvent(directory));
    if (handle === undefined) return undefined;
    const created: DirectoryWatch = { handle, waiting: new Set() };
    this.#directories.set(directory, created);
    return created;
  }

  /** An `fs.watch` handle, or undefined when the path is not there (any other failure is reported). */
  #watchFs(absolute: string, onEvent: () => void): FSWatcher | undefined {
    try {
      // persistent: false — a watcher must never be what keeps the process alive.
      const handle = watchPath(absolute, { persistent: false }, onEvent);
      handle.on('error', onEvent);
      return handle;
    } catch (error) {
      if (!hasErrorCode(error, 'ENOENT', 'ENOTDIR')) this.#options.onError(error);
      return undefined;
    }
  }

  #onFileEvent(relative: string): void {
    const current = this.#watched.get(relative);
    if (this.#closed || current?.kind !== 'file') return;
    if (inodeAt(this.#absolute(relative)) !== current.ino) this.#retry(relative);
    this.#options.onHint(relative);
  }

  /** Something changed in a directory missing paths wait in: each of them is looked up again. */
  #onDirectoryEvent(directory: string): void {
    const shared = this.#directories.get(directory);
    if (this.#closed || shared === undefined) return;
    for (const relative of [...shared.waiting]) this.#lookAgain(relative);
  }

  /** A path waiting for its file: watch the file if it is back (and say so). */
  #lookAgain(relative: string): void {
    if (this.#closed || this.#watched.get(relative)?.kind !== 'waiting') return;
    this.#retry(relative);
    if (this.#watched.get(relative)?.kind === 'file') this.#options.onHint(relative);
  }

  #retry(relative: string): void {
    const current = this.#watched.get(relative);
    if (current === undefined) return;
    this.#detach(relative, current);
    this.#attach(relative);
  }

  #detach(relative: string, current: Watch): void {
    if (current.kind === 'file') current.handle.close();
    if (current.kind !== 'waiting') return;
    const shared = this.#directories.get(current.directory);
    shared?.waiting.delete(relative);
    if (shared !== undefined && shared.waiting.size === 0) {
      shared.handle.close();
      this.#directories.delete(current.directory);
    }
  }

  #dropOverflow(): void {
    for (const relative of this.#watched.keys()) {
      if (this.#watched.size <= this.#options.maxPaths) return;
      this.unwatch(relative);
      this.#options.onDrop(relative);
    }
  }

  #isInsideRoot(directory: string): boolean {
    const { root } = this.#options;
    return directory === root || directory.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
  }

  #absolute(relative: string): string {
    return path.join(this.#options.root, ...relative.split('/'));
  }
}

/** The inode at `absolute` (not following a final symlink), or undefined when nothing is there. */
function inodeAt(absolute: string): number | undefined {
  try {
    return lstatSync(absolute, { throwIfNoEntry: false })?.ino;
  } catch {
    return undefined;
  }
}
