/**
 * Concurrent patching against a model, through one shared daemon and several clients
 * (fast-check): each run makes a small tree (3–8 files of `stem-k = value` lines, some in
 * subdirectories), then sends a burst of 10–30 patches all at once, spread over the clients —
 * unified (plain or git) and envelope; edits by unique context, adds, deletes, moves with and
 * without an edit; some pinned with `expectedSha256ByPath` (rightly or wrongly), some
 * `atomic: false`, some dry runs, some sent twice. The patches are made against the initial
 * tree and overlap on files on purpose. After the burst:
 *
 * - linearizability: the `applied` and `partial` receipts have a serial order in which the
 *   model, starting from the initial tree, can apply each of them (its pins hold, its context
 *   is found, its add/move target is free), each file's `sha256Before`/`sha256After` is the
 *   model's state just before and after it, and the end is exactly the disk (every file, no
 *   temp or stray file). Found by a search over the orders the receipts' hashes allow;
 * - every other receipt is `dry_run` or `rejected` with a code a lost race explains
 *   (`stale_file`, `context_not_found`, `already_exists`, `not_found`, `already_applied`),
 *   and appears in no chain; a dry run's `sha256Before`s are states its paths held;
 * - a patch no other patch of the burst touches (no shared path) ends as the initial tree
 *   says: applied (or `dry_run`) when it fits and its pins hold, rejected otherwise.
 *
 * PATCHD_TEST_SEED=<n> replays a run (printed on failure, with the burst and its receipts);
 * PATCHD_TEST_PATH=<path> replays its failing case. Shrinking resends bursts, whose outcome
 * depends on timing, so it runs only with PATCHD_TEST_SHRINK=1.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { ApplyOptions, PatchClient, Receipt, Workspace } from '../../client/index.ts';
import { readTextTree } from '../helpers/corpus.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';
import { createTempTree, sha256 } from '../helpers/tempTree.ts';

const RUNS = 20;
const CLIENTS = 4;
const SEED = Number(process.env.PATCHD_TEST_SEED ?? Math.floor(Math.random() * 2 ** 31));
const REPLAY_PATH = process.env.PATCHD_TEST_PATH;
const SHRINK = process.env.PATCHD_TEST_SHRINK === '1';

/** Files a run may start with; their stems (`a`, `d`, …) are unique, so every line is. */
const INITIAL_POOL = ['a.txt', 'b.txt', 'c.txt', 'src/d.txt', 'src/e.txt', 'src/lib/f.txt', 'docs/g.txt', 'docs/h.txt'];
/** Paths only adds and moves make (in new directories too). */
const NEW_POOL = ['n1.txt', 'src/n2.txt', 'src/lib/n3.txt', 'fresh/n4.txt', 'fresh/deep/n5.txt'];
const ALL_PATHS = [...INITIAL_POOL, ...NEW_POOL];
const RACE_CODES = new Set(['stale_file', 'context_not_found', 'already_exists', 'not_found', 'already_applied']);

type State = string | null;
type Tree = Map<string, string>;

// ─── Abstract bursts (indices resolved against the initial tree) ─────────────────────────────────

type OpKind = 'edit' | 'add' | 'delete' | 'move' | 'moveEdit';
interface OpChoice {
  readonly kind: OpKind;
  readonly pick: number;
  readonly to: number;
  readonly line: number;
  readonly context: boolean;
}
interface PatchChoice {
  readonly form: 'unified' | 'git' | 'envelope';
  readonly ops: readonly OpChoice[];
  readonly pin: 'none' | 'right' | 'wrong';
  readonly atomic: boolean;
  readonly dryRun: boolean;
  /** Send an earlier patch of the burst again (`dup % index`), when there is one. */
  readonly dup: number | null;
  readonly client: number;
}

const opArb: fc.Arbitrary<OpChoice> = fc.record({
  kind: fc.constantFrom<OpKind>('edit', 'edit', 'edit', 'edit', 'edit', 'edit', 'add', 'delete', 'move', 'moveEdit'),
  pick: fc.nat({ max: 99 }),
  to: fc.nat({ max: 99 }),
  line: fc.nat({ max: 9 }),
  context: fc.boolean(),
});
const patchArb: fc.Arbitrary<PatchChoice> = fc.record({
  form: fc.constantFrom<PatchChoice['form']>('unified', 'git', 'envelope', 'envelope'),
  ops: fc.array(opArb, { minLength: 1, maxLength: 3 }),
  pin: fc.constantFrom<PatchChoice['pin']>('none', 'none', 'none', 'right', 'right', 'wrong'),
  atomic: fc.nat({ max: 3 }).map((n) => n !== 0),
  dryRun: fc.nat({ max: 6 }).map((n) => n === 0),
  dup: fc.tuple(fc.nat({ max: 7 }), fc.nat({ max: 99 })).map(([roll, pick]) => (roll === 0 ? pick : null)),
  client: fc.nat({ max: CLIENTS - 1 }),
});
const initialArb = fc.tuple(fc.subarray(INITIAL_POOL, { minLength: 3, maxLength: 8 }), fc.array(fc.integer({ min: 2, max: 5 }), { minLength: 8, maxLength: 8 }))
  .map(([paths, sizes]) => Object.fromEntries(paths.map((path, index) => [path, fileText(stemOf(path), sizes[index]!, 'v0')])) as Record<string, string>);
const burstArb = fc.array(patchArb, { minLength: 10, maxLength: 30 });

const stats = new Map<string, number>();
const count = (what: string) => stats.set(what, (stats.get(what) ?? 0) + 1);

// ─── Concrete patches and their model ────────────────────────────────────────────────────────────

const stemOf = (path: string) => path.slice(path.lastIndexOf('/') + 1, -'.txt'.length);
function fileText(stem: string, lines: number, value: string): string {
  return Array.from({ length: lines }, (_, k) => `${stem}-${k + 1} = ${value}\n`).join('');
}
const linesOf = (text: string) => text.slice(0, -1).split('\n');
const stateOf = (tree: Tree, path: string): State => tree.get(path) ?? null;
const hashOf = (state: State) => (state === null ? '' : sha256(state));
const short = (hash: string | undefined) => (hash === undefined ? '∅' : hash === '' ? '""' : hash.slice(0, 8));

/** One file of a patch: what it needs on the model's tree and what it makes. */
type Op =
  | { readonly kind: 'edit'; readonly path: string; readonly old: readonly string[]; readonly new: readonly string[]; readonly start: number }
  | { readonly kind: 'add'; readonly path: string; readonly text: string }
  /** `content`: the lines a unified delete lists (it must find them); undefined for the envelope. */
  | { readonly kind: 'delete'; readonly path: string; readonly content: string | undefined }
  | { readonly kind: 'move'; readonly path: string; readonly to: string; readonly edit: { readonly old: readonly string[]; readonly new: readonly string[]; readonly start: number } | undefined };

interface Patch {
  readonly index: number;
  readonly text: string;
  readonly ops: readonly Op[];
  readonly options: ApplyOptions;
  readonly client: number;
  readonly label: string;
  /** Every path it names (ops and pins). */
  readonly paths: ReadonlySet<string>;
}

const opPaths = (op: Op) => (op.kind === 'move' ? [op.path, op.to] : [op.path]);
/** The path a receipt file entry is listed under. */
const receiptPath = (op: Op) => (op.kind === 'move' ? op.to : op.path);

/** Where the block `old` is, once, in `lines`; undefined when nowhere or more than once. */
function findBlock(lines: readonly string[], old: readonly string[]): number | undefined {
  let found: number | undefined;
  for (let at = 0; at + old.length <= lines.length; at++) {
    if (old.every((line, k) => lines[at + k] === line)) {
      if (found !== undefined) return undefined;
      found = at;
    }
  }
  return found;
}

function replaceBlock(text: string, old: readonly string[], replacement: readonly string[]): string | undefined {
  const lines = linesOf(text);
  const at = findBlock(lines, old);
  if (at === undefined) return undefined;
  return `${[...lines.slice(0, at), ...replacement, ...lines.slice(at + old.length)].join('\n')}\n`;
}

/** The op's effect on `tree` (path → new state), or why it cannot apply there. */
function effectOf(op: Op, tree: Tree): Map<string, State> | string {
  const current = stateOf(tree, op.path);
  switch (op.kind) {
    case 'edit': {
      if (current === null) return `${op.path} is absent`;
      const after = replaceBlock(current, op.old, op.new);
      return after === undefined ? `${op.path}: context not found` : new Map([[op.path, after]]);
    }
    case 'add':
      return current === null ? new Map([[op.path, op.text]]) : `${op.path} exists`;
    case 'delete':
      if (current === null) return `${op.path} is absent`;
      if (op.content !== undefined && current !== op.content) return `${op.path} is not the listed content`;
      return new Map([[op.path, null]]);
    case 'move': {
      if (current === null) return `${op.path} is absent`;
      if (stateOf(tree, op.to) !== null) return `${op.to} exists`;
      const after = op.edit === undefined ? current : replaceBlock(current, op.edit.old, op.edit.new);
      if (after === undefined) return `${op.path}: context not found`;
      return new Map<string, State>([[op.path, null], [op.to, after]]);
    }
  }
}

/** The combined effect of `ops` (distinct paths), or why one cannot apply. */
function effectOfAll(ops: readonly Op[], tree: Tree): Map<string, State> | string {
  const all = new Map<string, State>();
  for (const op of ops) {
    const effect = effectOf(op, tree);
    if (typeof effect === 'string') return effect;
    for (const [path, state] of effect) all.set(path, state);
  }
  return all;
}

function applyEffect(tree: Tree, effect: ReadonlyMap<string, State>): Tree {
  const next = new Map(tree);
  for (const [path, state] of effect) {
    if (state === null) next.delete(path);
    else next.set(path, state);
  }
  return next;
}

/** An edit of one line (by its unique text), with a line of context either side when asked. */
function editHunk(text: string, choice: OpChoice, value: string) {
  const lines = linesOf(text);
  const line = choice.line % lines.length;
  const from = choice.context ? Math.max(0, line - 1) : line;
  const to = choice.context ? Math.min(lines.length, line + 2) : line + 1;
  const old = lines.slice(from, to);
  const replaced = lines[line]!.replace(/= .*$/, `= ${value}`);
  return { old, new: old.map((entry, k) => (from + k === line ? replaced : entry)), start: from + 1 };
}

function resolvePatch(choice: PatchChoice, index: number, initial: Tree): Omit<Patch, 'index' | 'client'> | undefined {
  const ops: Op[] = [];
  const claimed = new Set<string>();
  const existing = () => [...initial.keys()].sort().filter((path) => !claimed.has(path));
  const free = () => ALL_PATHS.filter((path) => !claimed.has(path));
  const pickFrom = (list: readonly string[], n: number) => (list.length === 0 ? undefined : list[n % list.length]);
  for (const [k, op] of choice.ops.entries()) {
    const value = `p${index}x${k}`;
    const source = pickFrom(existing(), op.pick);
    switch (op.kind) {
      case 'edit':
        if (source === undefined) continue;
        ops.push({ kind: 'edit', path: source, ...editHunk(initial.get(source)!, op, value) });
        claimed.add(source);
        break;
      case 'add': {
        // Mostly a path absent at the start; now and then one that exists (already_exists).
        const candidates = op.to % 4 === 0 ? free() : free().filter((path) => !initial.has(path));
        const path = pickFrom(candidates, op.pick);
        if (path === undefined) continue;
        ops.push({ kind: 'add', path, text: fileText(`n${index}x${k}`, 1 + (op.line % 3), 'added') });
        claimed.add(path);
        break;
      }
      case 'delete':
        if (source === undefined) continue;
        ops.push({ kind: 'delete', path: source, content: choice.form === 'envelope' ? undefined : initial.get(source)! });
        claimed.add(source);
        break;
      case 'move':
      case 'moveEdit': {
        if (source === undefined) continue;
        claimed.add(source);
        const to = pickFrom(op.pick % 5 === 0 ? free() : free().filter((path) => !initial.has(path)), op.to);
        if (to === undefined) continue;
        claimed.add(to);
        ops.push({ kind: 'move', path: source, to, edit: op.kind === 'moveEdit' ? editHunk(initial.get(source)!, op, value) : undefined });
        break;
      }
    }
  }
  if (ops.length === 0) return undefined;
  const form = choice.form === 'unified' && ops.some((op) => op.kind === 'move') ? 'git' : choice.form;
  const text = form === 'envelope' ? envelopeText(ops) : ops.map((op) => unifiedSection(op, form === 'git', initial)).join('');
  let expected: Record<string, string> | undefined;
  if (choice.pin !== 'none') {
    expected = {};
    for (const op of ops) {
      for (const path of opPaths(op)) {
        const right = hashOf(stateOf(initial, path));
        expected[path] = choice.pin === 'right' ? right : right === '' ? sha256('nothing like it\n') : '';
      }
    }
  }
  const options: ApplyOptions = {
    ...(expected === undefined ? {} : { expectedSha256ByPath: expected }),
    ...(choice.atomic ? {} : { atomic: false }),
    ...(choice.dryRun ? { dryRun: true } : {}),
  };
  const label = `${form}${choice.pin === 'none' ? '' : ` pins:${choice.pin}`}${choice.atomic ? '' : ' atomic:false'}${choice.dryRun ? ' dryRun' : ''}: ${ops.map(describeOp).join('; ')}`;
  return { text, ops, options, label, paths: new Set([...ops.flatMap(opPaths), ...Object.keys(expected ?? {})]) };
}

function describeOp(op: Op): string {
  switch (op.kind) {
    case 'edit':
      return `edit ${op.path} ${JSON.stringify(op.old)} -> ${JSON.stringify(op.new)}`;
    case 'add':
      return `add ${op.path}`;
    case 'delete':
      return `delete ${op.path}${op.content === undefined ? '' : ' (listing its lines)'}`;
    case 'move':
      return `move ${op.path} -> ${op.to}${op.edit === undefined ? '' : ` editing ${JSON.stringify(op.edit.old)} -> ${JSON.stringify(op.edit.new)}`}`;
  }
}

function envelopeText(ops: readonly Op[]): string {
  const hunk = (edit: { old: readonly string[]; new: readonly string[] }) => {
    const changed = edit.old.findIndex((line, k) => line !== edit.new[k]);
    return `@@\n${edit.old.map((line, k) => (k === changed ? `-${line}\n+${edit.new[k]}\n` : ` ${line}\n`)).join('')}`;
  };
  const sections = ops.map((op) => {
    switch (op.kind) {
      case 'edit':
        return `*** Update File: ${op.path}\n${hunk(op)}`;
      case 'add':
        return `*** Add File: ${op.path}\n${linesOf(op.text).map((line) => `+${line}\n`).join('')}`;
      case 'delete':
        return `*** Delete File: ${op.path}\n`;
      case 'move':
        return op.edit === undefined ? `*** Move File: ${op.path} -> ${op.to}\n` : `*** Update File: ${op.path}\n*** Move to: ${op.to}\n${hunk(op.edit)}`;
    }
  });
  return `*** Begin Patch\n${sections.join('')}*** End Patch\n`;
}

function unifiedSection(op: Op, git: boolean, initial: Tree): string {
  const hunk = (edit: { old: readonly string[]; new: readonly string[]; start: number }) => {
    const changed = edit.old.findIndex((line, k) => line !== edit.new[k]);
    const body = edit.old.map((line, k) => (k === changed ? `-${line}\n+${edit.new[k]}\n` : ` ${line}\n`)).join('');
    return `@@ -${edit.start},${edit.old.length} +${edit.start},${edit.new.length} @@\n${body}`;
  };
  switch (op.kind) {
    case 'edit':
      return `${git ? `diff --git a/${op.path} b/${op.path}\n` : ''}--- a/${op.path}\n+++ b/${op.path}\n${hunk(op)}`;
    case 'add': {
      const lines = linesOf(op.text);
      return `${git ? `diff --git a/${op.path} b/${op.path}\nnew file mode 100644\n` : ''}--- /dev/null\n+++ b/${op.path}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((line) => `+${line}\n`).join('')}`;
    }
    case 'delete': {
      const lines = linesOf(initial.get(op.path)!);
      return `${git ? `diff --git a/${op.path} b/${op.path}\ndeleted file mode 100644\n` : ''}--- a/${op.path}\n+++ /dev/null\n@@ -1,${lines.length} +0,0 @@\n${lines.map((line) => `-${line}\n`).join('')}`;
    }
    case 'move': {
      // As git writes it: a pure rename is 100% similar (one below that, with no hunk, is a diff cut off).
      const header = `diff --git a/${op.path} b/${op.to}\nsimilarity index ${op.edit === undefined ? 100 : 90}%\nrename from ${op.path}\nrename to ${op.to}\n`;
      return op.edit === undefined ? header : `${header}--- a/${op.path}\n+++ b/${op.to}\n${hunk(op.edit)}`;
    }
  }
}

// ─── Disk ────────────────────────────────────────────────────────────────────────────────────────

/** Every file under `root`, and every one patchd may have left behind (temp files, dot names). */
function readTree(root: string): { tree: Tree; strays: string[] } {
  const tree = readTextTree(root);
  const strays = [...tree.keys()].filter((path) => path.split('/').some((part) => part.startsWith('.') || part.includes('.patchd')));
  return { tree, strays };
}

const treeKey = (tree: Tree) => [...tree].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, text]) => `${path}:${sha256(text)}`).join(',');

// ─── The oracle ──────────────────────────────────────────────────────────────────────────────────

/** A committed receipt: the ops of its patch that it lists (all, or a partial prefix). */
interface Unit {
  readonly patch: Patch;
  readonly receipt: Receipt;
  readonly ops: readonly Op[];
}

/** The unit's effect on `tree` when it can come next there (pins, context, hashes); else why not. */
function stepOf(unit: Unit, tree: Tree): Map<string, State> | string {
  for (const [path, pin] of Object.entries(unit.patch.options.expectedSha256ByPath ?? {})) {
    if (hashOf(stateOf(tree, path)) !== pin) return `the pin of ${path} does not hold`;
  }
  const effect = effectOfAll(unit.ops, tree);
  if (typeof effect === 'string') return effect;
  for (const op of unit.ops) {
    const file = unit.receipt.files.find((entry) => entry.path === receiptPath(op))!;
    const before = hashOf(stateOf(tree, op.path));
    const after = hashOf(effect.get(receiptPath(op)) ?? null);
    if ((file.sha256Before ?? '') !== before) return `${file.path}: sha256Before ${short(file.sha256Before)}, the model holds ${short(before)}`;
    if ((file.sha256After ?? '') !== after) return `${file.path}: sha256After ${short(file.sha256After)}, the model makes ${short(after)}`;
  }
  return effect;
}

/**
 * A serial order of the units that the model can follow from `initial` to `final`, or the
 * longest prefix found. Depth-first over the enabled units; a unit whose paths no other
 * remaining unit names commutes with all of them and is taken without branching.
 */
function findOrder(units: readonly Unit[], initial: Tree, final: Tree): { order: number[]; found: boolean; tree: Tree } {
  const finalKey = treeKey(final);
  const seen = new Set<string>();
  let budget = 100_000;
  let best: { order: number[]; tree: Tree } = { order: [], tree: initial };
  const order: number[] = [];
  const remaining = new Set(units.map((_, index) => index));
  const dfs = (tree: Tree): boolean => {
    if (order.length > best.order.length || (order.length === best.order.length && remaining.size === 0)) best = { order: [...order], tree };
    if (remaining.size === 0) return treeKey(tree) === finalKey;
    const key = `${[...remaining].join(',')}|${treeKey(tree)}`;
    if (seen.has(key) || --budget < 0) return false;
    seen.add(key);
    const enabled: [number, Map<string, State>][] = [];
    for (const index of remaining) {
      const effect = stepOf(units[index]!, tree);
      if (typeof effect !== 'string') enabled.push([index, effect]);
    }
    const alone = enabled.find(([index]) => [...remaining].every((other) => other === index
      || ![...units[other]!.patch.paths].some((path) => units[index]!.patch.paths.has(path))));
    for (const [index, effect] of alone === undefined ? enabled : [alone]) {
      remaining.delete(index);
      order.push(index);
      if (dfs(applyEffect(tree, effect))) return true;
      order.pop();
      remaining.add(index);
    }
    return false;
  };
  const found = dfs(initial);
  return found ? { order, found, tree: final } : { ...best, found };
}

/** Each path's history, in the order found: the states it held (for dry runs) and who made them. */
function histories(units: readonly Unit[], order: readonly number[], initial: Tree): Map<string, Set<string>> {
  const seen = new Map<string, Set<string>>();
  const note = (tree: Tree) => {
    for (const path of ALL_PATHS) {
      if (!seen.has(path)) seen.set(path, new Set());
      seen.get(path)!.add(hashOf(stateOf(tree, path)));
    }
  };
  let tree = initial;
  note(tree);
  for (const index of order) {
    const effect = stepOf(units[index]!, tree);
    if (typeof effect === 'string') break;
    tree = applyEffect(tree, effect);
    note(tree);
  }
  return seen;
}

function describeReceipt(receipt: Receipt): string {
  const files = receipt.files.map((file) => `${file.op} ${file.fromPath === undefined ? '' : `${file.fromPath} -> `}${file.path} ${short(file.sha256Before)}→${short(file.sha256After)}`);
  return `${receipt.status}${receipt.error === undefined ? '' : ` ${receipt.error.code} (${receipt.error.message})`}${files.length === 0 ? '' : ` [${files.join('; ')}]`}`;
}

// ─── One run ─────────────────────────────────────────────────────────────────────────────────────

async function runBurst(clients: readonly PatchClient[], initialFiles: Readonly<Record<string, string>>, choices: readonly PatchChoice[]): Promise<void> {
  const initial: Tree = new Map(Object.entries(initialFiles));
  const patches: Patch[] = [];
  for (const choice of choices) {
    const index = patches.length;
    if (choice.dup !== null && index > 0) {
      const original = patches[choice.dup % index]!;
      patches.push({ ...original, index, client: choice.client, label: `${original.label} (again, as #${original.index})` });
      continue;
    }
    const resolved = resolvePatch(choice, index, initial);
    if (resolved !== undefined) patches.push({ ...resolved, index, client: choice.client });
  }
  using tree = createTempTree(initialFiles);
  const workspaces: Workspace[] = await Promise.all(clients.map((client) => client.openWorkspace(tree.root)));
  const log = [`initial tree: ${[...initial.keys()].sort().map((path) => `${path} ${short(sha256(initial.get(path)!))}`).join(', ')}`];
  let receipts: Receipt[] = [];
  try {
    receipts = await Promise.all(patches.map((patch) => workspaces[patch.client]!.apply(patch.text, patch.options)));
    for (const patch of patches) {
      log.push(`#${patch.index} client ${patch.client} ${patch.label}\n${patch.text.replace(/^/gm, '      | ')}\n    -> ${describeReceipt(receipts[patch.index]!)}`);
    }
    const disk = readTree(tree.root);
    log.push(`disk: ${[...disk.tree.keys()].sort().map((path) => `${path} ${short(sha256(disk.tree.get(path)!))}`).join(', ')}`);
    assert.deepEqual(disk.strays, [], 'no temp or dot file may be left in the tree');

    // Every receipt: a status and code a race explains, files that are the patch's own.
    const units: Unit[] = [];
    for (const patch of patches) {
      const receipt = receipts[patch.index]!;
      count(receipt.status === 'rejected' ? `rejected ${receipt.error?.code}` : receipt.status);
      if (receipt.status === 'rejected') {
        assert.ok(RACE_CODES.has(receipt.error?.code ?? ''), `#${patch.index}: rejected with ${receipt.error?.code}, which no race explains: ${receipt.error?.message}`);
        continue;
      }
      assert.equal(receipt.status === 'dry_run', patch.options.dryRun === true, `#${patch.index}: dry_run exactly for a dry run, not ${receipt.status}`);
      const listed = receipt.files.map((file) => `${file.fromPath ?? ''}>${file.path}`);
      const own = patch.ops.map((op) => `${op.kind === 'move' ? op.path : ''}>${receiptPath(op)}`);
      if (receipt.status === 'partial') {
        assert.equal(patch.options.atomic, false, `#${patch.index}: partial without atomic: false`);
        assert.ok(RACE_CODES.has(receipt.error?.code ?? ''), `#${patch.index}: partial with ${receipt.error?.code}`);
        assert.deepEqual(listed, own.slice(0, listed.length), `#${patch.index}: a partial receipt lists a prefix of the patch's files`);
        assert.ok(listed.length > 0 && listed.length < own.length, `#${patch.index}: a partial receipt lists a proper prefix`);
      } else assert.deepEqual([...listed].sort(), [...own].sort(), `#${patch.index}: the receipt lists the patch's files`);
      if (receipt.status !== 'dry_run') units.push({ patch, receipt, ops: patch.ops.filter((op) => listed.includes(`${op.kind === 'move' ? op.path : ''}>${receiptPath(op)}`)) });
    }

    // Linearizability: the committed receipts in some serial order, from the initial tree to the disk.
    const { order, found, tree: reached } = findOrder(units, initial, disk.tree);
    log.push(`serial order${found ? '' : ' (longest prefix found)'}: ${order.map((index) => `#${units[index]!.patch.index}`).join(' ')}`);
    if (!found) {
      const stuck = units.map((unit, index) => [unit, index] as const).filter(([, index]) => !order.includes(index))
        .map(([unit]) => `#${unit.patch.index}: ${(() => {
          const step = stepOf(unit, reached);
          return typeof step === 'string' ? step : 'could come next';
        })()}`);
      const mismatch = [...new Set([...reached.keys(), ...disk.tree.keys()])].sort()
        .filter((path) => stateOf(reached, path) !== stateOf(disk.tree, path))
        .map((path) => `${path}: model ${short(hashOf(stateOf(reached, path)))}, disk ${short(hashOf(stateOf(disk.tree, path)))}`);
      assert.fail(`no serial order of the ${units.length} committed receipts explains the disk\n  after the prefix: ${stuck.join('\n    ') || 'every receipt placed'}\n  model vs disk: ${mismatch.join('; ') || 'equal'}`);
    }
    count('bursts linearized');

    // Dry runs saw states their paths held; isolated patches end as the initial tree says.
    const held = histories(units, order, initial);
    for (const patch of patches) {
      const receipt = receipts[patch.index]!;
      if (receipt.status === 'dry_run') {
        for (const file of receipt.files) {
          const path = file.fromPath ?? file.path;
          assert.ok(held.get(path)!.has(file.sha256Before ?? ''), `#${patch.index}: a dry run saw ${path} at ${short(file.sha256Before)}, a state it never held`);
        }
      }
      const shared = patches.some((other) => other !== patch && other.options.dryRun !== true && [...other.paths].some((path) => patch.paths.has(path)));
      if (shared) continue;
      count('isolated patches');
      const pinsHold = Object.entries(patch.options.expectedSha256ByPath ?? {}).every(([path, pin]) => hashOf(stateOf(initial, path)) === pin);
      const fits = typeof effectOfAll(patch.ops, initial) !== 'string';
      const expected = !pinsHold || !fits ? 'rejected' : patch.options.dryRun === true ? 'dry_run' : 'applied';
      assert.equal(receipt.status, expected, `#${patch.index} touches no path another patch touches: ${expected}${pinsHold ? '' : ' (stale pins)'}${fits ? '' : ' (does not fit the tree)'}`);
      if (!pinsHold) assert.equal(receipt.error?.code, 'stale_file', `#${patch.index}: wrong pins are stale_file`);
    }
  } catch (error) {
    throw new Error(`${(error as Error).message}\nPATCHD_TEST_SEED=${SEED}\nburst:\n${log.map((line) => `  ${line}`).join('\n')}`, { cause: error });
  } finally {
    await Promise.all(workspaces.map((workspace) => workspace.close()));
  }
}

describe('concurrent bursts against a model', () => {
  let daemon: SocketDaemon;
  let clients: PatchClient[] = [];
  before(async () => {
    daemon = await SocketDaemon.start();
    clients = await Promise.all(Array.from({ length: CLIENTS }, () => daemon.connect()));
  });
  after(async () => {
    await daemon[Symbol.asyncDispose]();
  });

  test('every burst of overlapping patches is linearizable: the committed receipts in one serial order make the disk', async (t) => {
    t.diagnostic(`PATCHD_TEST_SEED=${SEED}`);
    await fc.assert(
      fc.asyncProperty(initialArb, burstArb, (initial, burst) => runBurst(clients, initial, burst)),
      { numRuns: RUNS, seed: SEED, endOnFailure: !SHRINK, includeErrorInReport: true, ...(REPLAY_PATH === undefined ? {} : { path: REPLAY_PATH }) },
    );
    t.diagnostic([...stats].sort(([a], [b]) => (a < b ? -1 : 1)).map(([what, n]) => `${what}: ${n}`).join(', '));
  });
});
