/**
 * The units of an `atomic: false` commit. Each plan file is its own transaction, except files
 * whose paths lie one inside the other: a type change (delete `d/x` and add `d`, or delete `d`
 * and add `d/x`) is one transaction, as a rename's two paths are, since neither half can be
 * committed alone (`d` cannot be added while `d/x` is there, nor `d/x` while `d` is a file).
 */

interface Node {
  readonly children: Map<string, Node>;
  /** The item whose path ends here. */
  owner?: number;
  /** Items with a path below, not yet joined with an owner here. */
  below: number[];
}

/** `items` grouped so that items with nested paths share a group; groups in the order of their first item, items in order. */
export function groupNested<T>(items: readonly T[], pathsOf: (item: T) => readonly string[]): T[][] {
  const parent = items.map((_, index) => index);
  const find = (index: number): number => {
    while (parent[index] !== index) index = parent[index] = parent[parent[index]!]!;
    return index;
  };
  const join = (a: number, b: number) => {
    const [low, high] = [find(a), find(b)].sort((x, y) => x - y);
    parent[high!] = low!;
  };
  const root: Node = { children: new Map(), below: [] };
  items.forEach((item, index) => {
    for (const path of pathsOf(item)) {
      let node = root;
      for (const segment of path.split('/')) {
        if (node.owner !== undefined) join(node.owner, index);
        else if (node !== root) node.below.push(index);
        let child = node.children.get(segment);
        if (child === undefined) node.children.set(segment, (child = { children: new Map(), below: [] }));
        node = child;
      }
      for (const other of node.below.splice(0)) join(other, index);
      node.owner ??= index;
    }
  });
  const groups = new Map<number, T[]>();
  items.forEach((item, index) => {
    const group = find(index);
    const members = groups.get(group);
    if (members === undefined) groups.set(group, [item]);
    else members.push(item);
  });
  return [...groups.values()];
}
