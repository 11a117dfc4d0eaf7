/**
 * Paths of one patch that contradict each other: one inside the other as if it were a directory
 * (`a/b` and `a/b/c`). A path is a file or a directory, never both, so such a patch cannot be
 * committed as written; it is refused before any of its files is planned (so before anything is
 * written), naming both paths.
 *
 * Git applies a patch that replaces a directory by a file, or a file by a directory (delete
 * `d/x` and add `d`, or the reverse): patchd does not, in one patch — its commit renames staged
 * files into place and would have to remove or make the directory between two renames. It is
 * refused the same way, saying to split it in two (the first patch's delete takes the emptied
 * directory with it).
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
  /** What the patch does there, for the message: "adds a", "deletes a", "moves a to b". */
  readonly phrase: string;
  /** The effect's position in the patch. */
  readonly order: number;
}

/** A path segment of the patch's paths: the use of the path ending there, and the first uses below it. */
interface Node {
  readonly children: Map<string, Node>;
  use?: Use;
  below?: Use;
  fileBelow?: Use;
}

/**
 * The first pair of paths (in patch order) one of which lies inside the other, as an error;
 * undefined when there is none. Each path is walked once, a segment at a time (slicing out
 * every ancestor and hashing it cost the square of a deep path's length).
 */
export function findPathConflict(effects: readonly PathEffect[]): EngineError | undefined {
  if (effects.length < 2 && effects.every((effect) => effect.fromPath === undefined)) return undefined;
  const root: Node = { children: new Map() };
  for (const use of effects.flatMap(usesOf)) {
    let node = root;
    for (const segment of use.path.split('/')) {
      const outer = node.use;
      if (outer !== undefined && !(outer.role === 'gone' && use.role === 'gone')) return conflictError(outer, use);
      if (node !== root) {
        node.below ??= use;
        if (use.role === 'file') node.fileBelow ??= use;
      }
      let child = node.children.get(segment);
      if (child === undefined) node.children.set(segment, (child = { children: new Map() }));
      node = child;
    }
    const inner = use.role === 'gone' ? node.fileBelow : node.below;
    if (inner !== undefined) return conflictError(use, inner);
    node.use = use;
  }
  return undefined;
}

function usesOf(effect: PathEffect, order: number): Use[] {
  if (effect.op === 'rename' && effect.fromPath !== undefined) {
    const phrase = `moves ${effect.fromPath} to ${effect.path}`;
    return [{ path: effect.fromPath, role: 'gone', phrase, order }, { path: effect.path, role: 'file', phrase, order }];
  }
  if (effect.op === 'delete') return [{ path: effect.path, role: 'gone', phrase: `deletes ${effect.path}`, order }];
  const verb = effect.op === 'add' ? 'adds' : effect.op === 'write' ? 'writes' : 'changes';
  return [{ path: effect.path, role: 'file', phrase: `${verb} ${effect.path}`, order }];
}

/** `outer` is an ancestor directory of `inner`; not both gone (two paths that cannot both exist now: the plan says which is missing). */
function conflictError(outer: Use, inner: Use): EngineError {
  // The receipt names the later of the two; a move, its destination.
  const path = inner.order === outer.order ? (inner.role === 'file' ? inner : outer).path : inner.order > outer.order ? inner.path : outer.path;
  const first = outer.order <= inner.order ? outer : inner;
  const second = first === outer ? inner : outer;
  const did = `The patch ${first.phrase}${first.order === second.order ? '' : ` and ${second.phrase}`}`;
  if (outer.role === 'file' && inner.role === 'file') {
    return engineError('already_exists', `${did}: ${outer.path} cannot be both a file and a directory holding ${inner.path}. Keep one of them, or give one another path.`, { path });
  }
  const [replaced, by, removed, made] = outer.role === 'file'
    ? ['directory', 'file', inner.path, outer.path]
    : ['file', 'directory', outer.path, inner.path];
  const message = `${did}: that replaces the ${replaced} ${outer.path} by a ${by}, which patchd does not do in one patch. Send two patches: first one that removes ${removed}, then one that makes ${made}.`;
  return engineError('already_exists', message, { path });
}
