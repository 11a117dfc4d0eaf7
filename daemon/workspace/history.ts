/**
 * Reading the undo records back: transactions by id, the window of a session diff, the list
 * of recent transactions, and the net change of a window (each touched path from its state
 * before the window's first transaction to what is on disk now).
 */
import type { FileOwner } from './files.ts';
import { mapLimited, OPEN_FILES_AT_ONCE } from './limited.ts';
import type { FileChange, LoadedRecord, RecordHeader, RecordName, RecordStore } from './records.ts';

/** What a path held: bytes and permission bits, or nothing. */
export type PathState = { readonly bytes: Uint8Array; readonly owner: FileOwner } | null;

/** One committed transaction, from the headers of its records. */
export interface TransactionEntry {
  readonly transactionId: string;
  readonly at: number;
  readonly status: 'applied' | 'partial';
  readonly format: string;
  readonly undoOf?: string | undefined;
  readonly files: readonly FileChange[];
}

/** A path's net change over a window; `fromPath` for a rename. */
export interface NetChange {
  readonly path: string;
  readonly fromPath?: string | undefined;
  readonly before: PathState;
  readonly after: PathState;
}

/** The records of one transaction, in commit order (several for an `atomic: false` patch). */
export async function recordsOf(store: RecordStore, transactionId: string): Promise<RecordName[]> {
  return (await store.list()).filter((name) => name.transactionId === transactionId);
}

/** The key after which a window starts: the last record of `transactionId`, or undefined when it has none. */
export async function keyOf(store: RecordStore, transactionId: string): Promise<string | undefined> {
  return (await recordsOf(store, transactionId)).at(-1)?.key;
}

/** The newest record's key ('' when there is none): what "since now" means. */
export async function latestKey(store: RecordStore): Promise<string> {
  return (await store.list()).at(-1)?.key ?? '';
}

/** Transactions newest first, at most `limit`. */
export async function listTransactions(store: RecordStore, limit: number): Promise<TransactionEntry[]> {
  const names = (await store.list()).reverse();
  const groups = new Map<string, RecordHeader[]>();
  const wanted = (name: RecordName) => groups.has(name.transactionId) || groups.size < limit;
  for (let start = 0; start < names.length; start += OPEN_FILES_AT_ONCE) {
    const batch = names.slice(start, start + OPEN_FILES_AT_ONCE);
    // Read ahead what this batch may need (groups only grow, so nothing needed is left out), then take them in order.
    const headers = await Promise.all(batch.map((name) => (wanted(name) ? store.header(name) : undefined)));
    batch.forEach((name, index) => {
      const header = headers[index];
      if (header === undefined || !wanted(name)) return;
      groups.set(name.transactionId, [header, ...(groups.get(name.transactionId) ?? [])]);
    });
  }
  return [...groups.values()].map(summarize);
}

function summarize(units: readonly RecordHeader[]): TransactionEntry {
  const first = units[0]!;
  const last = units.at(-1)!;
  const { format, undoOf, units: planned } = first.meta;
  return {
    transactionId: first.transactionId,
    at: last.at,
    status: units.length < planned ? 'partial' : 'applied',
    format,
    undoOf,
    files: units.flatMap((unit) => unit.meta.files),
  };
}

/** The records committed after `afterKey`, loaded, oldest first. */
export async function loadWindow(store: RecordStore, afterKey: string, compare: (a: string, b: string) => number): Promise<LoadedRecord[]> {
  const names = (await store.list()).filter((name) => afterKey === '' || compare(name.key, afterKey) > 0);
  const loaded = await mapLimited(names, (name) => store.load(name));
  return loaded.filter((record): record is LoadedRecord => record !== undefined);
}

/** Each path the window touched, and what it held before the window's first transaction that touched it. */
export interface WindowStart {
  readonly initial: ReadonlyMap<string, PathState>;
  /** Where each renamed path's content came from before the window (destination → origin). */
  readonly origins: ReadonlyMap<string, string>;
}

export function windowStart(records: readonly LoadedRecord[]): WindowStart {
  const initial = new Map<string, PathState>();
  // Whose content from before the window each touched path holds now: null for none (added,
  // deleted, or moved away). An untouched path holds its own.
  const lineage = new Map<string, string | null>();
  for (const { record, journal, meta } of records) {
    record.entries.forEach((entry, index) => {
      if (initial.has(entry.path)) return;
      const bytes = journal.preImages[index] ?? null;
      initial.set(entry.path, entry.before === null || bytes === null ? null : { bytes, owner: entry.before.owner });
    });
    for (const file of meta.files) {
      if (file.op === 'rename' && file.fromPath !== undefined) {
        lineage.set(file.path, lineage.has(file.fromPath) ? lineage.get(file.fromPath) ?? null : file.fromPath);
        lineage.set(file.fromPath, null);
      } else if (file.op !== 'update') {
        lineage.set(file.path, null);
      }
    }
  }
  const origins = new Map<string, string>();
  for (const [path, origin] of lineage) if (origin !== null && origin !== path) origins.set(path, origin);
  return { initial, origins };
}

/**
 * The net changes from the window's start to `current` (the disk now, for every path of
 * `start.initial`): a path that ends where it began drops out; a file that moved and whose old
 * path is gone (and whose new path was free) is a rename. Sorted by path.
 */
export function netChanges(start: WindowStart, current: ReadonlyMap<string, PathState>): NetChange[] {
  const changes: NetChange[] = [];
  const paired = new Set<string>();
  for (const [path, origin] of start.origins) {
    const before = start.initial.get(origin) ?? null;
    const after = current.get(path) ?? null;
    const movable = path !== origin && before !== null && after !== null && start.initial.get(path) === null && current.get(origin) === null;
    if (!movable) continue;
    changes.push({ path, fromPath: origin, before, after });
    paired.add(path).add(origin);
  }
  for (const [path, before] of start.initial) {
    const after = current.get(path) ?? null;
    if (paired.has(path) || sameState(before, after)) continue;
    changes.push({ path, before, after });
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function sameState(a: PathState, b: PathState): boolean {
  if (a === null || b === null) return a === b;
  return Buffer.from(a.bytes).equals(b.bytes);
}
