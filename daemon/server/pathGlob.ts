/**
 * Globs over workspace-relative POSIX paths, for the approval `ask`/`deny` lists: `*` (any run
 * within a segment), `**` as a whole segment (any number of segments), `?` (one character but
 * `/`), `[abc]` `[a-z]` `[!a]` classes, `{a,b}` alternatives (nestable) and `\` escapes.
 * A leading dot is an ordinary character, so `secrets/**` covers `secrets/.key`: a deny list
 * must not miss dot files. Unclosed `[` and `{` are literal.
 *
 * Globs come from clients, so matching must not backtrack: a glob compiles to a small
 * automaton that is run over the path in one pass (time: path length × glob length).
 */

type Step =
  | { readonly kind: 'char'; readonly accepts: (char: string) => boolean; next: number }
  | { readonly kind: 'split'; next: number[] }
  | { readonly kind: 'match' };

type Node =
  | { readonly kind: 'char'; readonly accepts: (char: string) => boolean }
  | { readonly kind: 'run'; readonly crossesSegments: boolean }
  | { readonly kind: 'oneOf'; readonly options: readonly Node[][] }
  | { readonly kind: 'optional'; readonly body: readonly Node[] };

const anyButSlash = (char: string): boolean => char !== '/';
const anyChar = (): boolean => true;

export class PathGlob {
  readonly #steps: Step[] = [{ kind: 'match' }];
  readonly #start: number;

  constructor(readonly source: string) {
    this.#start = this.#emitSequence(new GlobParser(source).parse(), 0);
  }

  matches(path: string): boolean {
    let current = this.#closure([this.#start]);
    for (const char of path) {
      const next: number[] = [];
      for (const index of current) {
        const step = this.#steps[index];
        if (step?.kind === 'char' && step.accepts(char)) next.push(step.next);
      }
      if (next.length === 0) return false;
      current = this.#closure(next);
    }
    return current.some((index) => this.#steps[index]?.kind === 'match');
  }

  /** The steps reachable from `indices` without reading a character (splits followed). */
  #closure(indices: readonly number[]): number[] {
    const seen = new Set<number>();
    const pending = [...indices];
    while (pending.length > 0) {
      const index = pending.pop()!;
      if (seen.has(index)) continue;
      seen.add(index);
      const step = this.#steps[index];
      if (step?.kind === 'split') pending.push(...step.next);
    }
    return [...seen];
  }

  /** Emits `nodes` so that they continue at step `next`; returns the first step. */
  #emitSequence(nodes: readonly Node[], next: number): number {
    let entry = next;
    for (let index = nodes.length - 1; index >= 0; index--) entry = this.#emitNode(nodes[index]!, entry);
    return entry;
  }

  #emitNode(node: Node, next: number): number {
    switch (node.kind) {
      case 'char':
        return this.#push({ kind: 'char', accepts: node.accepts, next });
      case 'run': {
        const loop: Step = { kind: 'split', next: [] };
        const loopIndex = this.#push(loop);
        const charIndex = this.#push({ kind: 'char', accepts: node.crossesSegments ? anyChar : anyButSlash, next: loopIndex });
        loop.next.push(charIndex, next);
        return loopIndex;
      }
      case 'oneOf':
        return this.#push({ kind: 'split', next: node.options.map((option) => this.#emitSequence(option, next)) });
      case 'optional':
        return this.#push({ kind: 'split', next: [this.#emitSequence(node.body, next), next] });
    }
  }

  #push(step: Step): number {
    this.#steps.push(step);
    return this.#steps.length - 1;
  }
}

/** Whether any of `globs` matches `path`. */
export function matchesAnyGlob(path: string, globs: readonly PathGlob[]): boolean {
  return globs.some((glob) => glob.matches(path));
}

class GlobParser {
  #at = 0;

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
      else if (char === '?') (this.#at++, nodes.push({ kind: 'char', accepts: anyButSlash }));
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
    return [{ kind: 'char', accepts: anyChar }, { kind: 'run', crossesSegments: true }];
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

  /** Index of the `}` closing the `{` at the cursor, if any. */
  #braceEnd(): number | undefined {
    let depth = 0;
    for (let index = this.#at; index < this.source.length; index++) {
      const char = this.source[index];
      if (char === '\\') index++;
      else if (char === '{') depth++;
      else if (char === '}' && --depth === 0) return index;
    }
    return undefined;
  }

  /** Index of the `]` closing the `[` at the cursor, if any (a `]` first in the class is a member). */
  #classEnd(): number | undefined {
    let index = this.#at + 1;
    if (this.source[index] === '!' || this.source[index] === '^') index++;
    if (this.source[index] === ']') index++;
    for (; index < this.source.length; index++) {
      const char = this.source[index];
      if (char === '\\') index++;
      else if (char === ']') return index;
    }
    return undefined;
  }

  #characterClass(): Node {
    const end = this.#classEnd()!;
    this.#at++;
    const negated = this.source[this.#at] === '!' || this.source[this.#at] === '^';
    if (negated) this.#at++;
    const ranges: [string, string][] = [];
    while (this.#at < end) {
      const low = this.#literalChar();
      if (this.source[this.#at] === '-' && this.#at + 1 < end) {
        this.#at++;
        ranges.push([low, this.#literalChar()]);
      } else ranges.push([low, low]);
    }
    this.#at = end + 1;
    const inClass = (char: string): boolean => ranges.some(([low, high]) => char >= low && char <= high);
    return { kind: 'char', accepts: (char) => char !== '/' && inClass(char) !== negated };
  }
}

function literal(expected: string): Node {
  return { kind: 'char', accepts: (char) => char === expected };
}
