/**
 * Time travel against a model, through one spawned daemon (fast-check): random runs of envelope
 * patches (add, update, delete, move with an edit, move without one; now and then one the model
 * says must be refused), undos of earlier transactions (undos of undos redo; some first as a dry
 * run; some of ids that never committed) and writes from outside patchd, on a small tree whose
 * contents recur. The model is the tree (path → text) and, per transaction, each touched path's
 * state before and after it. After every step:
 *
 * - the disk holds exactly the model's files (empty directories aside);
 * - a patch the model can apply is `applied`, one it cannot is `rejected`, nothing written;
 * - an undo of T is `applied` exactly when every path T touched holds what T left (bytes, or
 *   absence), putting each back as it was before T; otherwise `stale_file`, nothing written
 *   (`daemon/workspace/undo.ts` `findStale`);
 * - `transaction/list` shows the new transaction first (format, undoOf, files), or no new one;
 * - `session/diff` since the first transaction lists exactly the touched paths whose state
 *   changed, each once, a rename pairing its two paths as `netChanges` pairs them, and each
 *   section of its git diff turns the old text into the new one. At the end the same holds of
 *   every window (since the open, and since each transaction), and real `git apply` of the diff
 *   since the open and since the first transaction reproduces the tree.
 *
 * Outside writes are not waited for: the client has no way to, and nothing checked here depends
 * on the watcher (an undo and a session diff read the disk, a commit re-checks the bytes under
 * its locks and plans again on new ones, as `undo.test.ts` relies on too).
 *
 * PATCHD_TEST_SEED=<n> replays a run; PATCHD_TEST_PATH=<path> (both printed on failure) replays
 * its failing case directly. A failure is reported as found, with the steps it ran: shrinking
 * replays sequences through the daemon for minutes, so it runs only with PATCHD_TEST_SHRINK=1.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { applyPatch, parsePatch } from 'diff';
import fc from 'fast-check';
import type { PatchClient, Receipt, SessionFile, Workspace } from '../../client/index.ts';
import { readTextTree } from '../helpers/corpus.ts';
import { suiteClient } from '../helpers/suiteDaemon.ts';
import { createTempTree, sha256, writeFiles } from '../helpers/tempTree.ts';

const RUNS = 20;
const SEED = Number(process.env.PATCHD_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
const REPLAY_PATH = process.env.PATCHD_TEST_PATH;
const SHRINK = process.env.PATCHD_TEST_SHRINK === '1';

/** No path is a directory of another; `base.txt` is added by each run's first transaction. */
const PATHS = ['a.txt', 'b.txt', 'src/a.txt', 'src/b.txt', 'src/util/c.txt', 'lib/c.txt', 'docs/d.txt', 'new/e.txt', 'new/deep/f.txt', 'base.txt'];
const INITIAL_PATHS = PATHS.slice(0, 7);
const BASE = 'base.txt';

/** A path's state: its text, or null when absent. */
type State = string | null;
type Tree = Map<string, string>;
type Op = SessionFile['op'];
interface FileOp {
  readonly path: string;
  readonly fromPath?: string | undefined;
  readonly op: Op;
}
interface Effect {
  readonly before: State;
  readonly after: State;
}
/** A committed transaction as the model sees it. */
interface Tx {
  readonly id: string;
  readonly effects: ReadonlyMap<string, Effect>;
  readonly files: readonly FileOp[];
}

// ─── Steps (abstract: indices are resolved against the model when the step runs) ─────────────────

type OpKind = 'add' | 'update' | 'delete' | 'move' | 'moveFile';
interface OpChoice {
  readonly kind: OpKind;
  readonly pick: number;
  readonly to: number;
  readonly text: string;
}
type Step =
  /** `invalid` (one op only): the op is made one the model says must be refused. */
  | { readonly kind: 'patch'; readonly ops: readonly OpChoice[]; readonly invalid: boolean }
  | { readonly kind: 'undo'; readonly target: 'recent' | 'any' | 'ghost'; readonly pick: number; readonly dryRun: boolean }
  | { readonly kind: 'outside'; readonly pick: number; readonly text: string | null }
  /** Nothing: what shrinking turns a step into when it does not matter (an array keeps its 10 steps). */
  | { readonly kind: 'none' };

/** 1–3 lines of x and y: 14 texts, so equal contents recur. */
const textArb = fc.array(fc.constantFrom('x', 'y'), { minLength: 1, maxLength: 3 }).map((lines) => lines.map((line) => `${line}\n`).join(''));
const opArb: fc.Arbitrary<OpChoice> = fc.record({
  kind: fc.constantFrom<OpKind>('add', 'update', 'update', 'delete', 'move', 'moveFile'),
  pick: fc.nat({ max: 99 }),
  to: fc.nat({ max: 99 }),
  text: textArb,
});
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { withCrossShrink: true },
  { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 20, arbitrary: fc.record({ kind: fc.constant('patch' as const), ops: fc.array(opArb, { minLength: 1, maxLength: 2 }), invalid: fc.nat({ max: 5 }).map((n) => n === 0) }) },
  { weight: 14, arbitrary: fc.record({ kind: fc.constant('undo' as const), target: fc.constantFrom('recent', 'recent', 'any', 'any', 'ghost') as fc.Arbitrary<'recent' | 'any' | 'ghost'>, pick: fc.nat({ max: 99 }), dryRun: fc.boolean() }) },
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('outside' as const), pick: fc.nat({ max: 99 }), text: fc.option(textArb, { freq: 4 }) }) },
);
/** What the runs exercised, printed as a diagnostic: a model that never allows an undo proves little. */
const stats = new Map<string, number>();
const count = (what: string) => stats.set(what, (stats.get(what) ?? 0) + 1);

const initialArb = fc.tuple(fc.subarray(INITIAL_PATHS, { minLength: 3, maxLength: 6 }), fc.array(textArb, { minLength: 6, maxLength: 6 }))
  .map(([paths, texts]) => Object.fromEntries(paths.map((path, index) => [path, texts[index]!])) as Record<string, string>);
const stepsArb = fc.array(stepArb, { minLength: 10, maxLength: 25 });

// ─── Model helpers ───────────────────────────────────────────────────────────────────────────────

const stateOf = (tree: Tree, path: string): State => tree.get(path) ?? null;
const linesOf = (text: string) => text.slice(0, -1).split('\n');
/** `text`, or (when it equals `old`) `text` with its first line flipped: an edit always changes something. */
const differentFrom = (old: string, text: string) => (text !== old ? text : `${text[0] === 'x' ? 'y' : 'x'}${text.slice(1)}`);
const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
const normalFiles = (files: readonly FileOp[]) => files
  .map(({ path, fromPath, op }) => (fromPath === undefined ? { path, op } : { path, fromPath, op }))
  .sort(byPath);
const show = (state: State) => (state === null ? 'absent' : JSON.stringify(state));

function applyEffects(tree: Tree, effects: ReadonlyMap<string, Effect>): void {
  for (const [path, { after }] of effects) {
    if (after === null) tree.delete(path);
    else tree.set(path, after);
  }
}

function inverse(file: FileOp): FileOp {
  switch (file.op) {
    case 'add':
      return { path: file.path, op: 'delete' };
    case 'delete':
      return { path: file.path, op: 'add' };
    case 'update':
      return file;
    case 'rename':
      return { path: file.fromPath!, fromPath: file.path, op: 'rename' };
  }
}

/** What `session/diff` must say of `window` with the disk at `tree` (see `daemon/workspace/history.ts`). */
function expectedNet(window: readonly Tx[], tree: Tree) {
  const initial = new Map<string, State>();
  // Whose content from before the window a touched path holds (null: none); untouched, its own.
  const holds = new Map<string, string | null>();
  for (const tx of window) {
    for (const [path, { before }] of tx.effects) if (!initial.has(path)) initial.set(path, before);
    for (const file of tx.files) {
      if (file.op === 'rename') {
        holds.set(file.path, holds.has(file.fromPath!) ? holds.get(file.fromPath!) ?? null : file.fromPath!);
        holds.set(file.fromPath!, null);
      } else if (file.op !== 'update') holds.set(file.path, null);
    }
  }
  const origins = [...holds].filter((entry): entry is [string, string] => entry[1] !== null);
  const changed = new Set([...initial].filter(([path, before]) => before !== stateOf(tree, path)).map(([path]) => path));
  const files: FileOp[] = [];
  const states = new Map<string, Effect>();
  const paired = new Set<string>();
  for (const [path, origin] of origins) {
    const before = initial.get(origin) ?? null;
    const after = stateOf(tree, path);
    if (path === origin || before === null || after === null || initial.get(path) !== null || stateOf(tree, origin) !== null) continue;
    files.push({ path, fromPath: origin, op: 'rename' });
    states.set(path, { before, after });
    paired.add(path).add(origin);
  }
  for (const [path, before] of initial) {
    const after = stateOf(tree, path);
    if (paired.has(path) || before === after) continue;
    files.push({ path, op: before === null ? 'add' : after === null ? 'delete' : 'update' });
    states.set(path, { before, after });
  }
  return { initial, changed, files: files.sort(byPath), states };
}

// ─── Disk ────────────────────────────────────────────────────────────────────────────────────────

const sortedEntries = (tree: ReadonlyMap<string, string>) => [...tree].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

function hasGit(): boolean {
  try {
    execFileSync('git', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const GIT = hasGit();

/** The tree real `git apply` makes of `diff` on `start`. */
function gitApplied(start: ReadonlyMap<string, string>, diff: string): Tree {
  const scratch = mkdtempSync(join(tmpdir(), 'patchd-tt-git-'));
  try {
    const root = join(scratch, 'tree');
    mkdirSync(root);
    writeFiles(root, Object.fromEntries(start));
    writeFileSync(join(scratch, 'session.diff'), diff);
    if (diff !== '') execFileSync('git', ['apply', '--whitespace=nowarn', join(scratch, 'session.diff')], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
    return readTextTree(root);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

// ─── One run ─────────────────────────────────────────────────────────────────────────────────────

interface PlannedPatch {
  readonly text: string;
  readonly effects: Map<string, Effect>;
  readonly files: FileOp[];
  /** The codes a refusal may carry; undefined when the model says the patch applies. */
  readonly refusal: readonly string[] | undefined;
  readonly label: string;
}

/** Resolves a patch step against the model; undefined when no op fits the tree. */
function planPatch(step: Extract<Step, { kind: 'patch' }>, tree: Tree): PlannedPatch | undefined {
  const claimed = new Set<string>();
  const sections: string[] = [];
  const effects = new Map<string, Effect>();
  const files: FileOp[] = [];
  const labels: string[] = [];
  let refusal: readonly string[] | undefined;
  const invalid = step.invalid && step.ops.length === 1;
  const free = (list: readonly string[]) => list.filter((path) => !claimed.has(path));
  for (const choice of step.ops) {
    const existing = free([...tree.keys()].sort());
    const absent = free(PATHS.filter((path) => !tree.has(path)));
    const pickFrom = (list: readonly string[], n: number) => list[n % list.length]!;
    switch (choice.kind) {
      case 'add': {
        if (invalid && existing.length > 0) {
          const path = pickFrom(existing, choice.pick);
          sections.push(addSection(path, choice.text));
          labels.push(`add ${path} (exists)`);
          // The very content already there is `already_applied` (daemon/engine/alreadyApplied.ts).
          refusal = [tree.get(path) === choice.text ? 'already_applied' : 'already_exists'];
          break;
        }
        if (absent.length === 0) continue;
        const path = pickFrom(absent, choice.pick);
        sections.push(addSection(path, choice.text));
        effects.set(path, { before: null, after: choice.text });
        files.push({ path, op: 'add' });
        claimed.add(path);
        labels.push(`add ${path} ${JSON.stringify(choice.text)}`);
        break;
      }
      case 'update':
      case 'delete': {
        if (invalid && absent.length > 0) {
          const path = pickFrom(absent, choice.pick);
          sections.push(choice.kind === 'delete' ? `*** Delete File: ${path}\n` : updateSection(path, undefined, choice.text, differentFrom(choice.text, choice.text)));
          labels.push(`${choice.kind} ${path} (absent)`);
          refusal = ['not_found'];
          break;
        }
        if (existing.length === 0) continue;
        const path = pickFrom(existing, choice.pick);
        const old = tree.get(path)!;
        if (choice.kind === 'delete') {
          sections.push(`*** Delete File: ${path}\n`);
          effects.set(path, { before: old, after: null });
          files.push({ path, op: 'delete' });
          labels.push(`delete ${path}`);
        } else {
          const text = differentFrom(old, choice.text);
          sections.push(updateSection(path, undefined, old, text));
          effects.set(path, { before: old, after: text });
          files.push({ path, op: 'update' });
          labels.push(`update ${path} ${JSON.stringify(old)} -> ${JSON.stringify(text)}`);
        }
        claimed.add(path);
        break;
      }
      case 'move':
      case 'moveFile': {
        if (existing.length === 0) continue;
        const from = pickFrom(existing, choice.pick);
        const old = tree.get(from)!;
        const text = choice.kind === 'move' ? differentFrom(old, choice.text) : old;
        const section = (to: string) => (choice.kind === 'move' ? updateSection(from, to, old, text) : `*** Move File: ${from} -> ${to}\n`);
        const occupied = existing.filter((path) => path !== from);
        if (invalid && occupied.length > 0) {
          const to = pickFrom(occupied, choice.to);
          sections.push(section(to));
          labels.push(`${choice.kind} ${from} -> ${to} (exists)`);
          refusal = ['already_exists'];
          break;
        }
        if (absent.length === 0) continue;
        const to = pickFrom(absent, choice.to);
        sections.push(section(to));
        effects.set(from, { before: old, after: null });
        effects.set(to, { before: null, after: text });
        files.push({ path: to, fromPath: from, op: 'rename' });
        claimed.add(from).add(to);
        labels.push(`${choice.kind} ${from} -> ${to}${choice.kind === 'move' ? ` ${JSON.stringify(old)} -> ${JSON.stringify(text)}` : ''}`);
        break;
      }
    }
  }
  if (sections.length === 0) return undefined;
  return { text: `*** Begin Patch\n${sections.join('')}*** End Patch\n`, effects, files, refusal, label: `patch: ${labels.join('; ')}` };
}

function addSection(path: string, text: string): string {
  return `*** Add File: ${path}\n${linesOf(text).map((line) => `+${line}\n`).join('')}`;
}

/** A hunk that rewrites the whole file. */
function updateSection(path: string, to: string | undefined, old: string, text: string): string {
  const move = to === undefined ? '' : `*** Move to: ${to}\n`;
  return `*** Update File: ${path}\n${move}@@\n${linesOf(old).map((line) => `-${line}\n`).join('')}${linesOf(text).map((line) => `+${line}\n`).join('')}`;
}

class Run {
  readonly tree: Tree;
  readonly txs: Tx[] = [];
  /** Ids of receipts that committed nothing: undoing one is `unknown_transaction`. */
  readonly ghosts: string[] = [];
  readonly log: string[] = [];
  /** Ids of undo transactions: undoing one redoes. */
  readonly undos = new Set<string>();

  constructor(
    readonly workspace: Workspace,
    readonly root: string,
    initial: Readonly<Record<string, string>>,
  ) {
    this.tree = new Map(Object.entries(initial));
    this.log.push(`initial tree: ${JSON.stringify(Object.fromEntries(sortedEntries(this.tree)))}`);
  }

  checkDisk(what: string): void {
    assert.deepEqual(sortedEntries(readTextTree(this.root)), sortedEntries(this.tree), `${what}: the disk is not the model's tree`);
  }

  async checkNewest(expected: { readonly tx: Tx; readonly format: string; readonly undoOf?: string } | undefined): Promise<void> {
    const [newest] = await this.workspace.transactions({ limit: 1 });
    if (expected === undefined) {
      assert.equal(newest?.transactionId, this.txs.at(-1)?.id, 'transaction/list: no new transaction may appear');
      return;
    }
    assert.ok(newest !== undefined, 'transaction/list is empty');
    assert.equal(newest.transactionId, expected.tx.id, 'transaction/list: the new transaction comes first');
    assert.equal(newest.status, 'applied');
    assert.equal(newest.format, expected.format);
    assert.equal(newest.undoOf, expected.undoOf);
    assert.deepEqual(normalFiles(newest.files), normalFiles(expected.tx.files), 'transaction/list: the files of the new transaction');
  }

  /** The receipt's files: ops and paths as the model says, hashes of the states before and after. */
  checkReceiptFiles(receipt: Receipt, tx: Tx): void {
    assert.deepEqual(normalFiles(receipt.files), normalFiles(tx.files), 'receipt files');
    for (const file of receipt.files) {
      const before = tx.effects.get(file.fromPath ?? file.path)?.before ?? null;
      const after = tx.effects.get(file.path)?.after ?? null;
      assert.equal(file.sha256Before, before === null ? undefined : sha256(before), `sha256Before of ${file.path}`);
      assert.equal(file.sha256After, after === null ? undefined : sha256(after), `sha256After of ${file.path}`);
    }
  }

  async patch(planned: PlannedPatch): Promise<void> {
    this.log.push(`${planned.label}${planned.refusal === undefined ? '' : ' [must be refused]'}`);
    const receipt = await this.workspace.apply(planned.text);
    this.log.push(`  -> ${receipt.status}${receipt.error === undefined ? '' : ` ${receipt.error.code}`} ${receipt.transactionId}`);
    if (planned.refusal !== undefined) {
      assert.equal(receipt.status, 'rejected', `a patch the model cannot apply: ${planned.text}`);
      assert.ok(planned.refusal.includes(receipt.error?.code ?? ''), `refused with ${receipt.error?.code}, expected ${planned.refusal.join(' or ')}`);
      this.ghosts.push(receipt.transactionId);
      count('patches refused');
      this.checkDisk('after a refused patch');
      await this.checkNewest(undefined);
      return;
    }
    assert.equal(receipt.status, 'applied', `a patch the model can apply: ${JSON.stringify(receipt.error)}\n${planned.text}`);
    const tx: Tx = { id: receipt.transactionId, effects: planned.effects, files: planned.files };
    this.checkReceiptFiles(receipt, tx);
    applyEffects(this.tree, tx.effects);
    this.txs.push(tx);
    count('patches applied');
    this.checkDisk('after an applied patch');
    await this.checkNewest({ tx, format: receipt.format });
  }

  async undo(step: Extract<Step, { kind: 'undo' }>): Promise<void> {
    if (step.target === 'ghost' && this.ghosts.length > 0) {
      const id = this.ghosts[step.pick % this.ghosts.length]!;
      this.log.push(`undo ${id} (never committed)`);
      const receipt = await this.workspace.undo(id, { dryRun: step.dryRun });
      assert.equal(receipt.status, 'rejected');
      assert.equal(receipt.error?.code, 'unknown_transaction');
      count('undos of ids never committed');
      this.checkDisk('after undoing an id that never committed');
      await this.checkNewest(undefined);
      return;
    }
    const candidates = step.target === 'recent' ? this.txs.slice(-2) : this.txs;
    const index = this.txs.indexOf(candidates[step.pick % candidates.length]!);
    const target = this.txs[index]!;
    const stale = [...target.effects].filter(([path, { after }]) => stateOf(this.tree, path) !== after);
    const why = stale.map(([path, { after }]) => `${path} holds ${show(stateOf(this.tree, path))}, T left ${show(after)}`).join('; ');
    this.log.push(`undo #${index} ${target.id}${step.dryRun ? ' (dry run first)' : ''}: ${stale.length === 0 ? 'allowed' : `stale (${why})`}`);
    if (step.dryRun) {
      const preview = await this.workspace.undo(target.id, { dryRun: true });
      this.log.push(`  dry run -> ${preview.status}${preview.error === undefined ? '' : ` ${preview.error.code}`}`);
      if (stale.length === 0) assert.equal(preview.status, 'dry_run', `the dry run of an allowed undo: ${JSON.stringify(preview.error)}`);
      else assert.equal(preview.error?.code, 'stale_file', `the dry run of a stale undo (${why}): ${preview.status}`);
      count('dry-run undos');
      this.checkDisk('after a dry-run undo');
      await this.checkNewest(undefined);
    }
    const receipt = await this.workspace.undo(target.id);
    this.log.push(`  -> ${receipt.status}${receipt.error === undefined ? '' : ` ${receipt.error.code}`} ${receipt.transactionId}`);
    if (stale.length > 0) {
      assert.equal(receipt.status, 'rejected', `an undo whose transaction's paths changed since (${why})`);
      assert.equal(receipt.error?.code, 'stale_file');
      this.ghosts.push(receipt.transactionId);
      count('undos refused stale');
      this.checkDisk('after a refused undo');
      await this.checkNewest(undefined);
      return;
    }
    assert.equal(receipt.status, 'applied', `an undo whose transaction's paths all hold what it left: ${JSON.stringify(receipt.error)}`);
    assert.equal(receipt.format, 'undo');
    const effects = new Map([...target.effects].map(([path, { before, after }]) => [path, { before: after, after: before }]));
    const tx: Tx = { id: receipt.transactionId, effects, files: target.files.map(inverse) };
    this.checkReceiptFiles(receipt, tx);
    applyEffects(this.tree, effects);
    this.txs.push(tx);
    count(this.undos.has(target.id) ? 'undos applied (redos)' : 'undos applied');
    this.undos.add(tx.id);
    this.checkDisk('after an applied undo');
    await this.checkNewest({ tx, format: 'undo', undoOf: target.id });
  }

  outside(step: Extract<Step, { kind: 'outside' }>): void {
    const path = PATHS[step.pick % PATHS.length]!;
    const absolute = join(this.root, path);
    if (step.text === null) {
      if (!this.tree.has(path)) return;
      this.log.push(`outside: delete ${path}`);
      unlinkSync(absolute);
      this.tree.delete(path);
    } else {
      this.log.push(`outside: write ${path} ${JSON.stringify(step.text)}`);
      mkdirSync(dirname(absolute), { recursive: true });
      writeFileSync(absolute, step.text);
      this.tree.set(path, step.text);
    }
    count('outside writes');
    this.checkDisk('after an outside write');
  }

  /** `session/diff` of the window after `txs[from - 1]` (`from` 0: since the open). */
  async checkSessionDiff(from: number, withGit: boolean): Promise<void> {
    const since = from === 0 ? undefined : this.txs[from - 1]!.id;
    const what = `session/diff ${since === undefined ? 'since the open' : `since ${since}`}`;
    const expected = expectedNet(this.txs.slice(from), this.tree);
    const result = await this.workspace.sessionDiff({ since });
    if (result.files.some((file) => file.op === 'rename')) count('session diffs with a rename');
    const listed = result.files.flatMap((file) => (file.fromPath === undefined ? [file.path] : [file.fromPath, file.path]));
    assert.deepEqual([...listed].sort(), [...expected.changed].sort(), `${what}: exactly the touched paths whose state changed, each once\n${JSON.stringify(result.files)}`);
    assert.deepEqual(normalFiles(result.files), expected.files, `${what}: files (ops, renames paired as netChanges pairs them)`);
    assert.deepEqual(result.files.map((file) => file.path), [...result.files].sort(byPath).map((file) => file.path), `${what}: files sorted by path`);

    const sections = result.diff === '' ? [] : parsePatch(result.diff);
    assert.equal(sections.length, expected.files.length, `${what}: one diff section per file\n${result.diff}`);
    for (const section of sections) {
      const strip = (name: string | undefined) => (name === undefined || name === '/dev/null' ? null : name.replace(/^[ab]\//, ''));
      const fromName = strip(section.oldFileName);
      const toName = strip(section.newFileName);
      const path = section.isDelete === true ? fromName : toName;
      const file = expected.files.find((candidate) => candidate.path === path);
      assert.ok(file !== undefined, `${what}: a diff section for ${path}, which is not listed\n${result.diff}`);
      assert.equal(section.isCreate === true, file.op === 'add', `${what}: ${path} is a new file in the diff exactly when added`);
      assert.equal(section.isDelete === true, file.op === 'delete', `${what}: ${path} is a deleted file in the diff exactly when deleted`);
      assert.equal(section.isRename === true, file.op === 'rename', `${what}: ${path} is a rename in the diff exactly when renamed`);
      if (file.op === 'rename') assert.equal(fromName, file.fromPath, `${what}: the rename's source`);
      const { before, after } = expected.states.get(path!)!;
      assert.equal(applyPatch(before ?? '', section), after ?? '', `${what}: the section of ${path} turns ${show(before)} into ${show(after)}\n${result.diff}`);
    }
    if (withGit && GIT) {
      const start = new Map(this.tree);
      for (const [path, state] of expected.initial) {
        if (state === null) start.delete(path);
        else start.set(path, state);
      }
      assert.deepEqual(sortedEntries(gitApplied(start, result.diff)), sortedEntries(this.tree), `${what}: git apply reproduces the tree\n${result.diff}`);
    }
  }
}

async function runSequence(client: PatchClient, initial: Readonly<Record<string, string>>, steps: readonly Step[]): Promise<void> {
  using tree = createTempTree(initial);
  await using workspace = await client.openWorkspace(tree.root);
  const run = new Run(workspace, tree.root, initial);
  try {
    // The first transaction: what `since` names below, so the window of "before the first step".
    await run.patch({
      text: `*** Begin Patch\n${addSection(BASE, 'x\n')}*** End Patch\n`,
      effects: new Map([[BASE, { before: null, after: 'x\n' }]]),
      files: [{ path: BASE, op: 'add' }],
      refusal: undefined,
      label: `patch: add ${BASE} (the base transaction)`,
    });
    for (const step of steps) {
      if (step.kind === 'patch') {
        const planned = planPatch(step, run.tree);
        if (planned === undefined) continue;
        await run.patch(planned);
      } else if (step.kind === 'undo') await run.undo(step);
      else if (step.kind === 'outside') run.outside(step);
      else continue;
      await run.checkSessionDiff(1, false);
    }
    await run.checkSessionDiff(1, true);
    await run.checkSessionDiff(0, true);
    // Every later window too: its start is the middle of the history (the last one is empty).
    for (let from = 2; from <= run.txs.length; from++) await run.checkSessionDiff(from, false);
  } catch (error) {
    const trace = run.log.map((line, index) => `  ${String(index).padStart(2)} ${line}`).join('\n');
    throw new Error(`${(error as Error).message}\nsteps run:\n${trace}`, { cause: error });
  }
}

describe('time travel against a model', () => {
  const client = suiteClient();

  test('undo, redo, session/diff and transaction/list agree with a model of random patches, undos and outside writes', async (t) => {
    t.diagnostic(`PATCHD_TEST_SEED=${SEED}`);
    await fc.assert(
      fc.asyncProperty(initialArb, stepsArb, (initial, steps) => runSequence(client(), initial, steps)),
      { numRuns: RUNS, seed: SEED, endOnFailure: !SHRINK, includeErrorInReport: true, ...(REPLAY_PATH === undefined ? {} : { path: REPLAY_PATH }) },
    );
    t.diagnostic([...stats].map(([what, n]) => `${what}: ${n}`).join(', '));
  });
});
