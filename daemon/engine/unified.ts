/**
 * The unified / git diff parser (dialect `unified`): the RFC's "Unified Diff Subset V1" plus the
 * leniencies DESIGN and the conformance corpus ask for. Pure: patch lines in, `ParsedPatch` out,
 * errors as data. One pass over the lines; the only look-aheads are bounded so that every line is
 * read a small, fixed number of times.
 *
 * Conventions:
 * - `Hunk.oldStart` is 1-based: the first old line of the hunk; for a hunk whose old count is 0
 *   (a pure insertion, `@@ -5,0 +6,2 @@`) it is the line the insertion goes before (6), so
 *   `-0,0` gives 1. A header without numbers gives no `oldStart`.
 * - `hunkIndex` in errors and diagnostics is 0-based within its file section.
 * - Line numbers in messages are 1-based lines of the patch text.
 * - Prefixes: `a/` and `b/` are stripped when the `diff --git` line carries them, or when both
 *   `---` and `+++` carry them (`/dev/null` counts as carrying one). When only one side carries
 *   its prefix, it is stripped only if that makes both sides name the same file; otherwise a
 *   path such as `a/x` is taken literally.
 * - Totally empty lines inside a hunk are context lines with text '' (models drop the space).
 *   Empty lines at the end of a hunk are dropped unless the hunk's counts need them.
 */
import { engineError, type EngineError } from './errors.ts';
import { LIMITS } from './limits.ts';
import { normalizePatchPath } from './paths.ts';
import { fail, ok, type Diagnostic, type FilePatch, type Hunk, type HunkLine, type HunkLineKind, type ParsedPatch, type Result } from './types.ts';

const GIT_HEADER = 'diff --git ';
const HUNK_RANGES = /^-(\d+)(?:,(\d+))?\s+\+(\d+)(?:,(\d+))?$/;
const NO_NUMBERS = /^[.…\s]*$/;
const FENCE = /^\s{0,3}(?:```|~~~)/;
const BINARY_FILES = /^Binary files .* differ$/;
const SUBMODULE_MODE = /(?:^|\s|\.\.)160000(?:\s|$)/;
const SUBPROJECT_LINE = /^Subproject commit [0-9a-f]{7,}/;
const METADATA_PREFIXES = ['index ', 'similarity index ', 'dissimilarity index ', 'new file mode ', 'deleted file mode ', 'old mode ', 'new mode '] as const;

/** Parses a unified or git diff. `lines` come from `splitPatchLines`. Never throws. */
export function parseUnified(lines: readonly string[]): Result<ParsedPatch> {
  try {
    return parseAll(lines);
  } catch (error) {
    // The parser is written not to throw; should a bug slip through, it must still come back as data.
    return fail(engineError('parse_error', `The unified diff could not be parsed (${String(error)}).`));
  }
}

// ─── Parser state and top-level loop ────────────────────────────────────────────────────────────

interface ParserState {
  readonly lines: readonly string[];
  /** Index of the line being looked at. */
  index: number;
  sections: number;
  readonly files: FilePatch[];
  readonly diagnostics: Diagnostic[];
  readonly ignoredMetadata: string[];
  /** Normalised path → 1-based patch line of the file section that claimed it. */
  readonly claimed: Map<string, number>;
}

function parseAll(lines: readonly string[]): Result<ParsedPatch> {
  const limitError = checkLimits(lines);
  if (limitError) return fail(limitError);
  const state: ParserState = { lines, index: 0, sections: 0, files: [], diagnostics: [], ignoredMetadata: [], claimed: new Map() };
  while (state.index < lines.length) {
    const error = parseNext(state);
    if (error) return fail(error);
  }
  if (state.sections === 0) {
    return fail(engineError('parse_error', 'No file section found. A unified diff starts each file with `--- a/path` and `+++ b/path` (or a `diff --git` line), followed by `@@` hunks.'));
  }
  return ok({ dialect: 'unified', files: state.files, diagnostics: state.diagnostics, ignoredMetadata: state.ignoredMetadata });
}

/** Handles the line at `state.index` outside any file section: a header starts one, anything else is text around the patch. */
function parseNext(state: ParserState): EngineError | undefined {
  const line = lineAt(state, state.index);
  if (line.startsWith(GIT_HEADER)) return parseGitSection(state);
  if (isFileHeaderAt(state.lines, state.index)) return parseBareSection(state);
  if (line.startsWith('@@')) {
    return engineError('missing_file_header', `Line ${state.index + 1} starts a hunk (${quoteLine(line)}) but no file header comes before it: put \`--- a/path\` and \`+++ b/path\` lines before the hunks of each file.`);
  }
  const unsupported = unsupportedFeature(withoutCr(line), state.index);
  if (unsupported) return unsupported;
  noteSurroundingText(state, line);
  state.index++;
  return undefined;
}

function noteSurroundingText(state: ParserState, line: string): void {
  if (line.trim() === '') return;
  const code = FENCE.test(line) ? 'fenced_patch' : 'text_around_patch';
  if (state.diagnostics.some((diagnostic) => diagnostic.code === code)) return;
  const message = code === 'fenced_patch'
    ? `A Markdown code fence (line ${state.index + 1}) around the diff was ignored.`
    : `Text that is not part of the diff (first at line ${state.index + 1}) was ignored.`;
  state.diagnostics.push({ code, message });
}

/**
 * Counts `@@` lines before parsing, so a patch with too many hunks is refused without building
 * anything. (File sections are counted while parsing: a `--- x`/`+++ y` pair may be body text,
 * which only the parse can tell; parsing stops at the first section over the limit.)
 */
function checkLimits(lines: readonly string[]): EngineError | undefined {
  let hunks = 0;
  for (const line of lines) if (line.startsWith('@@')) hunks++;
  if (hunks <= LIMITS.maxHunks) return undefined;
  return engineError('limit_exceeded', `The patch has ${hunks} hunks; at most ${LIMITS.maxHunks} are accepted in one patch.`, {
    limit: { name: 'maxHunks', max: LIMITS.maxHunks, actual: hunks },
  });
}

function tooManyFiles(sections: number): EngineError {
  return engineError('limit_exceeded', `The patch has more than ${LIMITS.maxFiles} file sections; at most ${LIMITS.maxFiles} are accepted in one patch.`, {
    limit: { name: 'maxFiles', max: LIMITS.maxFiles, actual: sections },
  });
}

// ─── File sections ──────────────────────────────────────────────────────────────────────────────

/** The two paths of a `---`/`+++` pair as written (unquoted, timestamp dropped); null is `/dev/null`. */
interface RawPaths {
  readonly old: string | null;
  readonly new: string | null;
}

/** What a `diff --git` header block said. */
interface GitHeaders {
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
interface Target {
  /** 1-based line where the section starts. */
  readonly line: number;
  readonly oldPath: string | null;
  readonly newPath: string | null;
  readonly rename: boolean;
  /** Set for `diff --git` sections, whose metadata may stand in for hunks. */
  readonly git?: GitHeaders;
}

interface ParsedHunk {
  readonly hunk: Hunk;
  /** 1-based line of the `@@` header. */
  readonly line: number;
}

function parseGitSection(state: ParserState): EngineError | undefined {
  const headers = readGitHeaders(state);
  if (!headers.ok) return headers.error;
  const target = resolveGitTarget(headers.value);
  if (!target.ok) return target.error;
  return finishSection(state, target.value);
}

function parseBareSection(state: ParserState): EngineError | undefined {
  const line = state.index + 1;
  const paths = readFileHeaders(state.lines, state.index);
  if (!paths.ok) return paths.error;
  state.index += 2;
  const target = resolveBareTarget(paths.value, line);
  if (!target.ok) return target.error;
  return finishSection(state, target.value);
}

/** Reads the section's hunks and records the file patch it makes. */
function finishSection(state: ParserState, target: Target): EngineError | undefined {
  if (++state.sections > LIMITS.maxFiles) return tooManyFiles(state.sections);
  const hunks = parseHunks(state, displayPath(target));
  if (!hunks.ok) return hunks.error;
  const built = buildFilePatch(target, hunks.value);
  if (!built.ok) return built.error;
  if (built.value === null) return undefined;
  const duplicate = claimPaths(state, built.value, target.line);
  if (duplicate) return duplicate;
  state.files.push(built.value);
  return undefined;
}

function claimPaths(state: ParserState, file: FilePatch, line: number): EngineError | undefined {
  const paths = file.op === 'rename' ? [file.fromPath, file.path] : [file.path];
  for (const path of paths) {
    const earlier = state.claimed.get(path);
    if (earlier !== undefined) {
      return engineError('duplicate_file_patch', `${path} appears in the file section at line ${earlier} and again in the one at line ${line}; merge its hunks into a single file section.`, { path });
    }
    state.claimed.set(path, line);
  }
  return undefined;
}

function displayPath(target: Target): string {
  return target.newPath ?? target.oldPath ?? '/dev/null';
}

// ─── diff --git header blocks ───────────────────────────────────────────────────────────────────

function readGitHeaders(state: ParserState): Result<GitHeaders> {
  const headers: GitHeaders = {
    line: state.index + 1,
    rest: withoutCr(lineAt(state, state.index)).slice(GIT_HEADER.length).trimEnd(),
    newFile: false,
    deletedFile: false,
    modeChange: false,
  };
  state.index++;
  while (state.index < state.lines.length) {
    if (isFileHeaderAt(state.lines, state.index)) return readGitFileHeaders(state, headers);
    const step = readGitMetadata(state, headers, withoutCr(lineAt(state, state.index)));
    if (step === 'stop') break;
    if (step !== 'read') return fail(step);
    state.index++;
  }
  return ok(headers);
}

function readGitFileHeaders(state: ParserState, headers: GitHeaders): Result<GitHeaders> {
  const paths = readFileHeaders(state.lines, state.index);
  if (!paths.ok) return paths;
  headers.fileHeaders = paths.value;
  state.index += 2;
  return ok(headers);
}

/** One extended header line of a `diff --git` block: `read`, `stop` (not a header line) or an error. */
function readGitMetadata(state: ParserState, headers: GitHeaders, text: string): 'read' | 'stop' | EngineError {
  const unsupported = unsupportedFeature(text, state.index);
  if (unsupported) return unsupported;
  for (const [prefix, key] of [['rename from ', 'renameFrom'], ['rename to ', 'renameTo']] as const) {
    if (!text.startsWith(prefix)) continue;
    const path = readPathArgument(text.slice(prefix.length), state.index);
    if (!path.ok) return path.error;
    headers[key] = path.value;
    return 'read';
  }
  const prefix = METADATA_PREFIXES.find((candidate) => text.startsWith(candidate));
  if (prefix === undefined) return 'stop';
  if (SUBMODULE_MODE.test(text.slice(prefix.length))) {
    return engineError('unsupported_git_patch_feature', `Line ${state.index + 1} (${quoteLine(text)}) belongs to a submodule; submodule patches are not supported.`);
  }
  state.ignoredMetadata.push(text);
  if (prefix === 'new file mode ') headers.newFile = true;
  if (prefix === 'deleted file mode ') headers.deletedFile = true;
  if (prefix === 'old mode ' || prefix === 'new mode ') headers.modeChange = true;
  return 'read';
}

function unsupportedFeature(text: string, index: number): EngineError | undefined {
  let what: string | undefined;
  if (BINARY_FILES.test(text) || text.startsWith('GIT binary patch')) what = 'binary file patches are not supported';
  else if (text.startsWith('copy from ') || text.startsWith('copy to ')) what = 'copy headers are not supported (add the new file with --- /dev/null instead)';
  if (what === undefined) return undefined;
  return engineError('unsupported_git_patch_feature', `Line ${index + 1} (${quoteLine(text)}): ${what}.`);
}

// ─── Paths ──────────────────────────────────────────────────────────────────────────────────────

/** Reads the `---` line at `index` and the `+++` line after it. */
function readFileHeaders(lines: readonly string[], index: number): Result<RawPaths> {
  const oldPath = readHeaderPath(withoutCr(lines[index] ?? '').slice(4), index);
  if (!oldPath.ok) return oldPath;
  const newPath = readHeaderPath(withoutCr(lines[index + 1] ?? '').slice(4), index + 1);
  if (!newPath.ok) return newPath;
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
function readPathArgument(text: string, index: number): Result<string> {
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
    return { value: new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(bytes)), end };
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

function normalizePaths(paths: RawPaths): Result<RawPaths> {
  const oldPath = paths.old === null ? ok(null) : normalizePatchPath(paths.old);
  if (!oldPath.ok) return oldPath;
  const newPath = paths.new === null ? ok(null) : normalizePatchPath(paths.new);
  if (!newPath.ok) return newPath;
  return ok({ old: oldPath.value, new: newPath.value });
}

// ─── Resolving a section's paths (path_escape, rename_path_mismatch) ────────────────────────────

function resolveBareTarget(raw: RawPaths, line: number): Result<Target> {
  const paths = normalizePaths(stripPrefixes(raw, false));
  if (!paths.ok) return paths;
  const { old: oldPath, new: newPath } = paths.value;
  if (oldPath !== null && newPath !== null && oldPath !== newPath) {
    return fail(engineError('rename_path_mismatch', `The file header at line ${line} names ${oldPath} on the --- line but ${newPath} on the +++ line. To edit a file, name it on both lines; to rename one, use \`diff --git\` with \`rename from\` and \`rename to\`.`, { path: newPath }));
  }
  return ok({ line, oldPath, newPath, rename: false });
}

function resolveGitTarget(headers: GitHeaders): Result<Target> {
  const tokens = splitGitPaths(headers.rest);
  const gitPaths = tokens === undefined ? ok(undefined) : normalizePaths(stripPrefixes(tokens, isGitPrefixed(tokens)));
  if (!gitPaths.ok) return gitPaths;
  const prefixed = tokens ? isGitPrefixed(tokens) : /^"?a\//.test(headers.rest) && / "?b\//.test(headers.rest);
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
    const declared = normalizePaths(stripPrefixes(headers.fileHeaders, git.prefixed));
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
  const paths = normalizePaths(stripPrefixes(fileHeaders, git.prefixed));
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

// ─── Building the file patch ────────────────────────────────────────────────────────────────────

/** The section's `FilePatch`, or null for a mode-only section (nothing to do but list its metadata). */
function buildFilePatch(target: Target, parsed: readonly ParsedHunk[]): Result<FilePatch | null> {
  const { oldPath, newPath } = target;
  const hunks = parsed.map((entry) => entry.hunk);
  if (target.rename && oldPath !== null && newPath !== null) return ok({ op: 'rename', fromPath: oldPath, path: newPath, hunks });
  if (oldPath === null && newPath === null) {
    return fail(engineError('parse_error', `The file section at line ${target.line} has /dev/null on both the --- and the +++ line.`));
  }
  if (parsed.length === 0) return buildEmptySection(target);
  if (oldPath === null) return buildAdd(newPath ?? '', parsed);
  if (newPath === null) return buildDelete(oldPath, parsed);
  return ok({ op: 'update', path: newPath, hunks });
}

/** Without hunks only git metadata can say what to do: add or delete an empty file, or change a mode. */
function buildEmptySection(target: Target): Result<FilePatch | null> {
  const git = target.git;
  if (git && !git.fileHeaders) {
    if (target.oldPath === null && target.newPath !== null && git.newFile) return ok({ op: 'add', path: target.newPath, content: '' });
    if (target.newPath === null && target.oldPath !== null && git.deletedFile) return ok({ op: 'delete', path: target.oldPath, hunks: [], mustBeEmpty: true });
    if (git.modeChange && target.oldPath === target.newPath) return ok(null);
  }
  return fail(engineError('parse_error', `The file section for ${displayPath(target)} at line ${target.line} has no hunks. Follow its file header with at least one \`@@ -start,count +start,count @@\` hunk.`, { path: displayPath(target) }));
}

function buildAdd(path: string, parsed: readonly ParsedHunk[]): Result<FilePatch> {
  const texts: string[] = [];
  for (const [hunkIndex, { hunk, line }] of parsed.entries()) {
    if (hunk.lines.some((hunkLine) => hunkLine.kind !== 'add')) {
      return fail(engineError('parse_error', `Hunk ${hunkIndex + 1} (line ${line}) of the new file ${path} has context or removed lines; a new file (--- /dev/null) may only contain \`+\` lines.`, { path, hunkIndex }));
    }
    for (const hunkLine of hunk.lines) texts.push(hunkLine.text);
  }
  const last = parsed[parsed.length - 1]?.hunk;
  const finalNewline = last?.finalNewline === 'remove' ? '' : '\n';
  return ok({ op: 'add', path, content: texts.join('\n') + finalNewline });
}

function buildDelete(path: string, parsed: readonly ParsedHunk[]): Result<FilePatch> {
  for (const [hunkIndex, { hunk, line }] of parsed.entries()) {
    if (hunk.lines.some((hunkLine) => hunkLine.kind === 'add')) {
      return fail(engineError('parse_error', `Hunk ${hunkIndex + 1} (line ${line}) deletes ${path} (+++ /dev/null) but adds lines; a deleted file may only have \`-\` and context lines.`, { path, hunkIndex }));
    }
  }
  return ok({ op: 'delete', path, hunks: parsed.map((entry) => entry.hunk) });
}

// ─── Hunks ──────────────────────────────────────────────────────────────────────────────────────

/** Declared numbers of a hunk header; all absent for `@@`, `@@ @@`, `@@ ... @@`. */
interface HunkCounts {
  readonly oldStart?: number;
  readonly oldCount?: number;
  readonly newCount?: number;
}

type BodyItemKind = HunkLineKind | 'marker';

interface BodyItem {
  readonly kind: BodyItemKind;
  readonly text: string;
  /** A totally empty patch line read as an empty context line. */
  readonly blank: boolean;
  /** 0-based patch line. */
  readonly index: number;
}

interface HunkContext {
  readonly state: ParserState;
  readonly path: string;
  readonly hunkIndex: number;
  /** 0-based patch line of the `@@` header. */
  readonly headerIndex: number;
}

function parseHunks(state: ParserState, path: string): Result<ParsedHunk[]> {
  skipBlankLinesBeforeHunk(state);
  const hunks: ParsedHunk[] = [];
  while (lineAt(state, state.index).startsWith('@@')) {
    const context = { state, path, hunkIndex: hunks.length, headerIndex: state.index };
    const hunk = parseHunk(context);
    if (!hunk.ok) return hunk;
    hunks.push({ hunk: hunk.value, line: context.headerIndex + 1 });
  }
  return ok(hunks);
}

function skipBlankLinesBeforeHunk(state: ParserState): void {
  let index = state.index;
  while (index < state.lines.length && lineAt(state, index).trim() === '') index++;
  if (lineAt(state, index).startsWith('@@')) state.index = index;
}

function parseHunk(context: HunkContext): Result<Hunk> {
  const { state } = context;
  const counts = parseHunkHeader(withoutCr(lineAt(state, state.index)), context);
  if (!counts.ok) return counts;
  state.index++;
  const items = readHunkBody(state, counts.value);
  dropTrailingBlankLines(items, counts.value);
  const interruption = checkHunkEnd(context, items, counts.value);
  if (interruption) return fail(interruption);
  return buildHunk(context, items, counts.value);
}

function parseHunkHeader(text: string, context: HunkContext): Result<HunkCounts> {
  const invalid = (why: string) => fail<HunkCounts>(engineError('invalid_hunk_header', `Line ${context.headerIndex + 1} (${quoteLine(text)}) ${why}. Write \`@@ -old_start,old_count +new_start,new_count @@\`, or just \`@@\`.`, { path: context.path, hunkIndex: context.hunkIndex }));
  if (text.startsWith('@@@')) return invalid('is a combined-diff (merge) header, which is not supported');
  const rest = text.slice(2);
  const close = rest.indexOf('@@');
  const ranges = (close >= 0 ? rest.slice(0, close) : rest).trim();
  if (NO_NUMBERS.test(ranges)) return ok({});
  const match = HUNK_RANGES.exec(ranges);
  if (!match) return invalid('is not a valid hunk header');
  const oldStart = Number(match[1]);
  const oldCount = Number(match[2] ?? '1');
  const newCount = Number(match[4] ?? '1');
  if (![oldStart, oldCount, newCount].every(Number.isSafeInteger)) return invalid('has numbers that are too large');
  return ok({ oldStart: hintedStart(oldStart, oldCount), oldCount, newCount });
}

/** An empty old side (`-5,0`) means "insert after line 5": the hint is the line the insertion goes before. */
function hintedStart(start: number, count: number): number {
  return count === 0 ? start + 1 : Math.max(start, 1);
}

/**
 * Reads body lines by their prefix until a hunk header, a file header or a line that cannot be in
 * a hunk. Counts do not delimit the body (they may be wrong), but they settle whether a
 * `--- x` + `+++ y` pair is a removed and an added line or the next file's header.
 */
function readHunkBody(state: ParserState, counts: HunkCounts): BodyItem[] {
  const items: BodyItem[] = [];
  let pairsAreBody: boolean | undefined;
  while (state.index < state.lines.length) {
    const line = lineAt(state, state.index);
    if (line.startsWith('@@') || line.startsWith(GIT_HEADER)) break;
    if (isFileHeaderAt(state.lines, state.index)) {
      pairsAreBody ??= headerPairIsBody(state, items, counts);
      if (!pairsAreBody) break;
    }
    const item = toBodyItem(line, state.index);
    if (!item) break;
    items.push(item);
    state.index++;
  }
  return items;
}

function toBodyItem(line: string, index: number): BodyItem | undefined {
  if (line === '' || line === '\r') return { kind: 'context', text: line, blank: true, index };
  const kind = BODY_PREFIXES[line.charAt(0)];
  return kind === undefined ? undefined : { kind, text: line.slice(1), blank: false, index };
}

const BODY_PREFIXES: Readonly<Record<string, BodyItemKind>> = { ' ': 'context', '-': 'remove', '+': 'add', '\\': 'marker' };

/**
 * A `--- x` line followed by `+++ y` inside a hunk is body text only if the declared counts come
 * out exactly when it is read as body; otherwise it starts the next file. Evaluated once per hunk
 * (the scan reads the rest of the hunk as if every such pair were body), so reading stays linear.
 */
function headerPairIsBody(state: ParserState, items: readonly BodyItem[], counts: HunkCounts): boolean {
  if (counts.oldCount === undefined) return false;
  const before = tally(items);
  const ahead = scanBodyAhead(state.lines, state.index);
  return blankLinesToDrop({ old: before.old + ahead.old, new: before.new + ahead.new }, ahead.trailingBlanks, counts) !== undefined;
}

function scanBodyAhead(lines: readonly string[], from: number): { old: number; new: number; trailingBlanks: number } {
  let old = 0;
  let added = 0;
  let trailingBlanks = 0;
  for (let index = from; index < lines.length; index++) {
    const line = lines[index] ?? '';
    if (line.startsWith('@@') || line.startsWith(GIT_HEADER)) break;
    const item = toBodyItem(line, index);
    if (!item) break;
    if (item.kind !== 'marker') trailingBlanks = item.blank ? trailingBlanks + 1 : 0;
    if (item.kind !== 'add' && item.kind !== 'marker') old++;
    if (item.kind !== 'remove' && item.kind !== 'marker') added++;
  }
  return { old, new: added, trailingBlanks };
}

function tally(items: readonly BodyItem[]): { old: number; new: number } {
  let old = 0;
  let added = 0;
  for (const item of items) {
    if (item.kind === 'context' || item.kind === 'remove') old++;
    if (item.kind === 'context' || item.kind === 'add') added++;
  }
  return { old, new: added };
}

/** How many trailing blank lines to drop so the body matches the declared counts; undefined if none does. */
function blankLinesToDrop(seen: { old: number; new: number }, trailingBlanks: number, counts: HunkCounts): number | undefined {
  if (counts.oldCount === undefined || counts.newCount === undefined) return undefined;
  const extra = seen.old - counts.oldCount;
  if (extra !== seen.new - counts.newCount || extra < 0 || extra > trailingBlanks) return undefined;
  return extra;
}

/**
 * Empty lines at the end of a hunk are usually separators or the patch's last newline, not context.
 * Keep exactly as many as the declared counts need; when the counts do not settle it, drop them all
 * (dropping trailing context only loosens the match, keeping a spurious one would break it).
 */
function dropTrailingBlankLines(items: BodyItem[], counts: HunkCounts): void {
  let trailing = 0;
  while (trailing < items.length && items[items.length - 1 - trailing]?.blank) trailing++;
  if (trailing === 0) return;
  const drop = blankLinesToDrop(tally(items), trailing, counts) ?? trailing;
  items.length -= drop;
}

/**
 * The body stopped at a line that is not a hunk line. That ends the diff (prose or a fence after
 * it) when the counts came out exactly, when the line is a fence, or when nothing diff-like
 * follows; otherwise the line sits inside a hunk (say, a context line that lost its space) and
 * reading on would silently cut the hunk short.
 */
function checkHunkEnd(context: HunkContext, items: readonly BodyItem[], counts: HunkCounts): EngineError | undefined {
  const { state } = context;
  if (state.index >= state.lines.length) return undefined;
  const line = lineAt(state, state.index);
  if (line.startsWith('@@') || line.startsWith(GIT_HEADER) || isFileHeaderAt(state.lines, state.index)) return undefined;
  if (countsMatch(items, counts) || FENCE.test(line) || !diffLinesFollow(state.lines, state.index + 1)) return undefined;
  return engineError('parse_error', `Line ${state.index + 1} (${quoteLine(line)}) interrupts hunk ${context.hunkIndex + 1} of ${context.path}: every hunk line must start with " " (context), "-", "+" or "\\". If it is a context line, add the missing leading space.`, { path: context.path, hunkIndex: context.hunkIndex });
}

function countsMatch(items: readonly BodyItem[], counts: HunkCounts): boolean {
  const seen = tally(items);
  return seen.old === counts.oldCount && seen.new === counts.newCount;
}

/** Are there hunk-like lines after `from`, before the next file header? */
function diffLinesFollow(lines: readonly string[], from: number): boolean {
  for (let index = from; index < lines.length; index++) {
    const line = lines[index] ?? '';
    if (line.startsWith(GIT_HEADER) || isFileHeaderAt(lines, index)) return false;
    if (line.startsWith('@@') || /^[ +\-\\]/.test(line)) return true;
  }
  return false;
}

function buildHunk(context: HunkContext, items: readonly BodyItem[], counts: HunkCounts): Result<Hunk> {
  const { path, hunkIndex } = context;
  const body = applyNoNewlineMarkers(context, items);
  if (!body.ok) return body;
  const { lines, oldLacksNewline, newLacksNewline } = body.value;
  if (lines.length === 0) {
    return fail(engineError('parse_error', `Hunk ${hunkIndex + 1} of ${path} (line ${context.headerIndex + 1}) has no lines. Give it context (" "), removed ("-") or added ("+") lines.`, { path, hunkIndex }));
  }
  if (lines.every((line) => line.kind !== 'context' && SUBPROJECT_LINE.test(line.text))) {
    return fail(engineError('unsupported_git_patch_feature', `Hunk ${hunkIndex + 1} of ${path} (line ${context.headerIndex + 1}) changes a submodule commit; submodule patches are not supported.`, { path, hunkIndex }));
  }
  noteCountMismatch(context, lines, counts);
  const hunk: { -readonly [K in keyof Hunk]: Hunk[K] } = { anchors: [], lines, atEndOfFile: oldLacksNewline };
  if (counts.oldStart !== undefined) hunk.oldStart = counts.oldStart;
  if (newLacksNewline) hunk.finalNewline = 'remove';
  else if (oldLacksNewline) hunk.finalNewline = 'add';
  return ok(hunk);
}

interface MarkedBody {
  readonly lines: HunkLine[];
  readonly oldLacksNewline: boolean;
  readonly newLacksNewline: boolean;
}

/** `\ No newline at end of file` ends the side(s) of the line before it; nothing of that side may follow. */
function applyNoNewlineMarkers(context: HunkContext, items: readonly BodyItem[]): Result<MarkedBody> {
  const lines: HunkLine[] = [];
  let oldEnded = false;
  let newEnded = false;
  let previousLine: HunkLine | undefined;
  let afterMarker = false;
  for (const item of items) {
    const problem = markerProblem(item, previousLine, oldEnded, newEnded);
    if (problem) return fail(engineError('parse_error', `Line ${item.index + 1} (${quoteLine(context.state.lines[item.index] ?? '')}) ${problem}`, { path: context.path, hunkIndex: context.hunkIndex }));
    if (item.kind !== 'marker') {
      previousLine = { kind: item.kind, text: item.text };
      lines.push(previousLine);
    } else if (previousLine && !afterMarker) {
      // A repeated marker says nothing new.
      oldEnded ||= previousLine.kind !== 'add';
      newEnded ||= previousLine.kind !== 'remove';
    }
    afterMarker = item.kind === 'marker';
  }
  return ok({ lines, oldLacksNewline: oldEnded, newLacksNewline: newEnded });
}

function markerProblem(item: BodyItem, previousLine: HunkLine | undefined, oldEnded: boolean, newEnded: boolean): string | undefined {
  if (item.kind === 'marker') return previousLine === undefined ? 'must follow the hunk line that lacks its newline.' : undefined;
  if (oldEnded && item.kind !== 'add') return 'comes after a `\\ No newline at end of file` marker for the old side; no old-side line may follow it.';
  if (newEnded && item.kind !== 'remove') return 'comes after a `\\ No newline at end of file` marker for the new side; no new-side line may follow it.';
  return undefined;
}

function noteCountMismatch(context: HunkContext, lines: readonly HunkLine[], counts: HunkCounts): void {
  if (counts.oldCount === undefined || counts.newCount === undefined) return;
  const old = lines.filter((line) => line.kind !== 'add').length;
  const added = lines.filter((line) => line.kind !== 'remove').length;
  if (old === counts.oldCount && added === counts.newCount) return;
  context.state.diagnostics.push({
    code: 'hunk_count_mismatch',
    message: `Hunk ${context.hunkIndex + 1} of ${context.path} (line ${context.headerIndex + 1}) declares ${counts.oldCount} old and ${counts.newCount} new lines but has ${old} and ${added}; the counts were ignored.`,
    path: context.path,
    hunkIndex: context.hunkIndex,
  });
}

// ─── Small helpers ──────────────────────────────────────────────────────────────────────────────

function lineAt(state: ParserState, index: number): string {
  return state.lines[index] ?? '';
}

/** A `--- x` line directly followed by a `+++ y` line. */
function isFileHeaderAt(lines: readonly string[], index: number): boolean {
  return (lines[index] ?? '').startsWith('--- ') && (lines[index + 1] ?? '').startsWith('+++ ');
}

/** Header lines are never content, so a CR left on them (mixed line endings) is dropped. */
function withoutCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

function quoteLine(line: string): string {
  return JSON.stringify(line.length > 80 ? `${line.slice(0, 77)}...` : line);
}
