/**
 * Reading the undo records back: transactions by id, the window of a session diff, the list
 * of recent transactions, and the net change of a window (each touched path from its state
 * before the window's first transaction to what is on disk now).
 *
 * A record that cannot be read whole is either still being written — its commit is in flight,
 * in this process or another sharing the state dir, and is passed over as not committed yet —
 * or damaged: then the list shows its transaction as damaged, and an undo or a session diff that
 * needs it is refused, naming it. The commit log tells the two apart (`InFlightRecords`); it is
 * read only when a record could not be.
 */
import path from 'node:path';
import { engineError, type EngineError } from '../engine/errors.ts';
import type { FileOwner } from './files.ts';
import { mapLimited, OPEN_FILES_AT_ONCE } from './limited.ts';
import { isDamaged, preImageDamage, type DamagedRecord, type FileChange, type LoadedRecord, type RecordHeader, type RecordName, type RecordStore } from './records.ts';

/** What a path held: bytes and permission bits, or nothing. */
export type PathState = { readonly bytes: Uint8Array; readonly owner: FileOwner } | null;

/** One committed transaction, from the headers of its records. */
export interface TransactionEntry {
  readonly transactionId: string;
  readonly at: number;
  /** `unknown`: no record of it has a header that can be read (and is its own), so not even how many parts it planned is known. */
  readonly status: 'applied' | 'partial' | 'unknown';
  readonly format: string;
  readonly undoOf?: string | undefined;
  readonly files: readonly FileChange[];
  /** Set when one of its records is damaged: which, and why (the other fields say what could be read). */
  readonly damaged?: string | undefined;
}

/** The names of the records whose commits are still in flight (`CommitLog.unsettledRecords`). */
export type InFlightRecords = () => Promise<ReadonlySet<string>>;

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

/**
 * Records read with `read`, once a damaged one is told apart from one being written: the commit
 * log is asked after every read (a record's intent is logged before the record is written, and
 * its done frame after), so one whose intent is unsettled then was being written, and is left out
 * (undefined) like one gone meanwhile; any other is read once more — its commit finished writing
 * it since, if anyone did — and stays damaged if it still is.
 */
async function settleDamaged<T extends RecordHeader>(
  found: readonly (T | DamagedRecord | undefined)[], read: (name: RecordName) => Promise<T | DamagedRecord | undefined>, inFlight: InFlightRecords,
): Promise<(T | DamagedRecord | undefined)[]> {
  if (!found.some((record) => record !== undefined && isDamaged(record))) return [...found];
  const writing = await inFlight();
  return mapLimited(found, async (record) => {
    if (record === undefined || !isDamaged(record)) return record;
    return writing.has(path.basename(record.file)) ? undefined : read(record);
  });
}

/**
 * Transactions newest first, at most `limit`; one with a damaged record is listed with `damaged`
 * set. Each listed record is checked as an undo would check it (whole, this workspace's and its
 * name's, every pre-image against its sha256); the cost is reading and hashing the records
 * listed, not the whole history.
 */
export async function listTransactions(store: RecordStore, limit: number, inFlight: InFlightRecords): Promise<TransactionEntry[]> {
  const names = (await store.list()).reverse();
  const groups = new Map<string, (RecordHeader | DamagedRecord)[]>();
  const wanted = (name: RecordName) => groups.has(name.transactionId) || groups.size < limit;
  const header = (name: RecordName) => store.header(name, true);
  for (let start = 0; start < names.length; start += OPEN_FILES_AT_ONCE) {
    const batch = names.slice(start, start + OPEN_FILES_AT_ONCE);
    // Read ahead what this batch may need (groups only grow, so nothing needed is left out), then take them in order.
    const headers = await settleDamaged(await Promise.all(batch.map((name) => (wanted(name) ? header(name) : undefined))), header, inFlight);
    batch.forEach((name, index) => {
      const found = headers[index];
      if (found === undefined || !wanted(name)) return;
      groups.set(name.transactionId, [found, ...(groups.get(name.transactionId) ?? [])]);
    });
  }
  return [...groups.values()].map(summarize);
}

/** A transaction from its records: what their headers say (a damaged record's too, when its header is whole and its own). */
function summarize(units: readonly (RecordHeader | DamagedRecord)[]): TransactionEntry {
  const metas = units.flatMap((unit) => (unit.meta === undefined ? [] : [unit.meta]));
  const damaged = units.filter(isDamaged);
  const first = metas[0];
  const entry: TransactionEntry = {
    transactionId: units[0]!.transactionId,
    at: units.at(-1)!.at,
    status: first === undefined ? 'unknown' : units.length < first.units ? 'partial' : 'applied',
    format: first?.format ?? 'unknown',
    undoOf: first?.undoOf,
    files: metas.flatMap((meta) => meta.files),
  };
  return damaged.length === 0 ? entry : { ...entry, damaged: damaged.map(describeDamage).join('; ') };
}

/** `undo record history/<name> <damage>`: the record's name, never the state dir's path. */
export function describeDamage(record: DamagedRecord): string {
  return `undo record history/${path.basename(record.file)} ${record.damage}`;
}

/**
 * The transaction's records, loaded and checked (every pre-image against its sha256), in commit
 * order; empty when it has none, or when one is still being written or gone (not committed, or
 * pruned meanwhile: the rest alone would be part of it); a damaged one, if any.
 */
export async function loadTransaction(store: RecordStore, transactionId: string, inFlight: InFlightRecords): Promise<LoadedRecord[] | DamagedRecord> {
  const names = await recordsOf(store, transactionId);
  const load = (name: RecordName) => store.load(name);
  const loaded = await settleDamaged(await mapLimited(names, load), load, inFlight);
  const damaged = loaded.find((record) => record !== undefined && isDamaged(record));
  if (damaged !== undefined) return damaged as DamagedRecord;
  return loaded.every((record) => record !== undefined) ? loaded as LoadedRecord[] : [];
}

/**
 * The records committed after `afterKey`, loaded, oldest first; a damaged one stops the load
 * (returned instead). Pre-images are checked against their sha256 where the window uses them
 * (`windowStart`), not here: most are not.
 */
export async function loadWindow(
  store: RecordStore, afterKey: string, compare: (a: string, b: string) => number, inFlight: InFlightRecords,
): Promise<LoadedRecord[] | DamagedRecord> {
  const names = (await store.list()).filter((name) => afterKey === '' || compare(name.key, afterKey) > 0);
  const load = (name: RecordName) => store.load(name, false);
  const loaded = await settleDamaged(await mapLimited(names, load), load, inFlight);
  const damaged = loaded.find((record) => record !== undefined && isDamaged(record));
  if (damaged !== undefined) return damaged as DamagedRecord;
  return loaded.filter((record): record is LoadedRecord => record !== undefined);
}

/** Refuses an undo or a session diff over a damaged record: `io_error`, naming its transaction and the record. */
export function damagedRecordError(record: DamagedRecord, consequence: string): EngineError {
  const message = `The ${describeDamage(record)}: it belongs to transaction ${record.transactionId}, ${consequence}; nothing was changed.`;
  const hint = 'An undo record in patchd\'s state dir is damaged (a disk fault, or an edit by hand). That transaction cannot be undone, nor a session diff told over it: '
    + 'ask for the session diff since it (or a later transaction), and restore its files by other means (version control).';
  return { ...engineError('io_error', message), hint };
}

/** Each path the window touched, and what it held before the window's first transaction that touched it. */
export interface WindowStart {
  readonly initial: ReadonlyMap<string, PathState>;
  /** Where each renamed path's content came from before the window (destination → origin). */
  readonly origins: ReadonlyMap<string, string>;
}

/** The window's start; or the record one of whose pre-images it needs fails its sha256, as damaged. */
export function windowStart(records: readonly LoadedRecord[]): WindowStart | DamagedRecord {
  const initial = new Map<string, PathState>();
  // Whose content from before the window each touched path holds now: null for none (added,
  // deleted, or moved away). An untouched path holds its own.
  const lineage = new Map<string, string | null>();
  for (const loaded of records) {
    const { record, journal, meta } = loaded;
    for (const [index, entry] of record.entries.entries()) {
      if (initial.has(entry.path)) continue;
      const damage = preImageDamage(loaded, index);
      if (damage !== undefined) return { file: loaded.file, key: loaded.key, at: loaded.at, transactionId: loaded.transactionId, unit: loaded.unit, damage };
      const bytes = journal.preImages[index] ?? null;
      initial.set(entry.path, entry.before === null || bytes === null ? null : { bytes, owner: entry.before.owner });
    }
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
