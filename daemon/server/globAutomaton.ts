/**
 * Running a glob's automaton (see `pathGlob.ts`) over a path as a DFA built lazily, as RE2
 * does: a DFA state is the set of the automaton's character steps active at once. A state's
 * transition on a character is built the first time it is taken — one look at each of its
 * steps, then the steps reachable without reading (splits followed, each step once) — and kept,
 * so that a path through states already built costs one lookup per character. Building costs at
 * most the automaton's size, whatever the globs: no backtracking, no blow-up. (A class step
 * looks by binary search, `globClass.ts`: probes of about the log of its ranges, fewer than the
 * characters it is written with.) What it costs, probes included, is counted against a
 * `GlobBudget` shared by every path of one patch; once that is spent the run stops and answers
 * `undefined`. Built states are kept up to `MAX_KEPT`, then dropped whole and built again as
 * needed.
 */
import type { CharClass } from './globClass.ts';

/** What a character step accepts: one code point, any character, any but `/`, or a class. */
export type CharTest = number | 'any' | 'notSlash' | CharClass;

export type Step =
  | { readonly kind: 'char'; readonly test: CharTest; next: number }
  | { readonly kind: 'split'; next: number[] }
  | { readonly kind: 'match' };

/**
 * Work allowed for building states: steps looked at (about 10–40 ns each), a class step once
 * more per probe of its search (see `CharClass.searchSteps`). Shared by every match it is given to.
 */
export class GlobBudget {
  #spent = 0;

  constructor(readonly limit: number) {}

  /** Steps counted so far; past the limit by what the last count asked for, once spent. */
  get spent(): number {
    return this.#spent;
  }

  /** Counts `steps`; false once more than the limit have been counted in all. */
  spend(steps: number): boolean {
    this.#spent += steps;
    return this.#spent <= this.limit;
  }
}

interface State {
  /** The automaton's character steps active, ascending. */
  readonly steps: Int32Array;
  readonly accepting: boolean;
  /** What looking at its steps for a character costs (see `GlobBudget`). */
  readonly lookCost: number;
  /** Transitions built so far, by code point. */
  readonly next: Map<number, State>;
}

interface StepSet {
  readonly steps: Int32Array;
  readonly accepting: boolean;
  /** Steps looked at to find it. */
  readonly cost: number;
}

/**
 * Step indices and transitions held by built states before they are dropped (about 30 bytes
 * each: tens of MB at most, per list; real policies hold a few thousand). Transitions count: a
 * few states can gather one per code point a path ever used, without end.
 */
const MAX_KEPT = 1 << 20;

const SPLIT = -1;
const MATCH = -2;
const ANY = -3;
const NOT_SLASH = -4;
const CLASS = -5;
const SLASH = 0x2f;

export class GlobAutomaton {
  /** Per step: the code point a character step accepts, or ANY, NOT_SLASH, CLASS; SPLIT, MATCH for the others. */
  readonly #test: Int32Array;
  /** Per character step: the step after it. */
  readonly #next: Int32Array;
  readonly #classes = new Map<number, CharClass>();
  /** Split step `i` goes on to `#splitTo[#splitFrom[i]]` … `#splitTo[#splitFrom[i + 1] - 1]`. */
  readonly #splitFrom: Int32Array;
  readonly #splitTo: Int32Array;
  /** Scratch space of `#closure`: what is still to follow (every edge at most once), what it found. */
  readonly #pending: Int32Array;
  readonly #found: Int32Array;
  /** Per step, the closure that last reached it (`#epoch`): each step is followed once per closure. */
  readonly #seen: Uint32Array;
  #epoch = 0;
  #start: State;
  /** Built states by hash of their steps. */
  #states = new Map<number, State[]>();
  #kept = 0;

  constructor(steps: readonly Step[], start: number) {
    const count = steps.length;
    this.#test = new Int32Array(count);
    this.#next = new Int32Array(count);
    this.#splitFrom = new Int32Array(count + 1);
    const targets: number[] = [];
    steps.forEach((step, index) => {
      this.#splitFrom[index] = targets.length;
      if (step.kind === 'split') targets.push(...step.next);
      this.#test[index] = step.kind === 'split' ? SPLIT : step.kind === 'match' ? MATCH : this.#testCode(index, step.test);
      if (step.kind === 'char') this.#next[index] = step.next;
    });
    this.#splitFrom[count] = targets.length;
    this.#splitTo = Int32Array.from(targets);
    this.#pending = new Int32Array(count + targets.length + 1);
    this.#found = new Int32Array(count);
    this.#seen = new Uint32Array(count);
    this.#pending[0] = start;
    this.#start = this.#intern(this.#closure(1));
  }

  /** Step indices and transitions held by built states now (at most `MAX_KEPT`, and one state's worth). */
  get held(): number {
    return this.#kept;
  }

  /** Whether the automaton accepts `path`; undefined when `budget` runs out first. */
  run(path: string, budget: GlobBudget): boolean | undefined {
    let state = this.#start;
    for (let at = 0; at < path.length; ) {
      if (state.steps.length === 0) return false;
      const code = path.codePointAt(at)!;
      at += code > 0xffff ? 2 : 1;
      const next = state.next.get(code) ?? this.#follow(state, code, budget);
      if (next === undefined) return undefined;
      state = next;
    }
    return state.accepting;
  }

  #testCode(index: number, test: CharTest): number {
    if (typeof test === 'number') return test;
    if (test === 'any') return ANY;
    if (test === 'notSlash') return NOT_SLASH;
    this.#classes.set(index, test);
    return CLASS;
  }

  #follow(from: State, code: number, budget: GlobBudget): State | undefined {
    const { steps } = from;
    if (!budget.spend(from.lookCost)) return undefined;
    const tests = this.#test;
    let top = 0;
    for (let at = 0; at < steps.length; at++) {
      const index = steps[at]!;
      const test = tests[index]!;
      // A code point is never negative: `test === code` is a literal that matches.
      if (test === code || test === ANY || (test === NOT_SLASH && code !== SLASH) || (test === CLASS && this.#inClass(index, code))) this.#pending[top++] = this.#next[index]!;
    }
    const reached = this.#closure(top);
    if (!budget.spend(reached.cost)) return undefined;
    const state = this.#intern(reached);
    if (this.#kept >= MAX_KEPT) this.#forget(); // this run goes on through `state`; the next starts afresh
    else {
      from.next.set(code, state);
      this.#kept += 1;
    }
    return state;
  }

  #inClass(index: number, code: number): boolean {
    return this.#classes.get(index)!.has(code);
  }

  #lookCost(steps: Int32Array): number {
    let cost = steps.length;
    for (const index of steps) if (this.#test[index] === CLASS) cost += this.#classes.get(index)!.searchSteps;
    return cost;
  }

  /** The character steps reachable without reading a character from the `top` first steps of `#pending`, and whether the match is. */
  #closure(from: number): StepSet {
    const epoch = this.#nextEpoch();
    const pending = this.#pending;
    const found = this.#found;
    let top = from;
    let count = 0;
    let accepting = false;
    let cost = 0;
    while (top > 0) {
      const index = pending[--top]!;
      cost += 1;
      if (this.#seen[index] === epoch) continue;
      this.#seen[index] = epoch;
      const test = this.#test[index]!;
      if (test === SPLIT) for (let edge = this.#splitFrom[index]!; edge < this.#splitFrom[index + 1]!; edge++) pending[top++] = this.#splitTo[edge]!;
      else if (test === MATCH) accepting = true;
      else found[count++] = index;
    }
    // Sorting, hashing and keeping the set cost about its size again.
    return { steps: found.slice(0, count).sort(), accepting, cost: cost + count };
  }

  #intern({ steps, accepting }: StepSet): State {
    const key = hashOf(steps, accepting);
    const bucket = this.#states.get(key);
    const known = bucket?.find((state) => state.accepting === accepting && sameSteps(state.steps, steps));
    if (known !== undefined) return known;
    if (this.#kept + steps.length > MAX_KEPT) this.#forget();
    const state: State = { steps, accepting, lookCost: this.#lookCost(steps), next: new Map() };
    const kept = this.#states.get(key);
    if (kept === undefined) this.#states.set(key, [state]);
    else kept.push(state);
    this.#kept += steps.length + 1;
    return state;
  }

  /** Drops every built state; the start is built anew (a run under way goes on through the old ones). */
  #forget(): void {
    const { steps, accepting, lookCost } = this.#start;
    this.#states = new Map();
    this.#kept = 0;
    this.#start = { steps, accepting, lookCost, next: new Map() };
    this.#states.set(hashOf(steps, accepting), [this.#start]);
    this.#kept = steps.length + 1;
  }

  #nextEpoch(): number {
    if (this.#epoch === 0xffff_ffff) {
      this.#seen.fill(0);
      this.#epoch = 0;
    }
    return ++this.#epoch;
  }
}

function hashOf(steps: Int32Array, accepting: boolean): number {
  let hash = accepting ? 0x9e37_79b9 : 0x811c_9dc5;
  for (const step of steps) hash = Math.imul(hash ^ step, 0x0100_0193);
  return hash;
}

function sameSteps(a: Int32Array, b: Int32Array): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}
