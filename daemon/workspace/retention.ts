/**
 * Retention: undo records and trash are kept for the last `maxTransactions` transactions and
 * for `maxAgeMs`; past either, a transaction's records and trash folder are removed. Journals
 * recovery set aside (`journal/*.conflict`) and commit log segments kept aside as damaged
 * (`log/*.damaged`) go once set aside longer than `maxAgeMs` ago. Pruning reads and deletes
 * only inside the state dir — never the tree.
 *
 * Every process using a state root — daemons, `patchd mcp`, one-shot commands — prunes with the
 * retention recorded in it (`retention.json`), which `patchd serve --retain` sets: otherwise a
 * one-shot `patchd apply` would prune, with the default, records a daemon started with a longer
 * `--retain` keeps.
 */
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { removeAgedFiles } from './agedFiles.ts';
import { DAMAGED_SEGMENT_SUFFIX, type CommitLog } from './commitLog.ts';
import type { JournalStore } from './journal.ts';
import type { RecordName, RecordStore } from './records.ts';
import { trashRoot } from './trash.ts';

export interface Retention {
  readonly maxTransactions: number;
  readonly maxAgeMs: number;
}

export const DEFAULT_RETENTION: Retention = { maxTransactions: 1_000, maxAgeMs: 7 * 24 * 3_600_000 };

/** Records removed at once. */
const REMOVE_BATCH = 64;

/** A trash folder without a record younger than this may belong to a commit in flight: kept. */
const IN_FLIGHT_GRACE_MS = 3_600_000;

export interface PruneReport {
  readonly transactions: number;
  readonly trashFolders: number;
  readonly conflictJournals: number;
  readonly damagedLogSegments: number;
}

/**
 * Removes the records of expired transactions (after noting the newest of them: see
 * `RecordStore.notePruned`), then the trash folders no retained transaction owns.
 */
export async function pruneHistory(stateDir: string, records: RecordStore, journals: JournalStore, log: CommitLog, retention: Retention, now = Date.now()): Promise<PruneReport> {
  const byTransaction = new Map<string, RecordName[]>();
  for (const name of (await records.list()).reverse()) {
    const names = byTransaction.get(name.transactionId);
    if (names === undefined) byTransaction.set(name.transactionId, [name]);
    else names.push(name);
  }
  const kept = new Set<string>();
  const expired: RecordName[] = [];
  for (const [index, [id, names]] of [...byTransaction].entries()) {
    if (index < retention.maxTransactions && names.some((name) => now - name.at <= retention.maxAgeMs)) kept.add(id);
    else expired.push(...names);
  }
  // Transactions come newest record first, each with its records newest first: the first expired record is the newest removed.
  if (expired[0] !== undefined) await records.notePruned(expired[0].key);
  for (let start = 0; start < expired.length; start += REMOVE_BATCH) await Promise.all(expired.slice(start, start + REMOVE_BATCH).map((name) => records.remove(name)));
  const trashFolders = await pruneTrash(stateDir, kept, new Set(expired.map((name) => name.transactionId)), now);
  const conflictJournals = await journals.removeSetAsideOlderThan(retention.maxAgeMs, now);
  const damagedSegmentAge = (name: string) => (name.endsWith(DAMAGED_SEGMENT_SUFFIX) ? retention.maxAgeMs : undefined);
  const damagedLogSegments = (await removeAgedFiles(log.directory, damagedSegmentAge, now, (file) => rm(file, { force: true }))).length;
  return { transactions: byTransaction.size - kept.size, trashFolders, conflictJournals, damagedLogSegments };
}

/**
 * Removes the trash folders of the transactions just expired, and of those without any record
 * once past the in-flight grace (a commit in flight has its trash before its record).
 */
async function pruneTrash(stateDir: string, kept: ReadonlySet<string>, expired: ReadonlySet<string>, now: number): Promise<number> {
  const root = trashRoot(stateDir);
  let names: string[];
  try {
    names = await readdir(root);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names.filter((candidate) => !kept.has(candidate))) {
    const folder = path.join(root, name);
    if (!expired.has(name)) {
      const stats = await stat(folder).catch(() => undefined);
      if (stats === undefined || now - stats.mtimeMs < IN_FLIGHT_GRACE_MS) continue;
    }
    await rm(folder, { recursive: true, force: true });
    removed += 1;
  }
  return removed;
}

/** The longest age `--retain` takes: more milliseconds would not be a safe integer, which the recorded retention must be. */
const MAX_RETAIN_DAYS = Math.floor(Number.MAX_SAFE_INTEGER / (24 * 3_600_000));

/** `parseRetention`'s answer: the retention, or one sentence saying what is wrong with the value. */
export type ParsedRetention = { readonly ok: true; readonly value: Retention } | { readonly ok: false; readonly problem: string };

/**
 * `--retain`: comma-separated `N` (transactions kept) and `Nd` / `Nh` (age kept), either or
 * both (`500`, `3d`, `1000,7d`); the part not given keeps its default. Each part at most once:
 * `5000,100` is refused, not read as its last count (the value prunes history irrecoverably).
 */
export function parseRetention(value: string): ParsedRetention {
  const parts = new Map<'count' | 'age', { readonly text: string; readonly amount: number }>();
  for (const part of value.split(',')) {
    const text = part.trim();
    const match = /^(\d+)([dh]?)$/.exec(text);
    const kind = match?.[2] === '' ? 'count' : 'age';
    const amount = Number(match?.[1]) * (kind === 'count' ? 1 : (match?.[2] === 'd' ? 24 : 1) * 3_600_000);
    if (match === null || !Number.isSafeInteger(amount) || amount < 1) {
      return { ok: false, problem: `${JSON.stringify(text)} is neither a number of transactions (N, 1 or more) nor an age (Nd or Nh, 1 or more, at most ${MAX_RETAIN_DAYS} days)` };
    }
    const earlier = parts.get(kind);
    if (earlier !== undefined) {
      return { ok: false, problem: `${kind === 'count' ? 'the number of transactions' : 'the age'} is given twice (${earlier.text} and ${text})` };
    }
    parts.set(kind, { text, amount });
  }
  const { maxTransactions, maxAgeMs } = DEFAULT_RETENTION;
  return { ok: true, value: { maxTransactions: parts.get('count')?.amount ?? maxTransactions, maxAgeMs: parts.get('age')?.amount ?? maxAgeMs } };
}

/** The file in a state root that holds the retention in force there. */
export function retentionFile(stateRoot: string): string {
  return path.join(stateRoot, 'retention.json');
}

/** Makes `retention` the one every process using `stateRoot` prunes with (written whole: temp file, then rename). */
export async function recordRetention(stateRoot: string, retention: Retention): Promise<void> {
  await mkdir(stateRoot, { recursive: true, mode: 0o700 });
  const file = retentionFile(stateRoot);
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ maxTransactions: retention.maxTransactions, maxAgeMs: retention.maxAgeMs })}\n`, { mode: 0o600 });
  await rename(temporary, file);
}

/**
 * The retention in force under `stateRoot`: the recorded one, else the default. A record that
 * cannot be read or makes no sense throws — the caller then prunes nothing rather than guess.
 */
export async function retentionInForce(stateRoot: string): Promise<Retention> {
  const file = retentionFile(stateRoot);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return DEFAULT_RETENTION;
    throw error;
  }
  const recorded = parseRecord(text);
  if (recorded === undefined) throw new Error(`${file} does not hold a retention ({"maxTransactions": N, "maxAgeMs": N}); nothing is pruned until \`patchd serve --retain\` writes it again`);
  return recorded;
}

function parseRecord(text: string): Retention | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { maxTransactions, maxAgeMs } = (value ?? {}) as Record<string, unknown>;
  const positive = (amount: unknown): amount is number => Number.isSafeInteger(amount) && (amount as number) >= 1;
  return positive(maxTransactions) && positive(maxAgeMs) ? { maxTransactions, maxAgeMs } : undefined;
}
