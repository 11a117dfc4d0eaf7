/**
 * File paths of a unified / git diff section: reading them from the headers (C-quoted git paths,
 * GNU diff timestamps), stripping `a/` `b/` prefixes, splitting the `diff --git` line, and
 * resolving what the headers say into the section's normalised old and new path (`path_escape`,
 * `rename_path_mismatch`).
 *
 * Prefixes: see strip.ts (`stripGitPrefixes`, and the strip level of sections without
 * `diff --git`, which unified.ts resolves once the whole patch is read).
 */
import { engineError, type EngineError } from './errors.ts';
import { normalizePaths, stripGitPrefixes, stripPaths } from './strip.ts';
import { fail, ok, type BlobIds, type Result } from './types.ts';
import { GIT_HEADER, lineAt, quoteLine, withoutCr, type LineCursor } from './unifiedLines.ts';

/** The two paths of a `---`/`+++` pair as written (unquoted, timestamp dropped); null is `/dev/null`. */
export interface RawPaths {
  readonly old: string | null;
  readonly new: string | null;
}

/** A `---`/`+++` pair: its paths, and which sides carry GNU diff's Unix-epoch timestamp (`diff -N`'s missing file). */
export interface FileHeaderPaths extends RawPaths {
  readonly oldEpoch: boolean;
  readonly newEpoch: boolean;
  /** Both lines carry the timestamp `diff -u` writes after a tab: the diff tool made it. */
  readonly dated: boolean;
}

/** What a `diff --git` header block said. */
export interface GitHeaders {
  /** 1-based line of `diff --git`. */
  readonly line: number;
  /** The `diff --git` line after the command. */
  readonly rest: string;
  renameFrom?: string;
  renameTo?: string;
  newFile: boolean;
  deletedFile: boolean;
  modeChange: boolean;
  /** The mode a `new file mode` or `new mode` line asks for. */
  newMode?: string;
  blobs?: BlobIds;
  /** An `index` line was there, whether or not its ids could be read (one cut off mid-line). */
  indexLine?: boolean;
  /** A rename's `similarity index` in percent (`dissimilarity index N%` gives 100 − N). */
  similarity?: number;
  fileHeaders?: RawPaths;
}

/** A file section's resolved, normalised paths. */
export interface Target {
  /** 1-based line where the section starts. */
  readonly line: number;
  readonly oldPath: string | null;
  readonly newPath: string | null;
  readonly rename: boolean;
  /** Set for `diff --git` sections, whose metadata may stand in for hunks. */
  readonly git?: GitHeaders;
  /** A side is absent because `diff -N` dated it at the Unix epoch (so an empty section adds or deletes an empty file). */
  readonly epoch?: boolean;
  /** A section without `diff --git` whose two header lines carry `diff -u`'s timestamps: the diff tool made it. */
  readonly dated?: boolean;
}

// ─── Reading header paths ───────────────────────────────────────────────────────────────────────

/** Reads the `---` line at the cursor and the `+++` line after it, and moves past them. */
export function readFileHeaders(cursor: LineCursor): Result<FileHeaderPaths> {
  const { index } = cursor;
  const oldSide = readHeaderPath(withoutCr(lineAt(cursor, index)).slice(4), index);
  if (!oldSide.ok) return oldSide;
  const newSide = readHeaderPath(withoutCr(lineAt(cursor, index + 1)).slice(4), index + 1);
  if (!newSide.ok) return newSide;
  cursor.index += 2;
  const { value: old } = oldSide;
  const { value: next } = newSide;
  return ok({ old: old.path, new: next.path, oldEpoch: old.epoch, newEpoch: next.epoch, dated: old.dated && next.dated });
}

/**
 * The path of a `---`/`+++` line: quoted or not, without GNU diff's tab + timestamp (after the
 * closing quote of a quoted path: GNU diff quotes names with spaces or non-ASCII bytes); null
 * for /dev/null.
 */
export function readHeaderPath(text: string, index: number): Result<{ path: string | null; epoch: boolean; dated: boolean }> {
  const trimmed = text.trimStart();
  const quoted = trimmed.startsWith('"') ? readQuoted(trimmed, 0) : undefined;
  const tab = quoted === undefined ? text.indexOf('\t') : -1;
  // An unclosed quote falls to `readPathArgument`, which says what is wrong with it.
  const path = quoted === undefined ? readPathArgument(tab >= 0 ? text.slice(0, tab) : text, index) : ok(quoted.value);
  if (!path.ok) return path;
  const stamp = quoted === undefined ? (tab >= 0 ? text.slice(tab) : '') : trimmed.slice(quoted.end);
  const time = stamp.startsWith('\t') ? TIMESTAMP.exec(stamp.slice(1)) : null;
  return ok({ path: path.value === '/dev/null' ? null : path.value, epoch: time !== null && isEpoch(time), dated: time !== null });
}

const TIMESTAMP = /^\s*(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.\d+)?\s*([+-])(\d\d)(\d\d)\s*$/;

/** `1970-01-01 00:00:00 +0000`, or the same instant in another zone: how `diff -N` dates a file that is not there. */
function isEpoch(match: RegExpExecArray): boolean {
  const [year, month, day, hours, minutes, seconds, sign, zoneHours, zoneMinutes] = match.slice(1);
  const local = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hours), Number(minutes), Number(seconds));
  const zone = (sign === '-' ? -1 : 1) * (Number(zoneHours) * 60 + Number(zoneMinutes)) * 60_000;
  return local - zone === 0;
}

/** A path argument: a C-quoted string (anything after the closing quote is dropped) or the trimmed text. */
export function readPathArgument(text: string, index: number): Result<string> {
  const trimmed = text.trim();
  if (trimmed.startsWith('"')) {
    const quoted = readQuoted(trimmed, 0);
    if (quoted) return ok(quoted.value);
    return fail(engineError('parse_error', `Line ${index + 1}: the quoted path ${quoteLine(trimmed)} is not closed or has an invalid escape.`));
  }
  if (trimmed === '') return fail(engineError('parse_error', `Line ${index + 1}: the file header names no path.`));
  return ok(trimmed);
}

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, '\\': 92 };
const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

/** Reads git's C-style quoted path starting at `start` (the opening quote). Octal escapes are UTF-8 bytes. */
function readQuoted(text: string, start: number): { value: string; end: number } | undefined {
  const bytes: number[] = [];
  let runStart = start + 1;
  let index = runStart;
  while (index < text.length) {
    const char = text.charAt(index);
    if (char !== '"' && char !== '\\') {
      index++;
      continue;
    }
    for (const byte of utf8Encoder.encode(text.slice(runStart, index))) bytes.push(byte);
    if (char === '"') return decodeUtf8(bytes, index + 1);
    const escape = readEscape(text, index + 1);
    if (!escape) return undefined;
    bytes.push(escape.byte);
    index = runStart = escape.next;
  }
  return undefined;
}

function readEscape(text: string, index: number): { byte: number; next: number } | undefined {
  const octal = /^[0-7]{1,3}/.exec(text.slice(index, index + 3));
  if (octal) {
    const byte = parseInt(octal[0], 8);
    return byte > 255 ? undefined : { byte, next: index + octal[0].length };
  }
  const byte = SIMPLE_ESCAPES[text.charAt(index)];
  return byte === undefined ? undefined : { byte, next: index + 1 };
}

function decodeUtf8(bytes: readonly number[], end: number): { value: string; end: number } | undefined {
  try {
    return { value: utf8Decoder.decode(Uint8Array.from(bytes)), end };
  } catch {
    return undefined;
  }
}

/** The paths of a pair of headers, normalised: `strip` leading components removed, or else the section's prefixes (`stripGitPrefixes` for git's). */
function headerPaths(raw: RawPaths, prefixes: Prefixes | undefined, strip: number | undefined, line: number): Result<RawPaths> {
  if (strip !== undefined) return stripPaths(raw, strip, line);
  if (prefixes === undefined || prefixes === GIT_PREFIXES) return normalizePaths(stripGitPrefixes(raw, prefixes !== undefined));
  return normalizePaths({ old: withoutPrefix(raw.old, prefixes.old), new: withoutPrefix(raw.new, prefixes.new) });
}

function withoutPrefix(name: string | null, prefix: string): string | null {
  return name !== null && name.startsWith(prefix) ? name.slice(prefix.length) : name;
}

/** The prefixes the paths of a `diff --git` section carry, which `git apply` drops (its default `-p1`). */
interface Prefixes {
  readonly old: string;
  readonly new: string;
}

const GIT_PREFIXES: Prefixes = { old: 'a/', new: 'b/' };

/**
 * The prefixes of a `diff --git` line's paths: git's `a/` `b/`, or two other first components
 * (`diff.mnemonicPrefix`'s `c/` `i/` `w/` `o/`, `--src-prefix`/`--dst-prefix`) whose removal
 * leaves one file twice, or a rename's `rename from`/`rename to`. Two equal first components
 * are kept: `git diff --no-prefix` of `src/x` reads `diff --git src/x src/x`.
 */
function gitPrefixesOf(tokens: RawPaths | undefined, headers: GitHeaders): Prefixes | undefined {
  if (tokens === undefined) {
    if (/^"?a\//.test(headers.rest) && / "?b\//.test(headers.rest)) return GIT_PREFIXES;
    // Unsplittable (a rename of names with spaces): the rename headers say where the first name ends.
    const { renameFrom: from, renameTo: to } = headers;
    const [oldPrefix, afterPrefix] = splitFirstComponent(headers.rest);
    if (from === undefined || to === undefined || !afterPrefix.startsWith(`${from} `)) return undefined;
    return otherPrefixes(`${oldPrefix}${from}`, afterPrefix.slice(from.length + 1), { from, to });
  }
  if (isGitPrefixed(tokens)) return GIT_PREFIXES;
  const { renameFrom: from, renameTo: to } = headers;
  const rename = from !== undefined && to !== undefined ? { from, to } : undefined;
  return tokens.old === null || tokens.new === null ? undefined : otherPrefixes(tokens.old, tokens.new, rename);
}

/** Differing first components of `left` and `right` below which they name one file (or, given, a rename's two). */
function otherPrefixes(left: string, right: string, rename?: { readonly from: string; readonly to: string }): Prefixes | undefined {
  const [oldPrefix, oldRest] = splitFirstComponent(left);
  const [newPrefix, newRest] = splitFirstComponent(right);
  if (oldPrefix === '' || newPrefix === '' || oldPrefix === newPrefix) return undefined;
  const named = rename === undefined ? oldRest === newRest : oldRest === rename.from && newRest === rename.to;
  return named ? { old: oldPrefix, new: newPrefix } : undefined;
}

/** `c/`, `x.txt` of `c/x.txt`; `''` as the first when there is no component to drop. */
function splitFirstComponent(path: string): [string, string] {
  const slash = path.indexOf('/');
  return slash > 0 && slash < path.length - 1 ? [path.slice(0, slash + 1), path.slice(slash + 1)] : ['', path];
}

// ─── Resolving a section's paths (path_escape, rename_path_mismatch) ────────────────────────────

/**
 * The target of a `diff --git` section, from whichever of its headers are there; they must agree.
 * `strip` (the caller's `-p`) replaces the `a/` `b/` convention; `rename from/to` lose one
 * component less, as in `git apply`.
 */
export function resolveGitTarget(headers: GitHeaders, strip: number | undefined): Result<Target> {
  const tokens = splitGitPaths(headers.rest);
  const prefixes = gitPrefixesOf(tokens, headers);
  const gitPaths = tokens === undefined ? ok(undefined) : headerPaths(tokens, prefixes, strip, headers.line);
  if (!gitPaths.ok) return gitPaths;
  const git = { headers, paths: gitPaths.value, prefixes, strip };
  if (headers.renameFrom !== undefined || headers.renameTo !== undefined) return resolveRename(git);
  if (headers.fileHeaders) return resolveGitFileHeaders(git, headers.fileHeaders);
  return resolveFromGitLine(git);
}

/** A `diff --git` block together with the paths its first line names, when they could be told apart. */
interface GitLine {
  readonly headers: GitHeaders;
  readonly paths: RawPaths | undefined;
  /** The prefixes the line uses (`a/` `b/`, or others), so `---`/`+++` do too. */
  readonly prefixes: Prefixes | undefined;
  readonly strip: number | undefined;
}

function resolveRename(git: GitLine): Result<Target> {
  const { headers } = git;
  if (headers.renameFrom === undefined || headers.renameTo === undefined) {
    return fail(engineError('parse_error', `The file section at line ${headers.line} has only one of \`rename from\` and \`rename to\`; a rename needs both.`));
  }
  const renames = { old: headers.renameFrom, new: headers.renameTo };
  const rename = git.strip === undefined ? normalizePaths(renames) : stripPaths(renames, Math.max(git.strip - 1, 0), headers.line);
  if (!rename.ok) return rename;
  const from = rename.value.old ?? '';
  const to = rename.value.new ?? '';
  if (!gitLineNames(git, from, to)) return fail(gitLineMismatch(headers, `rename from ${from} / rename to ${to}`, to));
  if (headers.fileHeaders) {
    const declared = headerPaths(headers.fileHeaders, git.prefixes, git.strip, headers.line);
    if (!declared.ok) return declared;
    if (declared.value.old !== from || declared.value.new !== to) {
      const described = `--- ${declared.value.old ?? '/dev/null'} / +++ ${declared.value.new ?? '/dev/null'}`;
      return fail(engineError('rename_path_mismatch', `The file section at line ${headers.line} renames ${from} to ${to}, but its ${described} lines name other files. Make all three headers name the same two files.`, { path: to }));
    }
  }
  // Renaming a file onto itself is just an edit.
  return ok({ line: headers.line, oldPath: from, newPath: to, rename: from !== to, git: headers });
}

function resolveGitFileHeaders(git: GitLine, fileHeaders: RawPaths): Result<Target> {
  const { headers } = git;
  const paths = headerPaths(fileHeaders, git.prefixes, git.strip, headers.line);
  if (!paths.ok) return paths;
  const { old: oldPath, new: newPath } = paths.value;
  if (oldPath !== null && newPath !== null && oldPath !== newPath) {
    return fail(engineError('rename_path_mismatch', `The file section at line ${headers.line} names ${oldPath} on the --- line but ${newPath} on the +++ line, without \`rename from\`/\`rename to\`. Name the same file on both lines, or add the rename headers.`, { path: newPath }));
  }
  const path = newPath ?? oldPath;
  if (path !== null && !gitLineNames(git, path, path)) return fail(gitLineMismatch(headers, `--- / +++ (${path})`, path));
  return ok({ line: headers.line, oldPath, newPath, rename: false, git: headers });
}

/** A section with no `---`/`+++` and no rename: the `diff --git` line is all there is. */
function resolveFromGitLine(git: GitLine): Result<Target> {
  const { headers, paths } = git;
  if (paths === undefined || paths.old === null || paths.new === null) {
    return fail(engineError('parse_error', `Line ${headers.line}: cannot tell the two paths of ${quoteLine(GIT_HEADER + headers.rest)} apart. Add \`--- a/path\` and \`+++ b/path\` lines.`));
  }
  if (paths.old !== paths.new) {
    return fail(engineError('rename_path_mismatch', `Line ${headers.line}: \`diff --git\` names ${paths.old} and ${paths.new} but the section has no \`rename from\`/\`rename to\` lines. Add them to rename the file, or name the same file twice.`, { path: paths.new }));
  }
  const oldPath = headers.newFile ? null : paths.old;
  const newPath = headers.deletedFile ? null : paths.new;
  return ok({ line: headers.line, oldPath, newPath, rename: false, git: headers });
}

function gitLineMismatch(headers: GitHeaders, other: string, path: string): EngineError {
  return engineError('rename_path_mismatch', `Line ${headers.line}: ${quoteLine(GIT_HEADER + headers.rest)} does not name the same files as ${other}. Make the \`diff --git\`, \`rename from/to\` and \`---\`/\`+++\` headers agree.`, { path });
}

/** Does the `diff --git` line name these two (normalised) paths? */
function gitLineNames(git: GitLine, oldPath: string, newPath: string): boolean {
  if (git.paths !== undefined && git.paths.old === oldPath && git.paths.new === newPath) return true;
  // The line could not be split (spaces in paths): check it against the paths the other headers give.
  const rest = git.headers.rest;
  const { old: oldPrefix, new: newPrefix } = git.prefixes ?? GIT_PREFIXES;
  return [`${oldPrefix}${oldPath}`, oldPath].some((left) => [`${newPrefix}${newPath}`, newPath].some((right) => rest === `${left} ${right}`));
}

function isGitPrefixed(tokens: RawPaths): boolean {
  return tokens.old !== null && tokens.new !== null && tokens.old.startsWith('a/') && tokens.new.startsWith('b/');
}

/** Splits the paths of a `diff --git` line, or undefined when they cannot be told apart. */
function splitGitPaths(rest: string): RawPaths | undefined {
  if (rest.startsWith('"')) return splitAfterQuotedPath(rest);
  const quotedSecond = rest.indexOf(' "');
  if (quotedSecond > 0) {
    const second = readQuoted(rest, quotedSecond + 1);
    if (second && second.end === rest.length) return { old: rest.slice(0, quotedSecond), new: second.value };
  }
  return splitUnquotedPaths(rest);
}

function splitAfterQuotedPath(rest: string): RawPaths | undefined {
  const first = readQuoted(rest, 0);
  if (!first || rest.charAt(first.end) !== ' ') return undefined;
  const remainder = rest.slice(first.end + 1);
  if (!remainder.startsWith('"')) return remainder === '' ? undefined : { old: first.value, new: remainder };
  const second = readQuoted(remainder, 0);
  return second ? { old: first.value, new: second.value } : undefined;
}

/**
 * One file below two prefixes of different lengths (`left/x y right/x y`): split at the space
 * where the two agree, as git splits it. In one pass from the right: the path after a space must
 * be as long below its first `/` as the path before it is below its own, which holds at one
 * space at most (the sum of the two positions only falls as the space moves left).
 */
function splitBelowPrefixes(rest: string): RawPaths | undefined {
  const firstSlash = rest.indexOf('/');
  if (firstSlash <= 0) return undefined;
  let slashAfter = -1;
  for (let start = rest.length - 1; start > firstSlash + 1; start--) {
    if (rest.charAt(start) === '/') slashAfter = start;
    if (rest.charAt(start - 1) !== ' ' || slashAfter <= start) continue;
    const space = start - 1;
    if (space - firstSlash - 1 !== rest.length - slashAfter - 1) continue;
    const [left, right] = [rest.slice(0, space), rest.slice(start)];
    return otherPrefixes(left, right) === undefined ? undefined : { old: left, new: right };
  }
  return undefined;
}

/** Same path twice (the common case, spaces allowed): split in half, or where the two agree below their prefixes. Else the one ` b/` (or ` `) separator. */
function splitUnquotedPaths(rest: string): RawPaths | undefined {
  const middle = (rest.length - 1) / 2;
  if (Number.isInteger(middle) && rest.charAt(middle) === ' ') {
    const left = rest.slice(0, middle);
    const right = rest.slice(middle + 1);
    if (left === right) return { old: left, new: right };
  }
  // `a/x b/x` included.
  const belowPrefixes = splitBelowPrefixes(rest);
  if (belowPrefixes !== undefined) return belowPrefixes;
  const separator = rest.startsWith('a/') ? ' b/' : ' ';
  const at = rest.indexOf(separator);
  if (at <= 0 || rest.indexOf(separator, at + 1) >= 0) return undefined;
  return { old: rest.slice(0, at), new: rest.slice(at + 1) };
}
