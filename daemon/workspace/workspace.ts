/**
 * A workspace: one root directory that patchd owns the disk of. Guards paths, reads
 * snapshots for the engine (through a content cache), locks paths, commits plans atomically,
 * notices changes made outside patchd, recovers after a crash.
 *
 * Opening costs the same for ten files or a million: the tree is never walked, and nothing is
 * watched until a file is read or written.
 *
 * State dir layout (outside the tree, mode 0700; see `stateDir.ts`):
 *   log/<pid>-<nonce>-<seq>.log                          the commit log: intents and done marks (see commitLog.ts)
 *   log/*.log.damaged                                    segments found damaged, kept for the age retention keeps
 *   journal/orphan-<pid>-<nonce>-<frame>-<record name>.journal   commits handed over for recovery (see journal.ts)
 *   journal/*.conflict                                   journals recovery could not fully apply, kept for the age retention keeps
 *   trash/<transactionId>/<workspace path>               deleted and moved-away files
 *   history/<time>-<pid>.<nonce>-<seq>-<transactionId>.<unit>.record   undo records (see records.ts)
 *   recovery/<pid>-<nonce>-<n>.claim                     held by the one open recovering what a dead process left (see recoveryClaim.ts)
 */
import { lstatSync, realpathSync } from 'node:fs';
import nodePath from 'node:path';
import { engineError, type EngineError } from '../engine/errors.ts';
import { normalizePatchPath } from '../engine/paths.ts';
import { fail, ok, type FileSnapshot, type Plan, type Result } from '../engine/types.ts';
import { fileIdentity } from './arrivals.ts';
import { BOOT_ID } from './boot.ts';
import { ContentCache, DEFAULT_CACHE_OPTIONS, type ContentCacheOptions } from './cache.ts';
import { ChangeMonitor, type ChangeListener } from './changes.ts';
import { checkReplacedDirectories, commitPlan, type CommitOptions, type CommitOutcome } from './commit.ts';
import { CommitLog, type DamagedSegment } from './commitLog.ts';
import type { CommitHooks, WorkspaceContext } from './context.ts';
import { nodeDiskCalls, type DiskCalls } from './diskCalls.ts';
import { DirectorySyncer, isPresent } from './durable.ts';
import { decodeUtf8Text, readGuardedEntries, sha256Hex, toSnapshot, versionFromSha256, type DiskEntry, type GuardedEntries } from './files.ts';
import {
  damagedRecordError, keyOf, latestKey, listTransactions, loadTransaction, loadWindow, netChanges, windowStart, type InFlightRecords, type NetChange,
  type PathState, type TransactionEntry,
} from './history.ts';
import { PathGuard } from './guard.ts';
import { JournalStore } from './journal.ts';
import { LockTable, type LockLease } from './locks.ts';
import { probePaths, type ProbeAnswer } from './probe.ts';
import { CachedReader } from './reads.ts';
import { compareKeys, isDamaged, RecordStore, type LoadedRecord } from './records.ts';
import { recoverAbandonedJournals, type RecoveryReport } from './recovery.ts';
import { underRecoveryClaim } from './recoveryClaim.ts';
import { Pruner } from './pruner.ts';
import { DEFAULT_RETENTION, pruneHistory, type Retention } from './retention.ts';
import { Settling } from './settling.ts';
import { prepareStateDir, resolveRoot, unusable } from './stateDir.ts';
import { STATE_DIR_REMADE, StateDirRemaker } from './stateDirRemade.ts';
import { DEFAULT_MAX_WATCHED_PATHS } from './watcher.ts';

export { sha256Hex, versionFromSha256 } from './files.ts';
export { StateDirError, WorkspaceRootError, stateDirFor } from './stateDir.ts';
export type { CommitOptions, CommitOutcome } from './commit.ts';
export type { CommitHooks } from './context.ts';
export { DAMAGED_LOG_SEGMENT, type DamagedSegment } from './commitLog.ts';
export type { FileChange } from './changes.ts';
export type { LockLease } from './locks.ts';
export type { RecoveryReport } from './recovery.ts';
export type { NetChange, PathState, TransactionEntry } from './history.ts';
export type { LoadedRecord } from './records.ts';
export { DEFAULT_RETENTION, recordRetention, retentionInForce, type Retention } from './retention.ts';

export interface WorkspaceOptions {
  /** Allow paths with a `.git` component. Off by default. */
  readonly allowGitDir?: boolean;
  /** Where trash and journals live; must be outside the root. */
  readonly stateDir?: string | undefined;
  /** The state root holding every workspace's state dir (`stateDir`'s parent): no root may lie inside it. */
  readonly stateRoot?: string | undefined;
  /** Fault injection for tests. */
  readonly hooks?: CommitHooks;
  /** The system calls of durable writes; tests record or fail them (see `diskCalls.ts`). */
  readonly disk?: DiskCalls;
  readonly cache?: ContentCacheOptions;
  /** Most files watched at once (each costs an inotify watch). */
  readonly maxWatchedPaths?: number;
  /** How long after a watcher event the file is re-read (past chokidar's ~50 ms drop window). */
  readonly settleMs?: number;
  /** Faults of the watcher (and of background pruning), which must not stop the workspace. */
  readonly onError?: (error: unknown) => void;
  /** A segment of the commit log that `open` found damaged, recovered past the damage and kept aside (see `commitLog.ts`). */
  readonly onDamagedLogSegment?: ((damaged: DamagedSegment) => void) | undefined;
  /** How long `open` waits for another process's recovery of the same state dir (`recoveryClaim.ts`); two minutes by default. */
  readonly recoveryWaitMs?: number | undefined;
  /**
   * How many transactions, and for how long, undo records and trash are kept (default: 1,000 and
   * 7 days) — or where to look that up before each prune (e.g. `retentionInForce`); when the
   * lookup throws, that prune is skipped and the error goes to `onError`.
   */
  readonly retention?: Retention | (() => Promise<Retention>) | undefined;
  /** The machine's boot (`boot.ts`); tests pretend a reboot with another. */
  readonly bootId?: string | null;
}

export interface SnapshotOptions {
  /** Read every path from disk, bypassing the cache. */
  readonly fresh?: boolean | undefined;
  /** The caller holds the locks of these paths: what is found is authoritative (an outside change is reported). */
  readonly locked?: boolean | undefined;
}

export interface FileRead {
  readonly path: string;
  /** UTF-8 text; a BOM is kept, so it re-encodes to exactly the bytes `sha256` hashes. */
  readonly content: string;
  /** Lowercase hex sha256 of the file's bytes. */
  readonly sha256: string;
  /** `sha256:` + the first 16 hex digits of `sha256`. */
  readonly version: string;
}

const DEFAULT_SETTLE_MS = 75;

export class Workspace {
  readonly root: string;
  readonly stateDir: string;
  /** Commits a killed daemon left half-done, rolled back to their pre-image by `open`. */
  readonly recovered: readonly RecoveryReport[];
  /** Commit log segments `open` found damaged (also told to `onDamagedLogSegment`). */
  readonly damagedLog: readonly DamagedSegment[];
  readonly #context: WorkspaceContext;
  readonly #locks: LockTable;
  readonly #cache: ContentCache;
  readonly #reader: CachedReader;
  readonly #monitor: ChangeMonitor;
  readonly #inFlight = new Set<Promise<CommitOutcome>>();
  /** The last record committed before this process first opened the root: where `sessionChanges()` starts by default. */
  readonly #sessionStart: string;
  readonly #pruner: Pruner;
  readonly #remaker: StateDirRemaker;
  /** Tells a record being written from a damaged one (see `history.ts`). */
  readonly #recordsInFlight: InFlightRecords;
  #closed = false;

  private constructor(
    context: WorkspaceContext, locks: LockTable, remaker: StateDirRemaker, { recovered, damagedLog }: Recovered, sessionStart: string, options: WorkspaceOptions,
    retention: Retention | undefined,
  ) {
    this.root = context.root;
    this.#locks = locks;
    this.#sessionStart = sessionStart;
    this.stateDir = context.stateDir;
    this.recovered = recovered;
    this.damagedLog = damagedLog;
    this.#context = context;
    this.#cache = new ContentCache(options.cache ?? DEFAULT_CACHE_OPTIONS);
    this.#reader = new CachedReader(context.guard, this.#cache);
    this.#monitor = new ChangeMonitor({
      root: context.root,
      locks,
      cache: this.#cache,
      readSha256: (path) => this.#reader.sha256Now(path),
      settleMs: options.settleMs ?? DEFAULT_SETTLE_MS,
      maxWatchedPaths: options.maxWatchedPaths ?? DEFAULT_MAX_WATCHED_PATHS,
      onError: options.onError ?? (() => {}),
    });
    this.#pruner = new Pruner(() => prune(context, options), retention, options.onError ?? (() => {}));
    this.#remaker = remaker;
    this.#recordsInFlight = () => context.log.unsettledRecords();
  }

  /** Realpaths the root once, prepares the state dir and rolls back journals a killed daemon left. */
  static async open(root: string, options: WorkspaceOptions = {}): Promise<Workspace> {
    const realRoot = await resolveRoot(root, options.stateRoot);
    const stateDir = await prepareStateDir(realRoot, options.stateDir);
    const disk = options.disk ?? nodeDiskCalls;
    const syncer = new DirectorySyncer(disk);
    const journals = new JournalStore(stateDir, syncer, disk);
    const records = new RecordStore(stateDir, realRoot, syncer, disk);
    const log = new CommitLog(stateDir, syncer, disk, records);
    await Promise.all([journals.prepare(), records.prepare(), log.prepare()]).catch((error: unknown) => Promise.reject(unusable(stateDir, error)));
    const guard = new PathGuard(realRoot, { allowGitDir: options.allowGitDir });
    const locks = new LockTable((path) => lockKey(realRoot, path));
    const onError = options.onError ?? (() => {});
    const remaker = new StateDirRemaker({ root: realRoot, stateDir, journals, records, log }, onError);
    // A reported commit that could not write its record (its folder removed, say) repairs the state dir before its path's next commit.
    const settling = new Settling((paths, until) => locks.holdUntil(paths, until), async (error) => {
      onError(error);
      await remaker.remakeIfRemoved();
    });
    const context: WorkspaceContext = {
      root: realRoot, stateDir, guard, syncer, journals, log, records, disk, hooks: options.hooks ?? {}, settling, bootId: options.bootId === undefined ? BOOT_ID : options.bootId,
    };
    const recovered = await recover(context, options);
    const retention = await prune(context, options);
    return new Workspace(context, locks, remaker, recovered, await sessionStartOf(context), options, retention);
  }

  /** Guards every path, then reads each: file bytes, missing, or directory. Keys are normalised paths. */
  async snapshot(paths: readonly string[], options: SnapshotOptions = {}): Promise<Result<Map<string, FileSnapshot>>> {
    this.#refuseIfClosed();
    const entries = await this.#reader.read(paths, options);
    if (!entries.ok) return entries;
    const gone = this.#rootGoneIfMissing(entries.value);
    if (gone !== undefined) return fail(gone);
    const snapshots = new Map<string, FileSnapshot>();
    for (const [path, { entry }] of entries.value) {
      this.#noteRead(path, entry, options.locked === true);
      snapshots.set(path, toSnapshot(entry));
    }
    return ok(snapshots);
  }

  /** The answer to the engine's `pathProbe`: which of `paths` are regular files, and which the guard refuses (nothing read). */
  probePaths(paths: readonly string[]): ProbeAnswer {
    this.#refuseIfClosed();
    return probePaths(this.#context.guard, paths);
  }

  /** `file/read`: not_found, binary_file, limit_exceeded, path_escape, permission_denied as errors. */
  async read(path: string): Promise<Result<FileRead>> {
    this.#refuseIfClosed();
    const entries = await this.#reader.read([path]);
    if (!entries.ok) return entries;
    const gone = this.#rootGoneIfMissing(entries.value);
    if (gone !== undefined) return fail(gone);
    const [found] = entries.value;
    if (found === undefined) return fail(engineError('not_found', `${path} does not exist.`, { path }));
    const [relative, { entry }] = found;
    this.#noteRead(relative, entry, false);
    if (entry.kind === 'directory') return fail(engineError('is_directory', `${relative} is a directory, not a file.`, { path: relative }));
    if (entry.kind !== 'file') return fail(engineError('not_found', `${relative} does not exist.`, { path: relative }));
    const content = decodeUtf8Text(entry.bytes);
    if (content === undefined) return fail(engineError('binary_file', `${relative} is binary or not UTF-8 text.`, { path: relative }));
    const sha256 = sha256Hex(entry.bytes);
    return ok({ path: relative, content, sha256, version: versionFromSha256(sha256) });
  }

  /** Locks the paths for one patch; see `locks.ts` for the order guarantees and `lockKey` for the names. */
  lock(paths: readonly string[], signal?: AbortSignal): Promise<LockLease> {
    return this.#locks.acquire(paths.map(normalizedKey), signal);
  }

  /** Commits a plan made from `snapshots` (see `CommitOptions`); the caller should hold the paths' locks. */
  async commit(plan: Plan, options: CommitOptions): Promise<CommitOutcome> {
    this.#refuseIfClosed();
    const running = commitPlan(this.#context, plan, options).catch((error: unknown): CommitOutcome => {
      // commitPlan returns failures as data; this only catches a bug, so the caller still gets an outcome.
      const message = `The commit failed unexpectedly: ${error instanceof Error ? error.message : String(error)}.`;
      return { status: 'rejected', error: engineError('internal_error', message) };
    });
    this.#inFlight.add(running);
    try {
      const outcome = await running;
      if (outcome.status !== 'rejected') {
        this.#noteCommitted(plan, outcome.committed);
        this.#pruner.committed();
      }
      if (outcome.status === 'applied' || outcome.error.code !== 'io_error' || !(await this.#remaker.remakeIfRemoved())) return outcome;
      return { ...outcome, error: { ...outcome.error, message: `${outcome.error.message} ${STATE_DIR_REMADE}` } };
    } finally {
      this.#inFlight.delete(running);
    }
  }

  /**
   * Refuses a plan made from `snapshots` that replaces a directory by a file while the directory
   * holds anything the plan does not take away, as its commit would (`replacedDirectories.ts`);
   * `undoOf`: the plan is the undo of that transaction (its refusal says so).
   */
  async checkReplacedDirectories(plan: Pick<Plan, 'files'>, snapshots: ReadonlyMap<string, FileSnapshot>, undoOf?: string): Promise<Result<void>> {
    this.#refuseIfClosed();
    return checkReplacedDirectories(this.#context, plan, snapshots, undoOf);
  }

  /**
   * Committed transactions, newest first, at most `limit` (from the undo records: all processes,
   * across restarts); one with a damaged record is listed with `damaged` saying so.
   */
  async transactions(limit: number): Promise<TransactionEntry[]> {
    this.#refuseIfClosed();
    await this.#historySettled();
    return listTransactions(this.#context.records, limit, this.#recordsInFlight);
  }

  /**
   * The undo records of one committed transaction, in commit order, every pre-image checked
   * against its sha256; none when the id is unknown or past retention, or a record of it is
   * still being written or was removed by retention while loading (undoing the others alone
   * would undo part of it). `io_error` naming the transaction and the record when one is damaged.
   */
  async recordsOf(transactionId: string): Promise<Result<LoadedRecord[]>> {
    this.#refuseIfClosed();
    await this.#historySettled();
    const loaded = await loadTransaction(this.#context.records, transactionId, this.#recordsInFlight);
    if (!isDamaged(loaded)) return ok(loaded);
    return fail(damagedRecordError(loaded, 'so undoing it could write wrong bytes (or undo part of it)'));
  }

  /**
   * The net change of every transaction committed after `since` (exclusive; `null`: every
   * retained one; absent: since this process first opened the root), from each touched path's
   * state before the first of them to the disk now. Undefined when `since` names no transaction.
   */
  async sessionChanges(since?: string | null): Promise<Result<NetChange[]> | undefined> {
    this.#refuseIfClosed();
    await this.#historySettled();
    const afterKey = since === undefined ? this.#sessionStart : since === null ? '' : await keyOf(this.#context.records, since);
    if (afterKey === undefined) return undefined;
    const records = await loadWindow(this.#context.records, afterKey, compareKeys, this.#recordsInFlight);
    // Retention removes oldest first: a window whose start it passed lost its first transactions (every retained one, `null`, lost none).
    // Looked up after the load: retention notes a removal before making it, so one that took records from under the load shows here.
    const pruned = since === null ? undefined : await this.#context.records.prunedThrough();
    if (pruned !== undefined && compareKeys(pruned, afterKey) > 0) {
      const message = 'The first transactions of this window are past retention (pruned), so its net change cannot be told; ask for a window that starts at a retained transaction (transaction/list lists them).';
      return fail(engineError('unknown_transaction', message));
    }
    const unreadable = 'so the net change of a window holding it cannot be told';
    if (isDamaged(records)) return fail(damagedRecordError(records, unreadable));
    const unrecorded = unrecordedCommits(this.#context.settling.retrying);
    if (unrecorded !== undefined) return fail(unrecorded);
    const start = windowStart(records);
    if (isDamaged(start)) return fail(damagedRecordError(start, unreadable));
    const entries = await readGuardedEntries(this.#context.guard, [...start.initial.keys()]);
    if (!entries.ok) return entries;
    const gone = this.#rootGoneIfMissing(entries.value);
    if (gone !== undefined) return fail(gone);
    const current = new Map<string, PathState>();
    for (const [path, { entry }] of entries.value) current.set(path, entry.kind === 'file' ? { bytes: entry.bytes, owner: entry.owner } : null);
    return ok(netChanges(start, current));
  }

  /** Calls `listener` when a file patchd read or wrote changes outside patchd; returns the unsubscribe function. */
  onExternalChange(listener: ChangeListener): () => void {
    return this.#monitor.onChange(listener);
  }

  /** Hears of files no longer watched (the least recently touched beyond `maxWatchedPaths`): their changes go untold from then on. */
  onUnwatched(listener: (path: string) => void): () => void {
    return this.#monitor.onUnwatched(listener);
  }

  /** Resolves once every outside change noticed so far has been re-checked (and reported). */
  changesSettled(): Promise<void> {
    return this.#monitor.idle();
  }

  /** How many files are watched, and how many are cached (diagnostics, benchmarks). */
  get usage(): { readonly watchedPaths: number; readonly cachedFiles: number; readonly cachedBytes: number } {
    return { watchedPaths: this.#monitor.watchedPaths, cachedFiles: this.#cache.size, cachedBytes: this.#cache.bytes };
  }

  /** Resolves once every commit reported applied so far is durable and recorded: a small one-file commit is reported before (see `transaction.ts`). */
  settled(): Promise<void> {
    return this.#context.settling.settled();
  }

  /**
   * Before a history query: every commit recorded, and no prune running — a list must not name a
   * transaction a prune is removing (asked about next, it would be unknown), nor a session diff
   * of every retained transaction start at one.
   */
  async #historySettled(): Promise<void> {
    await this.settled();
    await this.#pruner.idle();
  }

  /** True once `close()` was called: every read, commit and history query then throws `WorkspaceClosedError`. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Refuses new work, waits for commits in flight (so none is left half-done), stops watching. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#inFlight]);
    await this.#context.settling.drain();
    await this.#pruner.close();
    await this.#monitor.close();
    this.#cache.clear();
    await this.#context.log.close();
    await this.#context.syncer.close();
  }

  #refuseIfClosed(): void {
    if (this.#closed) throw new WorkspaceClosedError();
  }

  /**
   * A path read as missing may be missing because the root itself was removed or moved while
   * open; "x does not exist", with a hint to add it, would then send the caller the wrong way.
   */
  #rootGoneIfMissing(entries: GuardedEntries): EngineError | undefined {
    let anyMissing = false;
    for (const { entry } of entries.values()) anyMissing ||= entry.kind === 'missing';
    if (!anyMissing || isPresent(this.root)) return undefined;
    const message = `The workspace root ${this.root} no longer exists (removed or moved while the workspace was open); nothing was written.`;
    return { ...engineError('not_found', message), hint: 'Open the workspace again where its root is now (workspace/open); this one cannot read or write any file.' };
  }

  #noteRead(path: string, entry: DiskEntry, locked: boolean): void {
    const sha256 = entry.kind === 'file' ? sha256Hex(entry.bytes) : null;
    const identity = entry.kind === 'file' ? fileIdentity(entry.stamp) : undefined;
    if (locked) this.#monitor.observe(path, sha256, identity);
    else this.#monitor.learn(path, sha256, identity);
  }

  #noteCommitted(plan: Plan, committed: readonly string[]): void {
    for (const file of plan.files.filter((planned) => committed.includes(planned.path))) {
      for (const [path, after] of [[file.path, file.after], [file.fromPath, null]] as const) {
        if (path === undefined) continue;
        const key = normalizedKey(path);
        this.#cache.forget(key);
        this.#monitor.wrote(key, after === null ? null : sha256Hex(after));
      }
    }
  }
}

/**
 * A commit reported applied whose record could not be written (it is retried) is missing from
 * the window, which would tell a net change without it: refused, saying why. (A record cut
 * short — another process's commit still in flight, or one a crash left to recovery — is passed
 * over: that commit is not done.)
 */
function unrecordedCommits(count: number): EngineError | undefined {
  if (count === 0) return undefined;
  const message = `${count} applied commit${count === 1 ? ' has' : 's have'} no undo record yet (it could not be written; the daemon log says why), so the net change cannot be told; nothing was changed.`;
  return { ...engineError('io_error', message), hint: "Ask again once the state directory's filesystem has room: patchd writes the missing records before each session diff." };
}

/**
 * Finishes what dead processes left in the state dir (log segments, then the journals they hand
 * over), under the state dir's recovery claim; an open with nothing to recover takes none.
 */
async function recover(context: WorkspaceContext, options: WorkspaceOptions): Promise<Recovered> {
  const { log, journals } = context;
  if (!(await log.hasAbandoned()) && (await journals.listAbandoned()).length === 0) return { recovered: [], damagedLog: [] };
  return underRecoveryClaim(context.stateDir, async () => {
    const damagedLog = await log.recoverAbandoned(journals);
    for (const damaged of damagedLog) options.onDamagedLogSegment?.(damaged);
    return { recovered: await recoverAbandonedJournals(context), damagedLog };
  }, options.recoveryWaitMs);
}

/** What `recover` did: the commits it finished, and the log segments it found damaged. */
interface Recovered {
  readonly recovered: readonly RecoveryReport[];
  readonly damagedLog: readonly DamagedSegment[];
}

/**
 * Prunes with the retention of `options`, and returns it; skipped (reported to `onError`) when it
 * cannot be looked up. After the commits reported so far have their records: a small one-file
 * commit is reported before its record is written, and a prune that did not count it would keep
 * one transaction too many.
 */
async function prune({ stateDir, records, journals, log, settling }: WorkspaceContext, { retention = DEFAULT_RETENTION, onError }: WorkspaceOptions): Promise<Retention | undefined> {
  let kept: Retention;
  try {
    kept = typeof retention === 'function' ? await retention() : retention;
  } catch (error) {
    onError?.(error);
    return undefined;
  }
  await settling.settled();
  await pruneHistory(stateDir, records, journals, log, kept);
  return kept;
}

/** Session starts per state dir, kept for the life of the process: a root closed and opened again keeps its first start. */
const sessionStarts = new Map<string, Promise<string>>();

function sessionStartOf(context: WorkspaceContext): Promise<string> {
  let start = sessionStarts.get(context.stateDir);
  if (start === undefined) {
    start = latestKey(context.records);
    sessionStarts.set(context.stateDir, start);
    start.catch(() => sessionStarts.delete(context.stateDir));
  }
  return start;
}

function normalizedKey(path: string): string {
  const normalized = normalizePatchPath(path);
  return normalized.ok ? normalized.value : path;
}

/**
 * The name a path is locked under: normalised, with its directory resolved through symlinked
 * directories inside the root (which the guard allows), so two spellings of one file share a
 * lock. A directory that does not exist yet keeps its spelling. `root` must be a real path.
 */
export function lockKey(root: string, path: string): string {
  const key = normalizedKey(path);
  const parent = nodePath.posix.dirname(key);
  if (parent === '.' || !passesThroughLink(root, parent)) return key;
  try {
    const real = realpathSync.native(nodePath.join(root, parent));
    const relative = nodePath.relative(root, real).split(nodePath.sep).join('/');
    return relative === '' ? nodePath.posix.basename(key) : `${relative}/${nodePath.posix.basename(key)}`;
  } catch {
    return key;
  }
}

/**
 * Whether one of the directories of `parent` (workspace-relative) is a symbolic link, up to the
 * first that does not exist. Without one, the spelling is already the real path: an lstat per
 * directory below the root instead of a realpath of the whole path (a readlink per component,
 * the root's included). A patched path's key is worked out twice: for the patch, and for the
 * re-check of its watch (the start of the watch and the hold of a commit until it settles take
 * the key the patch's request locked: see `LockTable`).
 */
function passesThroughLink(root: string, parent: string): boolean {
  let current = root;
  try {
    for (const part of parent.split('/')) {
      current = nodePath.join(current, part);
      const stats = lstatSync(current, { throwIfNoEntry: false });
      if (stats === undefined) return false;
      if (stats.isSymbolicLink()) return true;
    }
  } catch {
    // A parent that is a file, or a directory we may not read: realpath would fail too, and the spelling stands.
    return false;
  }
  return false;
}

/**
 * Work asked of a workspace after it was closed — a request that waited (for a lock, the pool)
 * while its workspace was closed under it. Thrown, not returned as a patch error: no receipt
 * code fits, and the server answers it as `unknown_workspace` (see `handlers.ts`).
 */
export class WorkspaceClosedError extends Error {
  override readonly name = 'WorkspaceClosedError';
  constructor() {
    super('The workspace was closed.');
  }
}
