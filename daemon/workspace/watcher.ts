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
 * Events are hints: only the workspace-relative path is reported, never what happened.
 *
 * A watch is set some time after it is asked for: chokidar stats the file, then watches it, and
 * on a loaded machine that can take longer than any wait. It tells when it has (chokidar's `add`
 * for the path comes right after the watch is set), and only then does anything done to the
 * file reach the watcher: a new watch is reported set (`onActive`), and a watch set again (see
 * below) hints then, not when it is asked for.
 *
 * A watch is on a file (an inode), not on a name. When the file is deleted, or replaced (`rm f
 * && echo > f`, `git checkout`, an editor's save by rename), its watch ends; chokidar sets a new
 * one only when its own look finds another inode number, and a filesystem gives a new file the
 * number of one just deleted, often (ext4: every time). chokidar then keeps a dead watch it
 * takes for live, and ignores an `add` of the path. So the watcher itself sets each file's watch
 * again whenever it may have ended: when the watch reports its file deleted or moved (a raw
 * `rename`), when chokidar reports an unlink, when a read finds another file at the path
 * (inode and birth time) or none where the watcher thought it watched one, and at once when
 * patchd's own commit renamed a new file over it (see `replaced`). It looks at the path: a file
 * there is watched anew (its watch closed and forgotten, then `add`: see `forget`); a missing
 * one waits for its return on the nearest directory above it that exists (see `arrivals.ts`).
 * Either way a hint follows (once the new watch is set; at once for a missing file), so that
 * whatever happened while no watch was active is read.
 *
 * chokidar sets a watch by a stat, then a watch on the path. A file gone between the two (`rm f`
 * the moment it is watched, or a replaced file gone again as chokidar follows it) leaves no
 * watch, and chokidar says nothing of it: it drops ENOENT errors, and it still takes the file for
 * watched. Every error chokidar meets passes through its `_handleError`; the watcher hears there
 * of a watched file found missing, and sets that file's watch again too. It also keeps such an
 * error from chokidar, whose own wait for a file it found missing is a watch on the directory
 * that reads all of it, again at every change in it.
 */
import path from 'node:path';
import type { FSWatcher } from 'chokidar';
import { Arrivals, locate, type Place } from './arrivals.ts';
import { hasErrorCode } from './ioErrors.ts';

export interface WatcherOptions {
  /** Real path of the workspace root. */
  readonly root: string;
  readonly maxPaths: number;
  /** Something may have happened to this path. */
  readonly onHint: (path: string) => void;
  /** The watch `watch` was asked for (and answered true) is set: what is done to the file from now on is told. */
  readonly onActive: (path: string) => void;
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
  /** That instance, once started. */
  started: FSWatcher | undefined;
  /** Adds not yet handed to chokidar (see `#use`). */
  readonly pending: ((chokidar: FSWatcher) => void)[];
}

/** What the watcher knows of a watched file. */
interface Watched {
  /** Gone when last looked at: it waits to come back (see `arrivals.ts`). */
  missing: boolean;
  /** The file the watch was set on (`fileIdentity` in arrivals.ts), when known. */
  identity: string | undefined;
  /** Asked of chokidar and not yet reported set: a new watch, or one set again. */
  arming: 'new' | 'again' | undefined;
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
  /** Every watched file, whichever generation holds it. */
  readonly #files = new Map<string, Watched>();
  readonly #arrivals = new Arrivals((relative) => this.#reattach(relative));
  /** Files whose watch is to be set again: to be looked at (at the end of this turn), being looked at, or to be looked at once more after that. */
  readonly #reattaching = new Map<string, 'due' | 'looking' | 'again'>();

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
   * while generations come and go quickly, and be re-checked again, and again.) `identity`
   * (`fileIdentity` in arrivals.ts) is the file a read just found there, when known: a watch set
   * on another file, or a file the watcher thought gone, is set anew.
   */
  watch(relative: string, identity?: string): boolean {
    if (this.#closed || this.#options.maxPaths === 0) return false;
    const holder = this.#holderOf(relative);
    if (holder !== undefined && holder === this.#generations[0]) {
      this.#confirm(relative, identity);
      return false;
    }
    holder?.paths.delete(relative);
    const newest = this.#withRoom();
    newest.paths.add(relative);
    newest.added += 1;
    this.#arrivals.cancel(relative);
    this.#files.set(relative, { missing: false, identity, arming: 'new' });
    this.#use(newest, (chokidar) => chokidar.add(this.#absolute(relative)));
    return holder === undefined || !this.#generations.includes(holder);
  }

  /** A read found the watched file `relative` gone: if the watcher thought it watched a file there, it waits for the file's return instead. */
  sawGone(relative: string): void {
    this.#confirm(relative, null);
  }

  /**
   * patchd itself put a new file at the watched path `relative` (a commit renames its temp over
   * the file): the watch on the old file has ended, and is set again at once rather than when
   * its events come. The old watch closes now, so what it has yet to report is dropped: it is
   * about the file replaced, whose bytes are no longer at the path, and following it would cost a
   * second look at the path, a second watch set by chokidar on its own and a second hint. The new
   * watch hints once set, as any watch set again, so what happens before it is read. Left alone
   * when a watch is being set or the path looked at already: that work sets the watch after now.
   */
  replaced(relative: string): void {
    const file = this.#files.get(relative);
    const holder = this.#holderOf(relative);
    if (this.#closed || file === undefined || holder?.started === undefined || file.missing || file.arming !== undefined || this.#reattaching.has(relative)) return;
    file.identity = undefined;
    file.arming = 'again';
    const absolute = this.#absolute(relative);
    forget(holder.started, absolute);
    this.#use(holder, (chokidar) => chokidar.add(absolute));
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
    this.#arrivals.close();
    this.#files.clear();
    const closing = this.#generations.map((generation) => this.#stop(generation));
    this.#generations = [];
    await Promise.all(closing);
  }

  /** The newest generation, a new one when it is full; the oldest is closed when that makes too many. */
  #withRoom(): Generation {
    const newest = this.#generations[0];
    if (newest !== undefined && newest.added < this.#capacity) return newest;
    const fresh: Generation = { paths: new Set(), added: 0, chokidar: undefined, started: undefined, pending: [] };
    this.#generations.unshift(fresh);
    for (const retired of this.#generations.splice(this.#limit)) {
      this.#stop(retired).catch((error: unknown) => this.#options.onError(error));
      for (const relative of retired.paths) {
        this.#files.delete(relative);
        this.#arrivals.cancel(relative);
        this.#options.onDrop(relative);
      }
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
      (generation.started = this.#hearMissingFiles(
        // persistent: false — a watcher must never be what keeps the process alive.
        // ignoreInitial: false — the `add` of each path asked for tells that its watch is set.
        watch([], { ignoreInitial: false, persistent: false, followSymlinks: false, atomic: true })
          .on('all', (event, absolute) => this.#onEvent(event, absolute))
          .on('raw', (event, _name, details) => this.#onRaw(generation, event, details))
          .on('error', (error) => this.#onChokidarError(error)),
      )));
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

  /** A watched file chokidar found missing, where it may have meant to set its watch, has its watch set again (see the header). */
  #hearMissingFiles(chokidar: FSWatcher): FSWatcher {
    const handleError = chokidar._handleError.bind(chokidar);
    chokidar._handleError = (error) => {
      const missing = hasErrorCode(error, 'ENOENT', 'ENOTDIR') ? (error as NodeJS.ErrnoException).path : undefined;
      const relative = missing === undefined ? undefined : this.#relative(missing);
      if (relative === undefined || !this.#files.has(relative)) return handleError(error);
      this.#reattach(relative);
      return false;
    };
    return chokidar;
  }

  /** The system's limit on watches is told once: past it, every new file would say the same. */
  #onChokidarError(error: unknown): void {
    if (!hasErrorCode(error, 'ENOSPC', 'EMFILE')) return this.#options.onError(error);
    if (this.#limitTold) return;
    this.#limitTold = true;
    this.#options.onError(new WatchLimitError(error));
  }

  #onEvent(event: string, absolute: string): void {
    const relative = this.#relative(absolute);
    const file = this.#files.get(relative);
    if (file === undefined || !this.isWatching(relative)) return;
    if (event === 'unlink') this.#reattach(relative);
    if (event === 'add' && file.arming !== undefined) {
      const arming = file.arming;
      file.arming = undefined;
      if (arming === 'new') return this.#options.onActive(relative);
    }
    this.#options.onHint(relative);
  }

  /**
   * What the system told chokidar. A `rename` on a file's own watch is that file deleted or moved
   * away: its watch has ended, whatever chokidar makes of it. (Only the holder's watch counts: an
   * older generation's watch of a moved file is left to end with that generation.)
   */
  #onRaw(generation: Generation, event: string, details: unknown): void {
    const watched = (details as { readonly watchedPath?: unknown } | undefined)?.watchedPath;
    if (event !== 'rename' || typeof watched !== 'string') return;
    const relative = this.#relative(watched);
    if (generation.paths.has(relative)) this.#reattach(relative);
  }

  /** Sets the watch of `relative` again (see the header) if what a read `found` (an identity, or null: gone) is not what the watcher thinks it watches. */
  #confirm(relative: string, found: string | null | undefined): void {
    const file = this.#files.get(relative);
    if (file === undefined || found === undefined) return;
    const stale = found === null ? !file.missing : file.missing || (file.identity !== undefined && file.identity !== found);
    if (stale) this.#reattach(relative);
    else if (found !== null) file.identity ??= found;
  }

  /**
   * Looks at `relative` and sets its watch again, or makes it wait for the file's return. Once the
   * turn ends, so that the events of one change (a replaced file's watch reports a few at once)
   * make one look; one look at a time per file, and one more if asked for meanwhile.
   */
  #reattach(relative: string): void {
    if (this.#closed || !this.#files.has(relative)) return;
    const state = this.#reattaching.get(relative);
    if (state === 'looking') this.#reattaching.set(relative, 'again');
    if (state !== undefined) return;
    this.#reattaching.set(relative, 'due');
    setImmediate(() => this.#look(relative));
  }

  #look(relative: string): void {
    if (this.#closed) return;
    this.#reattaching.set(relative, 'looking');
    locate(this.#options.root, relative).then((place) => this.#reattachAt(relative, place)).catch((error: unknown) => this.#options.onError(error)).finally(() => {
      const again = this.#reattaching.get(relative) === 'again';
      this.#reattaching.delete(relative);
      if (again) this.#reattach(relative);
    });
  }

  #reattachAt(relative: string, place: Place): void {
    const holder = this.#holderOf(relative);
    const file = this.#files.get(relative);
    if (this.#closed || holder === undefined || file === undefined) return;
    if (place !== undefined && 'identity' in place) {
      this.#arrivals.cancel(relative);
      file.missing = false;
      file.identity = place.identity;
      file.arming = 'again';
      const absolute = this.#absolute(relative);
      // The hint comes with chokidar's `add`, once the watch is set (see the header).
      this.#use(holder, (chokidar) => {
        forget(chokidar, absolute);
        chokidar.add(absolute);
      });
      return;
    }
    file.missing = true;
    file.identity = undefined;
    if (place === undefined) this.#arrivals.cancel(relative);
    // Newly waiting: the file may have come back before that watch was active, so look once more.
    else if (this.#waitFor(relative, place)) this.#reattaching.set(relative, 'again');
    this.#options.onHint(relative);
  }

  /** True when `relative` newly waits on `place` (or that directory just went): the caller looks again. */
  #waitFor(relative: string, place: { readonly directory: string; readonly name: string }): boolean {
    try {
      return this.#arrivals.wait(relative, place.directory, place.name);
    } catch (error) {
      if (hasErrorCode(error, 'ENOENT', 'ENOTDIR')) return true;
      this.#onChokidarError(error);
      return false;
    }
  }

  #holderOf(relative: string): Generation | undefined {
    return this.#generations.find((generation) => generation.paths.has(relative));
  }

  #relative(absolute: string): string {
    return path.relative(this.#options.root, absolute).split(path.sep).join('/');
  }

  #absolute(relative: string): string {
    return path.join(this.#options.root, ...relative.split('/'));
  }
}

/**
 * Closes chokidar's watch of the file at `absolute` and forgets the file, so that the `add` to
 * follow sets a new watch (chokidar's add skips a file it lists in its directory). This is
 * `unwatch` less two things the watcher needs neither of: the path put on the ignore list (which
 * the add takes off again) and, when the file was the only one chokidar watched in its
 * directory, a read of the whole directory (chokidar's check, for its own bookkeeping, that the
 * directory is still there): at every commit of such a file, milliseconds for 20,000 entries.
 * Leans, as `_handleError` does (see the header), on members chokidar declares in its types but
 * names with an underscore; the tests that set a watch again fail if they change.
 */
function forget(chokidar: FSWatcher, absolute: string): void {
  chokidar._closeFile(absolute);
  chokidar._getWatchedDir(path.dirname(absolute)).items.delete(path.basename(absolute));
}
