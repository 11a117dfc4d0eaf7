/**
 * File paths of a unified / git diff section: reading them from the headers (C-quoted git paths,
 * GNU diff timestamps), stripping `a/` `b/` prefixes, splitting the `diff --git` line, and
 * resolving what the headers say into the section's normalised old and new path (`path_escape`,
 * `rename_path_mismatch`).
 *
 * Prefixes: `a/` and `b/` are stripped when the `diff --git` line carries them, or when both
 * `---` and `+++` carry them (`/dev/null` counts as carrying one). When only one side carries its
 * prefix, it is stripped only if that makes both sides name the same file; otherwise a path such
 * as `a/x` is taken literally.
 */
import { engineError, type EngineError } from './errors.ts';
import { normalizePatchPath } from './paths.ts';
import { fail, ok, type Result } from './types.ts';
import { GIT_HEADER, lineAt, quoteLine, withoutCr, type LineCursor } from './unifiedLines.ts';

/** The two paths of a `---`/`+++` pair as written (unquoted, timestamp dropped); null is `/dev/null`. */
export interface RawPaths {
  readonly old: string | null;
  readonly new: string | null;
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
}

// ─── Reading header paths ───────────────────────────────────────────────────────────────────────

/** Reads the `---` line at the cursor and the `+++` line after it, and moves past them. */
export function readFileHeaders(cursor: LineCursor): Result<RawPaths> {
  const { index } = cursor;
  const oldPath = readHeaderPath(withoutCr(lineAt(cursor, index)).slice(4), index);
  if (!oldPath.ok) return oldPath;
  const newPath = readHeaderPath(withoutCr(lineAt(cursor, index + 1)).slice(4), index + 1);
  if (!newPath.ok) return newPath;
  cursor.index += 2;
  return ok({ old: oldPath.value, new: newPath.value });
}

/** The path of a `---`/`+++` line: quoted or not, without GNU diff's tab + timestamp; null for /dev/null. */
function readHeaderPath(text: string, index: number): Result<string | null> {
  const tab = text.indexOf('\t');
  const path = readPathArgument(tab >= 0 && !text.trimStart().startsWith('"') ? text.slice(0, tab) : text, index);
  if (!path.ok) return path;
  return ok(path.value === '/dev/null' ? null : path.value);
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

/**
 * Strips `a/` from the old side and `b/` from the new side when the section uses prefixes: the
 * `diff --git` line says so, or both sides carry theirs. A single prefixed side is stripped only
 * when that makes both sides name the same file.
 */
function stripPrefixes(paths: RawPaths, gitPrefixed: boolean): RawPaths {
  const oldPrefixed = paths.old === null || paths.old.startsWith('a/');
  const newPrefixed = paths.new === null || paths.new.startsWith('b/');
  if (gitPrefixed || (oldPrefixed && newPrefixed)) {
    return { old: stripPrefix(paths.old, 'a/'), new: stripPrefix(paths.new, 'b/') };
  }
  if (paths.old !== null && paths.new !== null) {
    if (stripPrefix(paths.old, 'a/') === paths.new) return { old: paths.new, new: paths.new };
    if (stripPrefix(paths.new, 'b/') === paths.old) return { old: paths.old, new: paths.old };
  }
  return paths;
}

function stripPrefix(path: string | null, prefix: string): string | null {
  return path !== null && path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

/** The paths of a pair of headers, prefixes stripped (see `stripPrefixes`) and normalised. */
function headerPaths(raw: RawPaths, gitPrefixed: boolean): Result<RawPaths> {
  return normalizePaths(stripPrefixes(raw, gitPrefixed));
}

function normalizePaths(paths: RawPaths): Result<RawPaths> {
  const oldPath = paths.old === null ? ok(null) : normalizePatchPath(paths.old);
  if (!oldPath.ok) return oldPath;
  const newPath = paths.new === null ? ok(null) : normalizePatchPath(paths.new);
  if (!newPath.ok) return newPath;
  return ok({ old: oldPath.value, new: newPath.value });
}

// ─── Resolving a section's paths (path_escape, rename_path_mismatch) ────────────────────────────

/** The target of a section with only `---`/`+++` headers (`line`: 1-based line of `---`). */
export function resolveBareTarget(raw: RawPaths, line: number): Result<Target> {
  const paths = headerPaths(raw, false);
  if (!paths.ok) return paths;
  const { old: oldPath, new: newPath } = paths.value;
  if (oldPath !== null && newPath !== null && oldPath !== newPath) {
    return fail(engineError('rename_path_mismatch', `The file header at line ${line} names ${oldPath} on the --- line but ${newPath} on the +++ line. To edit a file, name it on both lines; to rename one, use \`diff --git\` with \`rename from\` and \`rename to\`.`, { path: newPath }));
  }
  return ok({ line, oldPath, newPath, rename: false });
}

/** The target of a `diff --git` section, from whichever of its headers are there; they must agree. */
export function resolveGitTarget(headers: GitHeaders): Result<Target> {
  const tokens = splitGitPaths(headers.rest);
  const prefixed = tokens ? isGitPrefixed(tokens) : /^"?a\//.test(headers.rest) && / "?b\//.test(headers.rest);
  const gitPaths = tokens === undefined ? ok(undefined) : headerPaths(tokens, prefixed);
  if (!gitPaths.ok) return gitPaths;
  const git = { headers, paths: gitPaths.value, prefixed };
  if (headers.renameFrom !== undefined || headers.renameTo !== undefined) return resolveRename(git);
  if (headers.fileHeaders) return resolveGitFileHeaders(git, headers.fileHeaders);
  return resolveFromGitLine(git);
}

/** A `diff --git` block together with the paths its first line names, when they could be told apart. */
interface GitLine {
  readonly headers: GitHeaders;
  readonly paths: RawPaths | undefined;
  /** The line uses `a/` `b/` prefixes, so `---`/`+++` do too. */
  readonly prefixed: boolean;
}

function resolveRename(git: GitLine): Result<Target> {
  const { headers } = git;
  if (headers.renameFrom === undefined || headers.renameTo === undefined) {
    return fail(engineError('parse_error', `The file section at line ${headers.line} has only one of \`rename from\` and \`rename to\`; a rename needs both.`));
  }
  const rename = normalizePaths({ old: headers.renameFrom, new: headers.renameTo });
  if (!rename.ok) return rename;
  const from = rename.value.old ?? '';
  const to = rename.value.new ?? '';
  if (!gitLineNames(git, from, to)) return fail(gitLineMismatch(headers, `rename from ${from} / rename to ${to}`, to));
  if (headers.fileHeaders) {
    const declared = headerPaths(headers.fileHeaders, git.prefixed);
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
  const paths = headerPaths(fileHeaders, git.prefixed);
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
  return [`a/${oldPath}`, oldPath].some((left) => [`b/${newPath}`, newPath].some((right) => rest === `${left} ${right}`));
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

/** Same path twice (the common case, spaces allowed): split in half. Else the one ` b/` (or ` `) separator. */
function splitUnquotedPaths(rest: string): RawPaths | undefined {
  const middle = (rest.length - 1) / 2;
  if (Number.isInteger(middle) && rest.charAt(middle) === ' ') {
    const left = rest.slice(0, middle);
    const right = rest.slice(middle + 1);
    if (left === right || (left.startsWith('a/') && right.startsWith('b/') && left.slice(2) === right.slice(2))) return { old: left, new: right };
  }
  const separator = rest.startsWith('a/') ? ' b/' : ' ';
  const at = rest.indexOf(separator);
  if (at <= 0 || rest.indexOf(separator, at + 1) >= 0) return undefined;
  return { old: rest.slice(0, at), new: rest.slice(at + 1) };
}
