/**
 * Noticing changes made outside patchd. The monitor knows, per path, the sha256 patchd last
 * saw or wrote there; a watcher event only schedules a re-check, and the re-check (a read
 * under the path's lock, so never in the middle of one of our own commits) lets the hash
 * decide. chokidar drops every further change on a path within ~50 ms of an event it
 * reported, so each reported event must be followed by a read at least `settleMs` (past that
 * window) later: whatever the last write in a burst was, it is what that read sees. A re-check
 * already due when an event arrives may come too soon after it; then one more follows.
 *
 * A watch becomes active some time after it is asked for, so a newly watched file is re-checked
 * once too, `settleMs` after the watcher reports the watch set: a write between our read and the
 * watch is not missed, and one read covers it however late the watch is set. An event before
 * that re-check runs moves it to `settleMs` after the event, so that one read serves both (a
 * patch to a file read just before costs one read, not two). Only that first re-check moves: one
 * scheduled after an event never does, so events coming without pause cannot postpone the read
 * for ever. A watch never reported set (chokidar ignores some names, or failed to load) is
 * re-checked `UNREPORTED_WATCH_MS` after it was asked for, so that `idle()` never waits on a
 * report that may not come; if the report comes after that read, the file is read once more.
 *
 * Only files patchd has read, patched or cached are watched; a missing path is remembered
 * but not watched (watching it would mean watching, and reading, its whole directory).
 */
import { setMaxListeners } from 'node:events';
import type { ContentCache } from './cache.ts';
import type { LockTable } from './locks.ts';
import { LazyWatcher, type WatcherOptions } from './watcher.ts';

/** A file changed outside patchd: its new sha256, or null when it is gone. */
export interface FileChange {
  readonly path: string;
  readonly sha256: string | null;
}

export type ChangeListener = (change: FileChange) => void;

export interface ChangeMonitorOptions {
  readonly root: string;
  /** The workspace's locks, which commits take; paths are named as the monitor names them (normalised). */
  readonly locks: Pick<LockTable, 'acquire' | 'acquireBehind'>;
  readonly cache: ContentCache;
  /** The file's sha256 on disk now, null when it is missing or not a file, undefined when it cannot be read. */
  readonly readSha256: (path: string) => Promise<string | null | undefined>;
  readonly settleMs: number;
  readonly maxWatchedPaths: number;
  readonly onError: (error: unknown) => void;
  /** What tells of events on watched files: a lazy chokidar watcher unless a test drives it. */
  readonly watcher?: (options: WatcherOptions) => FileWatcher;
}

export type FileWatcher = Pick<LazyWatcher, 'watch' | 'sawGone' | 'replaced' | 'isWatching' | 'size' | 'close'>;

/** How long after a new watch is asked for its re-check runs even if the watch is never reported set. */
export const UNREPORTED_WATCH_MS = 1_000;

/** A re-check due; `afterHint` when it was scheduled for an event (or one more after it), not for a new watch. */
interface Recheck {
  readonly timer: NodeJS.Timeout;
  readonly afterHint: boolean;
}

export class ChangeMonitor {
  readonly #options: ChangeMonitorOptions;
  readonly #watcher: FileWatcher;
  /** Path → the sha256 patchd last saw or wrote (null: missing); absent: never seen. */
  readonly #known = new Map<string, string | null>();
  readonly #scheduled = new Map<string, Recheck>();
  /** Newly watched paths whose watch is not yet reported set, and whether a re-check has read them since. */
  readonly #arming = new Map<string, 'due' | 'read'>();
  /** Paths to watch once their lock is released (see `#track`). */
  readonly #unlocking = new Set<string>();
  /** Path → when (Date.now()) the watcher last hinted at it. */
  readonly #lastHint = new Map<string, number>();
  readonly #listeners = new Set<ChangeListener>();
  readonly #unwatchedListeners = new Set<(path: string) => void>();
  readonly #closing = new AbortController();
  #running = 0;
  #idleWaiters: (() => void)[] = [];

  constructor(options: ChangeMonitorOptions) {
    this.#options = options;
    // Every re-check waiting for its path's lock listens on this signal until granted: as many as paths re-checked at once, none left behind.
    setMaxListeners(0, this.#closing.signal);
    const createWatcher = options.watcher ?? ((watcherOptions) => new LazyWatcher(watcherOptions));
    this.#watcher = createWatcher({
      root: options.root,
      maxPaths: options.maxWatchedPaths,
      onHint: (path) => this.#hint(path),
      onActive: (path) => this.#active(path),
      onDrop: (path) => this.#drop(path),
      onError: options.onError,
    });
  }

  /**
   * A read made without the path's lock: it may be older than what is known, so it only fills a
   * gap. `identity` (`fileIdentity` in arrivals.ts) tells which file the read found, when known.
   */
  learn(path: string, sha256: string | null, identity?: string): void {
    if (!this.#known.has(path)) this.#known.set(path, sha256);
    this.#track(path, sha256, false, identity);
  }

  /** What a holder of the path's lock found on disk: a difference from what patchd knew is an outside change. */
  observe(path: string, sha256: string | null, identity?: string): void {
    this.#compare(path, sha256);
    this.#track(path, sha256, true, identity);
  }

  /** patchd itself wrote (sha256: a new file, renamed into place) or removed (null) the path, under its lock. */
  wrote(path: string, sha256: string | null): void {
    this.#known.set(path, sha256);
    this.#track(path, sha256, true);
    if (sha256 !== null) this.#watcher.replaced(path);
  }

  /** Subscribes to outside changes; returns the unsubscribe function. */
  onChange(listener: ChangeListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Hears of paths no longer watched (the least recently touched, past `maxWatchedPaths`): no change of theirs is told any more. */
  onUnwatched(listener: (path: string) => void): () => void {
    this.#unwatchedListeners.add(listener);
    return () => this.#unwatchedListeners.delete(listener);
  }

  /** Resolves once no re-check is scheduled or running. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Watched paths. */
  get watchedPaths(): number {
    return this.#watcher.size;
  }

  async close(): Promise<void> {
    this.#closing.abort();
    for (const { timer } of this.#scheduled.values()) clearTimeout(timer);
    this.#scheduled.clear();
    this.#arming.clear();
    this.#listeners.clear();
    this.#unwatchedListeners.clear();
    this.#wakeIfIdle();
    await this.#watcher.close();
  }

  /**
   * Watches a file patchd knows, newly or again (recency). Seen under its lock, a file not yet
   * watched is watched once that lock is released: the holder is about to commit to it more
   * often than not, and a watch started before the commit's rename would report it and have to
   * be started again on the new file (most of what watching costs). Nothing is missed meanwhile:
   * the commit re-checks what it read, and the re-check of a newly watched file covers the rest.
   * A watched file read as gone, or as another file than the watch was set on, has its watch set
   * again (see `watcher.ts`).
   */
  #track(path: string, sha256: string | null, locked: boolean, identity?: string): void {
    if (sha256 === null) {
      if (this.#watcher.isWatching(path)) this.#watcher.sawGone(path);
      else if (!this.#unlocking.has(path)) this.#known.delete(path);
    } else if (locked && !this.#watcher.isWatching(path)) {
      this.#watchOnceUnlocked(path);
    } else if (this.#watcher.watch(path, identity)) {
      this.#arming.set(path, 'due');
      // Moved to `settleMs` after the watch is reported set (`#active`); this bounds the wait for a report that never comes.
      this.#schedule(path, UNREPORTED_WATCH_MS, false);
    }
  }

  #watchOnceUnlocked(path: string): void {
    if (this.#unlocking.has(path) || this.#closing.signal.aborted) return;
    this.#unlocking.add(path);
    this.#options.locks.acquireBehind([path], this.#closing.signal).then((lease) => {
      lease.release();
      this.#unlocking.delete(path);
      const sha256 = this.#known.get(path);
      if (sha256 !== undefined && !this.#closing.signal.aborted) this.#track(path, sha256, false);
    }, () => this.#unlocking.delete(path)).finally(() => this.#wakeIfIdle());
  }

  #hint(path: string): void {
    this.#lastHint.set(path, Date.now());
    this.#options.cache.forget(path);
    const due = this.#scheduled.get(path);
    if (due !== undefined && !due.afterHint) {
      clearTimeout(due.timer);
      this.#scheduled.delete(path);
    }
    this.#schedule(path, this.#options.settleMs, true);
  }

  /**
   * The new watch of `path` is set: its re-check is due `settleMs` from now (unless an event
   * already scheduled one), or at once if a re-check already read the file before the watch was set.
   */
  #active(path: string): void {
    const arming = this.#arming.get(path);
    if (arming === undefined) return;
    this.#arming.delete(path);
    if (arming === 'read') return this.#schedule(path, 0, false);
    const due = this.#scheduled.get(path);
    if (due !== undefined && !due.afterHint) {
      clearTimeout(due.timer);
      this.#scheduled.delete(path);
    }
    this.#schedule(path, this.#options.settleMs, false);
  }

  /** A re-check of `path` after `delayMs` (the settle time), unless one is already due. */
  #schedule(path: string, delayMs: number, afterHint: boolean): void {
    if (this.#scheduled.has(path) || this.#closing.signal.aborted) return;
    // Not unref'd: a re-check due is work to finish (and `idle()` waits for it); `close` clears it.
    this.#scheduled.set(path, { timer: setTimeout(() => void this.#recheck(path), delayMs), afterHint });
  }

  /** After a read that began at `readAt`: one more re-check if a hint came too shortly before it for chokidar to report what followed. */
  #followUp(path: string, readAt: number): void {
    const hintedAt = this.#lastHint.get(path);
    if (hintedAt === undefined) return;
    const settledAt = hintedAt + this.#options.settleMs;
    if (settledAt > readAt) this.#schedule(path, settledAt - readAt, true);
    else this.#lastHint.delete(path);
  }

  async #recheck(path: string): Promise<void> {
    this.#scheduled.delete(path);
    this.#running += 1;
    try {
      await this.#readUnderLock(path);
    } catch (error) {
      this.#options.onError(error);
    } finally {
      this.#running -= 1;
      this.#wakeIfIdle();
    }
  }

  async #readUnderLock(path: string): Promise<void> {
    const lease = await this.#options.locks.acquire([path], this.#closing.signal).catch(() => undefined);
    if (lease === undefined) return;
    try {
      const readAt = Date.now();
      if (this.#arming.has(path)) this.#arming.set(path, 'read');
      const sha256 = await this.#options.readSha256(path);
      // Not a use of the file: tracked again, it could move to the watcher's newest generation, and be re-checked for that.
      if (sha256 !== undefined && this.#watcher.isWatching(path) && !this.#closing.signal.aborted) {
        this.#compare(path, sha256);
        if (sha256 === null) this.#watcher.sawGone(path);
      }
      this.#followUp(path, readAt);
    } finally {
      lease.release();
    }
  }

  /** Records what is on disk now; a difference from what patchd knew is an outside change. */
  #compare(path: string, sha256: string | null): void {
    const before = this.#known.get(path);
    this.#known.set(path, sha256);
    if (before !== undefined && before !== sha256) this.#emit({ path, sha256 });
  }

  #isIdle(): boolean {
    return this.#running === 0 && this.#scheduled.size === 0 && this.#unlocking.size === 0;
  }

  #wakeIfIdle(): void {
    if (this.#isIdle()) for (const wake of this.#idleWaiters.splice(0)) wake();
  }

  #drop(path: string): void {
    this.#known.delete(path);
    this.#arming.delete(path);
    this.#lastHint.delete(path);
    this.#options.cache.forget(path);
    this.#tell(this.#unwatchedListeners, path);
  }

  #emit(change: FileChange): void {
    this.#tell(this.#listeners, change);
  }

  #tell<T>(listeners: ReadonlySet<(value: T) => void>, value: T): void {
    for (const listener of listeners) {
      try {
        listener(value);
      } catch (error) {
        this.#options.onError(error);
      }
    }
  }
}
