/**
 * Paths of one patch that lie one inside the other (`a/b` and `a/b/c`). A path is a file or a
 * directory, never both, so most such pairs cannot be committed as written; they are refused
 * before any of the patch's files is planned (so before anything is written), naming both paths.
 *
 * Two pairs are what `git apply` does and real history holds: a patch that replaces a directory
 * by a file (delete `d/x`, add `d`; move `d/x` to `d`) or a file by a directory (delete `d`, add
 * `d/x`; move `d` to `d/x`). They pass when the side that makes the file is a creation (an add, a
 * whole-file write, a move's destination). The directories the patch replaces by a file are
 * told, so the plan sees them free; that nothing else is left in them is the workspace's to check,
 * as only it sees what they hold (`replacedDirectories.ts`).
 */
import { engineError, type EngineError } from './errors.ts';

/** What a patch does to its paths: a file patch or a planned file, as far as paths go. */
export interface PathEffect {
  readonly op: string;
  readonly path: string;
  readonly fromPath?: string | undefined;
}

/** A path the patch leaves as a file (`file`), or takes away (`gone`), and how it says so. */
interface Use {
  readonly path: string;
  readonly role: 'file' | 'gone';
  /** A file the patch makes where none was: an add, a whole-file write, a move's destination. */
  readonly creates: boolean;
  /** What the patch does there, for the message: "adds a", "deletes a", "moves a to b". */
  readonly phrase: string;
  /** The effect's position in the patch. */
  readonly order: number;
}

/** A path segment of the patch's paths: the use of the path ending there, and the first uses below it of each kind. */
interface Node {
  readonly children: Map<string, Node>;
  use?: Use;
  below?: Use;
  fileBelow?: Use;
  /** A file below that is not a creation: it must be there now. */
  changedBelow?: Use;
  goneBelow?: Use;
}

export interface PathNesting {
  /** The first pair (in patch order) that cannot be committed, as an error. */
  readonly conflict: EngineError | undefined;
  /** The paths the patch makes a file at while taking away a path below them: directories it replaces by a file. */
  readonly replacedDirectories: ReadonlySet<string>;
}

/**
 * The patch's paths checked against each other. Each path is walked once, a segment at a time
 * (slicing out every ancestor and hashing it cost the square of a deep path's length); the walk
 * goes on past the first conflict, so the replaced directories are all told either way (a series
 * reads them from all its parts and checks only its net effect for conflicts).
 */
export function nestPaths(effects: readonly PathEffect[]): PathNesting {
  const replacedDirectories = new Set<string>();
  let conflict: EngineError | undefined;
  if (effects.length < 2 && effects.every((effect) => effect.fromPath === undefined)) return { conflict, replacedDirectories };
  const root: Node = { children: new Map() };
  for (const use of effects.flatMap(usesOf)) {
    let node = root;
    for (const segment of use.path.split('/')) {
      const outer = node.use;
      if (outer !== undefined) {
        if (outer.creates && use.role === 'gone') replacedDirectories.add(outer.path);
        else if (!mayNest(outer, use)) conflict ??= conflictError(outer, use);
      }
      if (node !== root) noteBelow(node, use);
      let child = node.children.get(segment);
      if (child === undefined) node.children.set(segment, (child = { children: new Map() }));
      node = child;
    }
    if (use.creates && node.goneBelow !== undefined) replacedDirectories.add(use.path);
    const inner = use.role === 'gone' ? node.changedBelow : use.creates ? node.fileBelow : node.below;
    if (inner !== undefined) conflict ??= conflictError(use, inner);
    node.use = use;
  }
  return { conflict, replacedDirectories };
}

function noteBelow(node: Node, use: Use): void {
  node.below ??= use;
  if (use.role === 'gone') node.goneBelow ??= use;
  else node.fileBelow ??= use;
  if (use.role === 'file' && !use.creates) node.changedBelow ??= use;
}

/**
 * Whether `inner`, inside `outer`, may be in one patch with it: a file replaced by a directory, a
 * directory replaced by a file, or two paths taken away (one of which is not there: the plan says
 * which is missing).
 */
function mayNest(outer: Use, inner: Use): boolean {
  if (outer.role === 'gone') return inner.role === 'gone' || inner.creates;
  return outer.creates && inner.role === 'gone';
}

function usesOf(effect: PathEffect, order: number): Use[] {
  if (effect.op === 'rename' && effect.fromPath !== undefined) {
    const phrase = `moves ${effect.fromPath} to ${effect.path}`;
    return [{ path: effect.fromPath, role: 'gone', creates: false, phrase, order }, { path: effect.path, role: 'file', creates: true, phrase, order }];
  }
  if (effect.op === 'delete') return [{ path: effect.path, role: 'gone', creates: false, phrase: `deletes ${effect.path}`, order }];
  const verb = effect.op === 'add' ? 'adds' : effect.op === 'write' ? 'writes' : 'changes';
  return [{ path: effect.path, role: 'file', creates: effect.op === 'add' || effect.op === 'write', phrase: `${verb} ${effect.path}`, order }];
}

/** `outer` is an ancestor directory of `inner`, and the two cannot be in one patch. */
function conflictError(outer: Use, inner: Use): EngineError {
  // The receipt names the later of the two; a move, its destination.
  const path = inner.order === outer.order ? (inner.role === 'file' ? inner : outer).path : inner.order > outer.order ? inner.path : outer.path;
  const first = outer.order <= inner.order ? outer : inner;
  const second = first === outer ? inner : outer;
  const did = `The patch ${first.phrase}${first.order === second.order ? '' : ` and ${second.phrase}`}`;
  if (outer.role === 'file' && inner.role === 'file') {
    return engineError('already_exists', `${did}: ${outer.path} cannot be both a file and a directory holding ${inner.path}. Keep one of them, or give one another path.`, { path });
  }
  // One is taken away, so it must be a file now; the other is changed (not made), so it must be there now too.
  const why = outer.role === 'gone' ? `to be taken away, and a directory holding ${inner.path}, to be changed` : `to be changed, and a directory holding ${inner.path}, to be taken away`;
  const message = `${did}: ${outer.path} would have to be a file now, ${why}. A file that replaces a directory, or a directory that replaces a file, is made new (added), never changed.`;
  return engineError('not_found', message, { path });
}
