/**
 * Committing a plan: turn its files into per-path effects, guard and re-read every path,
 * check the disk still holds the snapshot the plan was made from, then run one atomic
 * transaction (atomic: true) or one per file in plan order (atomic: false).
 */
import { randomUUID } from 'node:crypto';
import { engineError, type EngineError } from '../engine/errors.ts';
import { normalizePatchPath } from '../engine/paths.ts';
import { fail, ok, type FileSnapshot, type Plan, type PlannedFile, type Result } from '../engine/types.ts';
import type { WorkspaceContext } from './context.ts';
import { tempPathFor } from './durable.ts';
import { entryEquals, readGuardedEntries, sha256Hex, type DiskEntry, type FileOwner, type GuardedEntries } from './files.ts';
import type { RecordMeta } from './records.ts';
import { groupNested } from './nestedUnits.ts';
import { directoriesToRemove } from './replacedDirectories.ts';
import { removeEmptiedDirectories } from './tidy.ts';
import { runTransaction, type Step, type TransactionIds } from './transaction.ts';
import { trashPathFor } from './trash.ts';

export type CommitOutcome =
  | { readonly status: 'applied'; readonly committed: readonly string[]; readonly createdDirs: readonly string[]; readonly transactionId: string }
  | { readonly status: 'rejected'; readonly error: EngineError }
  | { readonly status: 'partial'; readonly committed: readonly string[]; readonly error: EngineError; readonly createdDirs: readonly string[]; readonly transactionId: string };

export interface CommitOptions {
  readonly atomic: boolean;
  /** What the plan was made from, keyed by path (normalised here); every path the plan touches must have one. */
  readonly snapshots: ReadonlyMap<string, FileSnapshot>;
  /** Names this commit's trash folder (e.g. the receipt's id): 1–64 of `A-Za-z0-9_-`. Generated when absent or unusable. */
  readonly transactionId?: string | undefined;
  /** The `format` its record lists (default: the plan's dialect). */
  readonly format?: string | undefined;
  /** For an undo: the transaction it undoes (kept in its record). */
  readonly undoOf?: string | undefined;
  /** Mode and owner a path's new content takes instead of its current (or a rename source's) one, keyed by normalised path. */
  readonly owners?: ReadonlyMap<string, FileOwner> | undefined;
  /** Mode and owner a directory the commit makes takes instead of the default, keyed by normalised path (an undo bringing back a directory its transaction replaced by a file or tidied away). */
  readonly directoryOwners?: ReadonlyMap<string, FileOwner> | undefined;
}

/** What one plan file does to one path. A rename is two: write the new path, trash the old. */
interface Effect {
  readonly path: string;
  readonly after: Uint8Array | null;
  /** Path whose mode and owner the new content keeps. */
  readonly ownerFrom: string;
  readonly expects: 'free' | 'file';
}

export async function commitPlan(context: WorkspaceContext, plan: Plan, options: CommitOptions): Promise<CommitOutcome> {
  const perFile = effectsOf(plan);
  if (!perFile.ok) return { status: 'rejected', error: perFile.error };
  const transactionId = usableTransactionId(options.transactionId);
  const snapshots = normalizeKeys(options.snapshots);
  if (!options.atomic) {
    const units = groupNested(perFile.value, (file) => file.effects.map((effect) => effect.path));
    return commitFileByFile(context, units, snapshots, transactionId, unitRecorder(plan, options, units.length));
  }
  const effects = perFile.value.flatMap((file) => file.effects);
  const meta = unitRecorder(plan, options, 1)(0, perFile.value);
  const created = await applyEffects(context, effects, snapshots, { transactionId, journalId: transactionId, meta }, options);
  if (!created.ok) return { status: 'rejected', error: created.error };
  await removeEmptiedDirectories(context, effects);
  return { status: 'applied', committed: perFile.value.map((file) => file.path), createdDirs: created.value, transactionId };
}

type UnitRecorder = (unit: number, files: readonly FileEffects[]) => RecordMeta;

/** The record meta of each of the commit's `units` (one, or about one per file with `atomic: false`). */
function unitRecorder(plan: Plan, options: CommitOptions, units: number): UnitRecorder {
  const format = options.format ?? plan.dialect;
  return (unit, files) => ({
    format, unit, units,
    files: files.map(({ planned: { op }, effects: [target, source] }) => (
      op === 'rename' && source !== undefined ? { path: target!.path, fromPath: source.path, op } : { path: target!.path, op }
    )),
    ...(options.undoOf === undefined ? {} : { undoOf: options.undoOf }),
  });
}

/**
 * atomic: false — each file is its own transaction (a rename's two paths stay together, and so do
 * the files of a type change: `nestedUnits.ts`); stop at the first failure.
 */
async function commitFileByFile(
  context: WorkspaceContext, units: readonly (readonly FileEffects[])[], snapshots: ReadonlyMap<string, FileSnapshot>, transactionId: string, unit: UnitRecorder,
): Promise<CommitOutcome> {
  const committed: string[] = [];
  const createdDirs: string[] = [];
  for (const [index, files] of units.entries()) {
    const effects = files.flatMap((file) => file.effects);
    const ids = { transactionId, journalId: `${transactionId}.${index}`, meta: unit(index, files) };
    const created = await applyEffects(context, effects, snapshots, ids);
    if (!created.ok) {
      if (index === 0) return { status: 'rejected', error: created.error };
      return { status: 'partial', committed, error: created.error, createdDirs, transactionId };
    }
    committed.push(...files.map((file) => file.path));
    createdDirs.push(...created.value);
    await removeEmptiedDirectories(context, effects);
  }
  return { status: 'applied', committed, createdDirs, transactionId };
}

/** Snapshots keyed as the caller named the paths, re-keyed the way effects name them. */
function normalizeKeys(snapshots: ReadonlyMap<string, FileSnapshot>): Map<string, FileSnapshot> {
  const normalized = new Map<string, FileSnapshot>();
  for (const [key, snapshot] of snapshots) {
    const path = normalizePatchPath(key);
    if (path.ok) normalized.set(path.value, snapshot);
  }
  return normalized;
}

function usableTransactionId(requested: string | undefined): string {
  return requested !== undefined && /^[A-Za-z0-9_-]{1,64}$/.test(requested) ? requested : randomUUID();
}

interface FileEffects {
  /** The plan file's path as given, for `committed`. */
  readonly path: string;
  readonly planned: PlannedFile;
  readonly effects: readonly Effect[];
}

/** Effects per plan file; refuses a plan that touches one path twice. */
function effectsOf(plan: Pick<Plan, 'files'>): Result<FileEffects[]> {
  const perFile: FileEffects[] = [];
  const seen = new Set<string>();
  for (const file of plan.files) {
    const effects = effectsOfFile(file);
    if (!effects.ok) return effects;
    for (const { path } of effects.value) {
      if (seen.has(path)) return fail(engineError('duplicate_file_patch', `The plan changes ${path} more than once.`, { path }));
      seen.add(path);
    }
    perFile.push({ path: file.path, planned: file, effects: effects.value });
  }
  return ok(perFile);
}

function effectsOfFile(file: PlannedFile): Result<Effect[]> {
  const target = normalizePatchPath(file.path);
  if (!target.ok) return fail(target.error);
  const path = target.value;
  if (file.op === 'delete') return ok([{ path, after: null, ownerFrom: path, expects: 'file' }]);
  if (file.after === null) return fail(engineError('parse_error', `The plan has no new content for ${path}.`, { path }));
  if (file.op !== 'rename') return ok([{ path, after: file.after, ownerFrom: path, expects: file.op === 'add' ? 'free' : 'file' }]);
  const source = normalizePatchPath(file.fromPath ?? '');
  if (!source.ok) return fail(source.error);
  return ok([
    { path, after: file.after, ownerFrom: source.value, expects: 'free' },
    { path: source.value, after: null, ownerFrom: source.value, expects: 'file' },
  ]);
}

async function applyEffects(
  context: WorkspaceContext, effects: readonly Effect[], snapshots: ReadonlyMap<string, FileSnapshot>, ids: TransactionIds,
  { owners, directoryOwners, undoOf }: Pick<CommitOptions, 'owners' | 'directoryOwners' | 'undoOf'> = {},
): Promise<Result<string[]>> {
  await context.hooks.beforeVerify?.(effects.map((effect) => effect.path));
  const current = await readGuardedEntries(context.guard, effects.map((effect) => effect.path));
  if (!current.ok) return current;
  const unchanged = verifyUnchanged(effects.map((effect) => effect.path), snapshots, current.value);
  if (!unchanged.ok) return unchanged;
  const replaced = replacedDirectoriesOf(effects, (path) => current.value.get(path)?.entry.kind === 'directory');
  const removed = await directoriesToRemove(context.guard, replaced, effects, undoOf);
  if (!removed.ok) return removed;
  const steps = stepsFor(context, effects, current.value, snapshots, ids.transactionId, new Set(replaced), owners);
  if (!steps.ok) return steps;
  return runTransaction(context, steps.value, ids, { removed: removed.value, owners: directoryOwners });
}

/**
 * Refuses a plan that replaces a directory by a file while the directory holds anything the plan
 * does not take away (see `replacedDirectories.ts`), as its commit would: checked as it is
 * planned, so a dry run tells it too. `undoOf`: the plan is the undo of that transaction.
 */
export async function checkReplacedDirectories(
  context: WorkspaceContext, plan: Pick<Plan, 'files'>, snapshots: ReadonlyMap<string, FileSnapshot>, undoOf?: string,
): Promise<Result<void>> {
  if (![...snapshots.values()].some((snapshot) => snapshot.kind === 'directory')) return ok(undefined);
  const perFile = effectsOf(plan);
  if (!perFile.ok) return perFile;
  const effects = perFile.value.flatMap((file) => file.effects);
  const normalized = normalizeKeys(snapshots);
  const replaced = replacedDirectoriesOf(effects, (path) => normalized.get(path)?.kind === 'directory');
  const removed = await directoriesToRemove(context.guard, replaced, effects, undoOf);
  return removed.ok ? ok(undefined) : removed;
}

/** The paths where `effects` make a new file (`expects: 'free'`) while a directory stands, taking away paths inside it. */
function replacedDirectoriesOf(effects: readonly Effect[], isDirectory: (path: string) => boolean): string[] {
  const gone = effects.filter((effect) => effect.after === null).map((effect) => effect.path);
  return effects
    .filter((effect) => effect.expects === 'free' && isDirectory(effect.path))
    .map((effect) => effect.path)
    .filter((directory) => gone.some((path) => path.startsWith(`${directory}/`)));
}

/**
 * The bytes on disk must still be the bytes the plan was made from; otherwise `stale_file`
 * naming the first path that changed (the caller may re-plan on the new bytes).
 */
export function verifyUnchanged(
  paths: readonly string[], snapshots: ReadonlyMap<string, FileSnapshot>, current: ReadonlyMap<string, { readonly entry: DiskEntry }>,
): Result<void> {
  for (const path of paths) {
    const snapshot = snapshots.get(path);
    const entry = current.get(path)?.entry;
    if (snapshot === undefined || entry === undefined) {
      return fail(engineError('stale_file', `The plan was made without a snapshot of ${path}.`, { path }));
    }
    if (!entryEquals(entry, snapshot)) return fail(engineError('stale_file', `${path} changed on disk since the patch was planned.`, { path }));
  }
  return ok(undefined);
}

/** Pairs each effect with what is on disk, refusing ops that do not fit it. */
function stepsFor(
  context: WorkspaceContext, effects: readonly Effect[], current: GuardedEntries, snapshots: ReadonlyMap<string, FileSnapshot>, transactionId: string,
  replaced: ReadonlySet<string>, owners?: ReadonlyMap<string, FileOwner>,
): Result<Step[]> {
  const steps: Step[] = [];
  for (const effect of effects) {
    const found = current.get(effect.path);
    if (found === undefined) return fail(engineError('stale_file', `${effect.path} was not read before commit.`, { path: effect.path }));
    const misfit = replaced.has(effect.path) ? undefined : checkFits(effect, found.entry);
    if (misfit !== undefined) return fail(misfit);
    const before = found.entry.kind === 'file' ? found.entry : null;
    const source = current.get(effect.ownerFrom)?.entry;
    steps.push({
      path: effect.path,
      absolute: found.absolute,
      before,
      beforeSha256: before === null ? null : preImageSha256(before.bytes, snapshots.get(effect.path)),
      after: effect.after,
      owner: owners?.get(effect.path) ?? (source?.kind === 'file' ? source.owner : undefined),
      temp: effect.after === null ? null : tempPathFor(found.absolute),
      trash: effect.after === null ? trashPathFor(context.stateDir, transactionId, effect.path) : null,
    });
  }
  return ok(steps);
}

/**
 * The pre-image's sha256 for the undo record, hashing nothing new: the snapshot the plan was made
 * from holds the same bytes (`verifyUnchanged`), and reading it hashed it already (`sha256Hex`
 * remembers a hash per byte array; the receipt's `sha256Before` is that hash too).
 */
function preImageSha256(bytes: Uint8Array, snapshot: FileSnapshot | undefined): string {
  return sha256Hex(snapshot?.kind === 'file' ? snapshot.bytes : bytes);
}

function checkFits(effect: Effect, entry: DiskEntry): EngineError | undefined {
  const path = effect.path;
  if (entry.kind === 'directory') return engineError('io_error', `${path} is a directory; patchd changes files only.`, { path });
  if (effect.expects === 'free' && entry.kind === 'file') return engineError('already_exists', `${path} already exists.`, { path });
  if (effect.expects === 'file' && entry.kind === 'missing') return engineError('not_found', `${path} does not exist.`, { path });
  return undefined;
}
