/**
 * The strip level of unified diff paths: how many leading components of a `---`/`+++` path to
 * drop to get a workspace path, as `patch -pN` does. `diff -u a.orig a`, `diff -ruN old/ new/`
 * and hand-made diffs name files without git's `a/` `b/` prefixes, so for a section without
 * `diff --git` the level is worked out the way GNU patch finds a file:
 *
 * 1. The caller's `strip`, when given (it applies to git sections too, see unifiedPaths.ts).
 * 2. The names themselves: `a/` and `b/` prefixes are dropped (git's convention), and names
 *    that differ only in their leading directories (`old/x`, `new/x`) are stripped until they
 *    agree.
 * 3. When that file does not exist in the workspace, the smallest level at which it does.
 *
 * Two names that still differ (`diff -u a.orig a`) patch the one that exists; when both do,
 * the one GNU patch prefers. Pure: which files exist is an input, which the workspace looks up
 * from `probeCandidates`.
 */
import { engineError } from './errors.ts';
import { normalizePatchPath } from './paths.ts';
import { fail, ok, type Result } from './types.ts';

/** A pair of names; null is `/dev/null`. */
export interface NamePair {
  readonly old: string | null;
  readonly new: string | null;
}

/** The `---`/`+++` names of a section without `diff --git`, as written (quotes and timestamps gone). */
export interface BareNames extends NamePair {
  /** 1-based patch line of `---`. */
  readonly line: number;
  /** That side's file does not exist: `/dev/null`, or GNU `diff -N`'s Unix-epoch timestamp on a side without lines. */
  readonly oldAbsent: boolean;
  readonly newAbsent: boolean;
}

export interface StripOptions {
  /** The caller's level. */
  readonly strip?: number | undefined;
  /** Files that exist in the workspace (among `probeCandidates`); undefined when it was not asked. */
  readonly existing?: ReadonlySet<string> | undefined;
}

/** A bare section's paths, normalised; null where the side is absent. */
export interface ResolvedNames extends NamePair {
  /** Set when the level came from the names or the workspace, for the `strip_level` diagnostic. */
  readonly found?: { readonly level: number; readonly by: 'names' | 'workspace' } | undefined;
  /** Set when `---` and `+++` named different files and the existing one was taken. */
  readonly chose?: string | undefined;
}

/** Most paths the workspace is asked about for one patch. */
const MAX_PROBES = 4000;

/**
 * `path` without the smallest prefix holding `level` runs of slashes (GNU patch's `-p`), or
 * undefined when nothing is left.
 */
export function stripComponents(path: string, level: number): string | undefined {
  let start = 0;
  let remaining = level;
  for (let index = 0; index < path.length && remaining > 0; index++) {
    if (path[index] !== '/') continue;
    while (path[index + 1] === '/') index++;
    remaining--;
    start = index + 1;
  }
  const rest = path.slice(start);
  return remaining > 0 || rest === '' ? undefined : rest;
}

/** Resolves a bare section's names to workspace paths (see the module comment). */
export function resolveBareNames(section: BareNames, options: StripOptions): Result<ResolvedNames> {
  const named = options.strip === undefined ? fromNames(section) : atLevel(section, options.strip);
  if (!named.ok) return named;
  let names = named.value;
  const existing = options.existing;
  if (existing !== undefined && options.strip === undefined && needsFile(section) && !anyExists(names, existing)) {
    names = existingLevel(section, existing) ?? names;
  }
  return pickOne(section, names, existing);
}

/** Every path whose existence could decide a bare section's level or file. */
export function probeCandidates(sections: readonly BareNames[], strip: number | undefined): string[] {
  const candidates = new Set<string>();
  for (const section of sections.filter(needsFile)) {
    const levels = strip === undefined ? range(deepestLevel(section) + 1) : [strip];
    const named = strip === undefined ? fromNames(section) : undefined;
    if (named?.ok) for (const path of [named.value.old, named.value.new]) if (path !== null) candidates.add(path);
    for (const level of levels) {
      const names = stripPaths(section, level, section.line);
      if (names.ok) for (const path of [names.value.old, names.value.new]) if (path !== null) candidates.add(path);
    }
    if (candidates.size >= MAX_PROBES) break;
  }
  return [...candidates].slice(0, MAX_PROBES);
}

/**
 * Of two different names that both exist, the one GNU patch picks: fewest components, then the
 * shorter base name, then the shorter path (`diff -u a.orig a` patches `a`).
 */
export function preferredName(first: string, second: string): string {
  const rank = (path: string) => [path.split('/').length, path.length - path.lastIndexOf('/') - 1, path.length];
  const [a, b] = [rank(first), rank(second)];
  for (let index = 0; index < a.length; index++) {
    if (a[index]! !== b[index]!) return a[index]! < b[index]! ? first : second;
  }
  return first;
}

/**
 * Git's prefixes: `a/` from the old name and `b/` from the new one when the section uses them
 * (`gitPrefixed`: its `diff --git` line does), or both names carry theirs (`/dev/null` counts as
 * carrying one). A single prefixed side is stripped only when that makes both name the same file.
 */
export function stripGitPrefixes(names: NamePair, gitPrefixed: boolean): NamePair {
  const oldPrefixed = names.old === null || names.old.startsWith('a/');
  const newPrefixed = names.new === null || names.new.startsWith('b/');
  if (gitPrefixed || (oldPrefixed && newPrefixed)) return { old: withoutPrefix(names.old, 'a/'), new: withoutPrefix(names.new, 'b/') };
  if (names.old !== null && names.new !== null) {
    if (withoutPrefix(names.old, 'a/') === names.new) return { old: names.new, new: names.new };
    if (withoutPrefix(names.new, 'b/') === names.old) return { old: names.old, new: names.old };
  }
  return names;
}

/** Both names with `level` leading components stripped, normalised (`line`: for the error). */
export function stripPaths(names: NamePair, level: number, line: number): Result<NamePair> {
  const stripped: (string | null)[] = [];
  for (const name of [names.old, names.new]) {
    const rest = name === null ? null : stripComponents(name, level);
    if (rest === undefined) {
      return fail(engineError('parse_error', `Line ${line}: strip level ${level} leaves nothing of the path ${JSON.stringify(name)}; use a smaller strip level.`, { path: name ?? undefined }));
    }
    stripped.push(rest);
  }
  return normalizePaths({ old: stripped[0] ?? null, new: stripped[1] ?? null });
}

/** The name to show for a section before its paths are resolved: the new one (or the old), git prefixes dropped. */
export function provisionalName(names: NamePair): string {
  const { old, new: next } = stripGitPrefixes(names, false);
  const name = next ?? old ?? '/dev/null';
  const normalized = normalizePatchPath(name);
  return normalized.ok ? normalized.value : name;
}

/** Both names normalised (`normalizePatchPath`). */
export function normalizePaths(names: NamePair): Result<NamePair> {
  const oldPath = names.old === null ? ok(null) : normalizePatchPath(names.old);
  if (!oldPath.ok) return oldPath;
  const newPath = names.new === null ? ok(null) : normalizePatchPath(names.new);
  if (!newPath.ok) return newPath;
  return ok({ old: oldPath.value, new: newPath.value });
}

// ─── The ways to a level ────────────────────────────────────────────────────────────────────────

function atLevel(section: BareNames, level: number): Result<NamePair> {
  return stripPaths(present(section), level, section.line);
}

/** `a/` and `b/` dropped; names that still differ are stripped further while that makes them agree (`old/src/x`, `new/src/x`). */
function fromNames(section: BareNames): Result<ResolvedNames> {
  const plain = normalizePaths(stripGitPrefixes(section, false));
  if (!plain.ok) return plain;
  const { old, new: next } = plain.value;
  const named = { old: section.oldAbsent ? null : old, new: section.newAbsent ? null : next };
  if (old === null || next === null || old === next) return ok(named);
  for (let level = 1; level <= deepestLevel(section); level++) {
    const both = stripPaths(section, level, section.line);
    if (!both.ok || both.value.old !== both.value.new) continue;
    const names = atLevel(section, level);
    if (names.ok) return ok({ ...names.value, found: { level, by: 'names' } });
  }
  return ok(named);
}

/** The smallest level at which the section's file exists. */
function existingLevel(section: BareNames, existing: ReadonlySet<string>): ResolvedNames | undefined {
  for (let level = 0; level <= deepestLevel(section); level++) {
    const names = atLevel(section, level);
    if (names.ok && anyExists(names.value, existing)) return { ...names.value, found: { level, by: 'workspace' } };
  }
  return undefined;
}

/** `---` and `+++` still name different files: patch the one that exists, as GNU patch does. */
function pickOne(section: BareNames, names: ResolvedNames, existing: ReadonlySet<string> | undefined): Result<ResolvedNames> {
  if (names.old === null || names.new === null || names.old === names.new) return ok(names);
  const found = existing === undefined ? [] : [names.old, names.new].filter((path) => existing.has(path));
  const [first, second] = found;
  if (first === undefined) {
    const where = existing === undefined ? '' : ', and neither exists in the workspace';
    return fail(engineError('rename_path_mismatch', `The file header at line ${section.line} names ${names.old} on the --- line but ${names.new} on the +++ line${where}. To edit a file, name it on both lines; to rename one, use \`diff --git\` with \`rename from\` and \`rename to\`.`, { path: names.new }));
  }
  const chosen = second === undefined ? first : preferredName(first, second);
  return ok({ ...names, old: chosen, new: chosen, chose: chosen });
}

// ─── Helpers ────────────────────────────────────────────────────────────────────────────────────

/** The names of the sides that exist. */
function present(section: BareNames): NamePair {
  return { old: section.oldAbsent ? null : section.old, new: section.newAbsent ? null : section.new };
}

/** The section edits or deletes a file, which must therefore exist. */
function needsFile(section: BareNames): boolean {
  return section.old !== null && !section.oldAbsent;
}

function anyExists(names: NamePair, existing: ReadonlySet<string>): boolean {
  return [names.old, names.new].some((path) => path !== null && existing.has(path));
}

function withoutPrefix(name: string | null, prefix: string): string | null {
  return name !== null && name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

/**
 * Most levels tried when working a level out. Each try strips and normalises the whole name, so
 * without a bound a name of thousands of components (one 256 KiB header line) costs its length
 * squared; no real tree is this deep, and `strip` still forces any level.
 */
export const MAX_FOUND_LEVEL = 32;

/** The deepest level worth trying: one that leaves each of the section's names something, at most `MAX_FOUND_LEVEL`. */
function deepestLevel(section: NamePair): number {
  const names = [section.old, section.new].filter((name): name is string => name !== null);
  if (names.length === 0) return 0;
  return Math.min(MAX_FOUND_LEVEL, ...names.map(slashRuns));
}

/** Runs of slashes before the name's last component (a loop: `/\/+$/` backtracks quadratically on a long run). */
function slashRuns(name: string): number {
  let end = name.length;
  while (end > 0 && name[end - 1] === '/') end--;
  let runs = 0;
  for (let index = 0; index < end; index++) if (name[index] === '/' && name[index - 1] !== '/') runs++;
  return runs;
}

function range(count: number): number[] {
  return Array.from({ length: count }, (_, index) => index);
}
