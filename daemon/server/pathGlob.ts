/**
 * Globs over workspace-relative POSIX paths, for the approval `ask`/`deny` lists: `*` (any run
 * within a segment), `**` as a whole segment (any number of segments), `?` (one character but
 * `/`), `[abc]` `[a-z]` `[!a]` classes, `{a,b}` alternatives (nestable) and `\` escapes.
 * A leading dot is an ordinary character, so `secrets/**` covers `secrets/.key`: a deny list
 * must not miss dot files. Unclosed `[` and `{` are literal.
 *
 * Globs come from clients, so matching must not backtrack: each list of globs compiles to one
 * automaton (Thompson's), run over the path in one pass as a DFA built lazily (see
 * `globAutomaton.ts`): a path costs one step per character once the states it goes through
 * are built, and building one costs at most the automaton's size — time linear in path length
 * × glob length, whatever the globs. Built states are kept for the next path. What building
 * costs is counted against a `GlobBudget`, so that a client's globs and paths built to be slow
 * cannot hold the daemon's thread for long: past it, matching answers `undefined`.
 */
import { GlobAutomaton, GlobBudget, type CharTest, type Step } from './globAutomaton.ts';
import { CharClass } from './globClass.ts';

export { GlobBudget };

type Node =
  | { readonly kind: 'char'; readonly test: CharTest }
  | { readonly kind: 'run'; readonly crossesSegments: boolean }
  | { readonly kind: 'oneOf'; readonly options: readonly Node[][] }
  | { readonly kind: 'optional'; readonly body: readonly Node[] };

/** The index of the step that accepts. */
const MATCH = 0;

/** Globs compiled together: `matches` tells whether any of them matches a path. */
export class PathGlobSet {
  readonly #automaton: GlobAutomaton;

  constructor(sources: readonly string[]) {
    const compiler = new Compiler();
    // Duplicates add nothing but work.
    const entries = [...new Set(sources)].map((source) => compiler.emitSequence(new GlobParser(source).parse(), MATCH));
    this.#automaton = new GlobAutomaton(compiler.steps, compiler.push({ kind: 'split', next: entries }));
  }

  /** Whether any glob matches `path`; undefined when `budget` runs out first. */
  matches(path: string, budget: GlobBudget): boolean | undefined {
    return this.#automaton.run(path, budget);
  }

  /** What the built states hold (see `GlobAutomaton.held`): bounded however many paths it has seen. */
  get held(): number {
    return this.#automaton.held;
  }
}

/** One glob (see `PathGlobSet`). */
export class PathGlob {
  readonly #set: PathGlobSet;

  constructor(readonly source: string) {
    this.#set = new PathGlobSet([source]);
  }

  /** Unbounded: a path still costs at most its length × the glob's. */
  matches(path: string): boolean {
    return this.#set.matches(path, new GlobBudget(Infinity)) === true;
  }
}

/** Emits parsed globs as the steps of one automaton. */
class Compiler {
  readonly steps: Step[] = [{ kind: 'match' }];

  /** Emits `nodes` so that they continue at step `next`; returns the first step. */
  emitSequence(nodes: readonly Node[], next: number): number {
    let entry = next;
    for (let index = nodes.length - 1; index >= 0; index--) entry = this.#emitNode(nodes[index]!, entry);
    return entry;
  }

  push(step: Step): number {
    this.steps.push(step);
    return this.steps.length - 1;
  }

  #emitNode(node: Node, next: number): number {
    switch (node.kind) {
      case 'char':
        return this.push({ kind: 'char', test: node.test, next });
      case 'run': {
        const loop: Step = { kind: 'split', next: [] };
        const loopIndex = this.push(loop);
        const charIndex = this.push({ kind: 'char', test: node.crossesSegments ? 'any' : 'notSlash', next: loopIndex });
        loop.next.push(charIndex, next);
        return loopIndex;
      }
      case 'oneOf':
        return this.push({ kind: 'split', next: node.options.map((option) => this.emitSequence(option, next)) });
      case 'optional':
        return this.push({ kind: 'split', next: [this.emitSequence(node.body, next), next] });
    }
  }
}

class GlobParser {
  #at = 0;
  /** Per position, where a look for the end of a class or a brace starting there ends (see `closers`), computed once, when first needed. */
  #classClosers: Int32Array | undefined;
  #braceClosers: Int32Array | undefined;

  constructor(private readonly source: string) {}

  parse(): Node[] {
    return this.#sequence(false).nodes;
  }

  /** Reads up to the end, or inside braces up to the `,` or `}` that ends this option. */
  #sequence(inBraces: boolean): { nodes: Node[]; end: 'comma' | 'close' | 'end' } {
    const nodes: Node[] = [];
    const { source } = this;
    while (this.#at < source.length) {
      const char = source[this.#at]!;
      if (inBraces && (char === ',' || char === '}')) {
        this.#at++;
        return { nodes, end: char === ',' ? 'comma' : 'close' };
      }
      if (char === '*') nodes.push(...this.#stars());
      else if (char === '?') (this.#at++, nodes.push({ kind: 'char', test: 'notSlash' }));
      else if (char === '[' && this.#classEnd() !== undefined) nodes.push(this.#characterClass());
      else if (char === '{' && this.#braceEnd() !== undefined) nodes.push(this.#alternatives());
      else nodes.push(literal(this.#literalChar()));
    }
    return { nodes, end: 'end' };
  }

  /** `**` alone between separators is a globstar; any other run of stars is `*`. */
  #stars(): Node[] {
    const { source } = this;
    const from = this.#at;
    while (source[this.#at] === '*') this.#at++;
    const before = source[from - 1];
    const after = source[this.#at];
    const isGlobstar = this.#at - from === 2 && (before === undefined || '/{,'.includes(before)) && (after === undefined || '/},'.includes(after));
    if (!isGlobstar) return [{ kind: 'run', crossesSegments: false }];
    if (after === '/') {
      this.#at++;
      return [{ kind: 'optional', body: [{ kind: 'run', crossesSegments: true }, literal('/')] }];
    }
    // At the end: one segment or more (`a/**` is what is under `a`, not `a` itself).
    return [{ kind: 'char', test: 'any' }, { kind: 'run', crossesSegments: true }];
  }

  #literalChar(): string {
    const { source } = this;
    if (source[this.#at] === '\\' && this.#at + 1 < source.length) this.#at++;
    const char = String.fromCodePoint(source.codePointAt(this.#at)!);
    this.#at += char.length;
    return char;
  }

  #alternatives(): Node {
    this.#at++;
    const options: Node[][] = [];
    for (;;) {
      const { nodes, end } = this.#sequence(true);
      options.push(nodes);
      if (end !== 'comma') return { kind: 'oneOf', options };
    }
  }

  /** Index of the `}` closing the `{` at the cursor, if any (`\\` escapes; braces nest). */
  #braceEnd(): number | undefined {
    const end = (this.#braceClosers ??= closers(this.source, true))[this.#at + 1]!;
    return end < 0 ? undefined : end;
  }

  /** Index of the `]` closing the `[` at the cursor, if any (a `]` first in the class is a member). */
  #classEnd(): number | undefined {
    let index = this.#at + 1;
    if (this.source[index] === '!' || this.source[index] === '^') index++;
    if (this.source[index] === ']') index++;
    const end = (this.#classClosers ??= closers(this.source, false))[index]!;
    return end < 0 ? undefined : end;
  }

  #characterClass(): Node {
    const end = this.#classEnd()!;
    this.#at++;
    const negated = this.source[this.#at] === '!' || this.source[this.#at] === '^';
    if (negated) this.#at++;
    const ranges: [number, number][] = [];
    while (this.#at < end) {
      const low = this.#literalChar().codePointAt(0)!;
      if (this.source[this.#at] === '-' && this.#at + 1 < end) {
        this.#at++;
        ranges.push([low, this.#literalChar().codePointAt(0)!]);
      } else ranges.push([low, low]);
    }
    this.#at = end + 1;
    return { kind: 'char', test: new CharClass(ranges, negated) };
  }
}

/**
 * For each position, where a scan from there for the closing `]` (or, with `braces`, for the `}`
 * closing a brace already open) ends: its index, -1 if the glob ends first. A `\\` hides the
 * character after it; braces opened on the way must close first. Computed from the end, each
 * position from later ones: linear, where scanning from each `{` or `[` was quadratic (a glob
 * of 999 `{` took 5 ms to parse, a policy of 100 of them half a second).
 */
function closers(source: string, braces: boolean): Int32Array {
  const ends = new Int32Array(source.length + 2).fill(-1);
  for (let index = source.length - 1; index >= 0; index--) {
    const char = source[index];
    if (char === '\\') ends[index] = ends[index + 2]!;
    else if (char === (braces ? '}' : ']')) ends[index] = index;
    else if (braces && char === '{') {
      const nested = ends[index + 1]!;
      ends[index] = nested < 0 ? -1 : ends[nested + 1]!;
    } else ends[index] = ends[index + 1]!;
  }
  return ends;
}

function literal(expected: string): Node {
  return { kind: 'char', test: expected.codePointAt(0)! };
}
