/**
 * The unified / git diff parser (dialect `unified`): the RFC's "Unified Diff Subset V1" plus the
 * leniencies DESIGN and the conformance corpus ask for. Pure: patch lines in, `ParsedPatch` out,
 * errors as data. One pass over the lines; the only look-aheads are bounded so that every line is
 * read a small, fixed number of times.
 *
 * This module finds the file sections, reads `diff --git` header blocks and builds each section's
 * `FilePatch`. unifiedPaths.ts resolves a section's paths (quoting, `a/` `b/` prefixes, renames);
 * unifiedHunks.ts reads its hunks. Line numbers in messages are 1-based lines of the patch text.
 */
import { isEmptyBlob } from './blobs.ts';
import { engineError, type EngineError } from './errors.ts';
import { withFileEdges } from './fileEdges.ts';
import { LIMITS } from './limits.ts';
import { probeCandidates, provisionalName, resolveBareNames, type BareNames, type ResolvedNames, type StripOptions } from './strip.ts';
import { fail, ok, type BlobIds, type Diagnostic, type FilePatch, type ParsedPatch, type Result, type SeriesPart } from './types.ts';
import type { DiffTool } from './unifiedCutOff.ts';
import { headerCutOffError, unshownContent } from './unifiedHeaderCutOff.ts';
import { parseHunks, type ParsedHunk } from './unifiedHunks.ts';
import { DIFF_COMMAND, FENCE, GIT_HEADER, isFileHeaderAt, lineAt, quoteLine, withoutCr, type LineCursor } from './unifiedLines.ts';
import { readFileHeaders, readPathArgument, resolveGitTarget, type FileHeaderPaths, type GitHeaders, type Target } from './unifiedPaths.ts';

export interface UnifiedOptions extends StripOptions {
  /** Add `pathProbe` when the paths of sections without `diff --git` depend on which files exist (see `ParsedPatch.pathProbe`). */
  readonly probe?: boolean | undefined;
  /** The patches of a series (mailbox), each from its 0-based first line on; a file may appear once per part. */
  readonly parts?: readonly { readonly start: number; readonly title: string }[] | undefined;
}

const BINARY_FILES = /^Binary files .* differ$/;
/** The modes git gives a submodule (gitlink) and a symbolic link: neither is a regular file. */
const SPECIAL_MODE = /(?:^|\s|\.\.)(160000|120000)(?:\s|$)/;
const INDEX_LINE = /^index ([0-9a-f]{7,64})\.\.([0-9a-f]{7,64})(?: [0-7]{6})?$/;
const SIMILARITY = /^(dis)?similarity index (\d{1,3})%$/;
const METADATA_PREFIXES = ['index ', 'similarity index ', 'dissimilarity index ', 'new file mode ', 'deleted file mode ', 'old mode ', 'new mode '] as const;

/** Parses a unified or git diff. `lines` come from `splitPatchLines`. Never throws. */
export function parseUnified(lines: readonly string[], options: UnifiedOptions = {}): Result<ParsedPatch> {
  try {
    return parseAll(lines, options);
  } catch (error) {
    // The parser is written not to throw; should a bug slip through, it must still come back as data.
    return fail(engineError('parse_error', `The unified diff could not be parsed (${String(error)}).`));
  }
}

// ─── Parser state and top-level loop ────────────────────────────────────────────────────────────

interface ParserState extends LineCursor {
  readonly options: UnifiedOptions;
  /** Every file section read, in patch order; their paths are resolved once the whole patch is read. */
  readonly sections: Section[];
  readonly diagnostics: Diagnostic[];
  readonly ignoredMetadata: string[];
  /** Codes of the text-around-patch diagnostics already given (once each, however many lines). */
  readonly noted: Set<string>;
}

/** A file section: a `diff --git` one resolved as it is read, or one with bare `---`/`+++` names. */
interface Section {
  readonly target?: Target | undefined;
  readonly bare?: BareNames | undefined;
  /** A bare section `diff -u` made (`FileHeaderPaths.dated`). */
  readonly dated?: boolean;
  readonly hunks: readonly ParsedHunk[];
  /** 0-based line where the section starts (which part of a series it belongs to). */
  readonly index: number;
  /** 0-based line after its header and hunks. */
  readonly end: number;
}

function parseAll(lines: readonly string[], options: UnifiedOptions): Result<ParsedPatch> {
  const limitError = checkLimits(lines);
  if (limitError) return fail(limitError);
  const state: ParserState = { lines, index: 0, options, sections: [], diagnostics: [], ignoredMetadata: [], noted: new Set() };
  while (state.index < lines.length) {
    const error = parseNext(state);
    if (error) return fail(error);
  }
  const cut = headerCutOff(state);
  if (cut) return fail(cut);
  if (state.sections.length === 0) {
    const other = otherDiffFormat(lines);
    const what = other === undefined ? '' : ` This is ${other}, which patchd does not read: make the diff with \`diff -u\` or \`git diff\`.`;
    return fail(engineError('parse_error', `No file section found.${what} A unified diff starts each file with \`--- a/path\` and \`+++ b/path\` (or a \`diff --git\` line), followed by \`@@\` hunks.`));
  }
  const bare = state.sections.flatMap((section) => (section.bare ? [section.bare] : []));
  if (options.probe === true && options.existing === undefined) {
    const pathProbe = probeCandidates(bare, options.strip);
    if (pathProbe.length > 0) {
      const guessed = buildFiles(state);
      if (!guessed.ok) return ok({ dialect: 'unified', files: [], diagnostics: [], ignoredMetadata: [], pathProbe });
      return ok({ ...guessed.value.parsed, pathProbe, probeExpects: guessed.value.expects });
    }
  }
  const built = buildFiles(state);
  return built.ok ? ok(built.value.parsed) : built;
}

const CONTEXT_HUNK_SEPARATOR = /^\*{15}$/;
const CONTEXT_HUNK_OLD_RANGE = /^\*\*\* \d+(?:,\d+)? \*\*\*\*$/;
const NORMAL_COMMAND = /^\d+(?:,\d+)?[acd]\d+(?:,\d+)?$/;

/** GNU diff's other output formats, told by their hunk lines, for the error when no unified section was found. */
function otherDiffFormat(lines: readonly string[]): string | undefined {
  const plain = lines.map(withoutCr);
  if (plain.some((line) => CONTEXT_HUNK_SEPARATOR.test(line)) && plain.some((line) => CONTEXT_HUNK_OLD_RANGE.test(line))) return 'a context diff (`diff -c`)';
  if (plain.some((line) => NORMAL_COMMAND.test(line)) && plain.some((line) => line.startsWith('< ') || line.startsWith('> '))) return 'a normal diff (`diff` without `-u`)';
  return undefined;
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
  if (line.trim() === '' || DIFF_COMMAND.test(line)) return;
  const code = FENCE.test(line) ? 'fenced_patch' : 'text_around_patch';
  // A set, not a search of the diagnostics: those grow with every hunk, and this runs per line.
  if (state.noted.has(code)) return;
  state.noted.add(code);
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

/** A tool's patch that ends inside the header of its last file section was cut off (unifiedHeaderCutOff.ts). */
function headerCutOff(state: ParserState): EngineError | undefined {
  const last = state.sections[state.sections.length - 1];
  if (last === undefined) return undefined;
  const maker = state.sections.map((section) => madeBy(section.target ?? section)).find((tool) => tool !== undefined);
  const path = last.target ? displayPath(last.target) : provisionalName(last.bare!);
  const line = last.target?.line ?? last.index + 1;
  const epoch = last.bare !== undefined && (last.bare.oldAbsent || last.bare.newAbsent);
  return headerCutOffError(state.lines, { path, line, end: last.end, hunkCount: last.hunks.length, git: last.target?.git, epoch, maker });
}

// ─── File sections ──────────────────────────────────────────────────────────────────────────────

function parseGitSection(state: ParserState): EngineError | undefined {
  const start = state.index;
  const headers = readGitHeaders(state);
  if (!headers.ok) return headers.error;
  const target = resolveGitTarget(headers.value, state.options.strip);
  if (!target.ok) return target.error;
  return readSection(state, displayPath(target.value), madeBy(target.value), (hunks) => ({ target: target.value, hunks, index: start }));
}

function parseBareSection(state: ParserState): EngineError | undefined {
  const start = state.index;
  const paths = readFileHeaders(state);
  if (!paths.ok) return paths.error;
  return readSection(state, provisionalName(paths.value), madeBy(paths.value), (hunks) => ({ bare: bareNames(paths.value, start + 1, hunks), dated: paths.value.dated, hunks, index: start }));
}

/** Reads a section's hunks and records it. */
function readSection(state: ParserState, path: string, maker: DiffTool | undefined, section: (hunks: ParsedHunk[]) => Omit<Section, 'end'>): EngineError | undefined {
  if (state.sections.length + 1 > LIMITS.maxFiles) return tooManyFiles(state.sections.length + 1);
  const hunks = parseHunks(state, path, maker);
  if (!hunks.ok) return hunks.error;
  state.sections.push({ ...section(hunks.value), end: state.index });
  return undefined;
}

/** A side dated at the Unix epoch (`diff -N`) is absent when the hunks have no lines on that side. */
function bareNames(paths: FileHeaderPaths, line: number, hunks: readonly ParsedHunk[]): BareNames {
  const only = (kind: string) => hunks.every(({ hunk }) => hunk.lines.every((hunkLine) => hunkLine.kind === kind));
  return {
    line,
    old: paths.old,
    new: paths.new,
    oldAbsent: paths.old === null || (paths.oldEpoch && only('add')),
    newAbsent: paths.new === null || (paths.newEpoch && only('remove')),
  };
}

// ─── Resolving paths and building the file patches ──────────────────────────────────────────────

/**
 * Resolves every section's paths and builds its file patch, in patch order; a file may be named
 * once per part. `expects`: the files bare sections edit or delete, which must exist.
 */
function buildFiles(state: ParserState): Result<{ parsed: ParsedPatch; expects: string[] }> {
  const parts = state.options.parts ?? [];
  const files: FilePatch[] = [];
  const series: SeriesPart[] = [];
  const found: Found[] = [];
  const expects: string[] = [];
  let claimed = new Map<string, number>();
  let part = -1;
  for (const section of state.sections) {
    while (part + 1 < parts.length && parts[part + 1]!.start <= section.index) {
      part++;
      claimed = new Map();
      series.push({ title: parts[part]!.title, fileCount: 0 });
    }
    const target = targetOf(section, state.options, found, state.diagnostics);
    if (!target.ok) return target;
    if (section.bare && target.value.oldPath !== null) expects.push(target.value.oldPath);
    const built = buildFilePatch(target.value, section.hunks);
    if (!built.ok) return built;
    if (built.value === null) {
      const path = target.value.newPath ?? '';
      state.diagnostics.push({ code: 'mode_not_applied', message: `${path} has only a mode change (old mode/new mode), which patchd does not apply: the file is left as it is.`, path });
      continue;
    }
    const mode = unappliedMode(target.value);
    if (mode) state.diagnostics.push(mode);
    const duplicate = claimPaths(claimed, built.value, target.value.line);
    if (duplicate) return fail(duplicate);
    files.push(built.value);
    const current = series[series.length - 1];
    if (current) series[series.length - 1] = { ...current, fileCount: current.fileCount + 1 };
  }
  const diagnostics = [...state.diagnostics, ...stripDiagnostics(found)];
  const parsed: ParsedPatch = { dialect: 'unified', files, diagnostics, ignoredMetadata: state.ignoredMetadata };
  return ok({ parsed: series.length > 1 ? { ...parsed, series } : parsed, expects });
}

/** A mode a section asks for besides its content (an executable new file, a mode change with edits), which patchd does not apply. */
function unappliedMode(target: Target): Diagnostic | undefined {
  const { git, newPath: path } = target;
  if (git?.newMode === undefined || path === null || (git.newFile ? git.newMode === '100644' : !git.modeChange)) return undefined;
  const asked = git.newFile ? `\`new file mode ${git.newMode}\`` : `\`new mode ${git.newMode}\``;
  // Worded for any outcome: the same note goes with a dry run, a rejection and an applied patch.
  const outcome = git.newFile ? 'is created with mode 644 (less the umask)' : 'keeps its mode';
  return { code: 'mode_not_applied', message: `patchd does not apply modes: ${path} ${outcome}, not its ${asked}.`, path };
}

/** A bare section whose level or file was worked out, for the diagnostics. */
interface Found {
  readonly names: BareNames;
  readonly resolved: ResolvedNames;
}

function targetOf(section: Section, options: UnifiedOptions, found: Found[], diagnostics: Diagnostic[]): Result<Target> {
  if (section.target) return ok(section.target);
  const names = section.bare!;
  const resolved = resolveBareNames(names, options);
  if (!resolved.ok) return resolved;
  if (resolved.value.found || resolved.value.chose) found.push({ names, resolved: resolved.value });
  const epoch = (names.oldAbsent && names.old !== null) || (names.newAbsent && names.new !== null);
  const { old: oldPath, new: newPath } = resolved.value;
  const added = oldPath !== null && oldPath === newPath && options.existing?.has(oldPath) === false && addsToEmpty(section.hunks);
  if (added) {
    const message = `${oldPath} does not exist, and its one hunk adds lines to nothing (\`@@ -0,0\`): it was added, as \`git apply\` and GNU patch do.`;
    diagnostics.push({ code: 'missing_file_added', message, path: oldPath });
  }
  return ok({ line: names.line, oldPath: added ? null : oldPath, newPath, rename: false, epoch, dated: section.dated });
}

/**
 * A section without `diff --git` whose file does not exist is an add when, as `svn diff` writes a
 * new file and a model writing a diff by hand may, its one hunk has no old lines and is numbered
 * from the top (`@@ -0,0`, whose `oldStart` is 1).
 */
function addsToEmpty(hunks: readonly ParsedHunk[]): boolean {
  const [only, ...rest] = hunks;
  return only !== undefined && rest.length === 0 && only.hunk.oldStart === 1 && only.hunk.lines.every((line) => line.kind === 'add');
}

/** Says which strip level was used where the names or the workspace decided it, and which of two names was patched. */
function stripDiagnostics(found: readonly Found[]): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const levels = new Map<number, Found>();
  for (const entry of found) if (entry.resolved.found && !levels.has(entry.resolved.found.level)) levels.set(entry.resolved.found.level, entry);
  for (const [level, { names, resolved }] of levels) {
    const path = resolved.new ?? resolved.old ?? '';
    const example = `${names.old ?? names.new} → ${path}`;
    const why = resolved.found?.by === 'workspace' ? 'where the files exist in the workspace' : 'where the --- and +++ names agree';
    diagnostics.push({ code: 'strip_level', message: `Paths without \`diff --git\` were read at strip level ${level} (as \`patch -p${level}\`), ${why}: ${example}. Pass \`strip\` to choose another level.`, path });
  }
  for (const { names, resolved } of found) {
    if (resolved.chose === undefined) continue;
    diagnostics.push({ code: 'different_names', message: `The file header at line ${names.line} names ${names.old} (---) and ${names.new} (+++); ${resolved.chose} was patched, the one that exists (as GNU patch does).`, path: resolved.chose });
  }
  return diagnostics;
}

function claimPaths(claimed: Map<string, number>, file: FilePatch, line: number): EngineError | undefined {
  const paths = file.op === 'rename' ? [file.fromPath, file.path] : [file.path];
  for (const path of paths) {
    const earlier = claimed.get(path);
    if (earlier !== undefined) {
      return engineError('duplicate_file_patch', `${path} appears in the file section at line ${earlier} and again in the one at line ${line}; merge its hunks into a single file section.`, { path });
    }
    claimed.set(path, line);
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
    if (isFileHeaderAt(state.lines, state.index)) {
      const paths = readFileHeaders(state);
      if (!paths.ok) return paths;
      headers.fileHeaders = paths.value;
      break;
    }
    const step = readGitMetadata(state, headers, withoutCr(lineAt(state, state.index)));
    if (step === 'stop') break;
    if (step !== 'read') return fail(step);
    state.index++;
  }
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
  const special = SPECIAL_MODE.exec(text.slice(prefix.length))?.[1];
  if (special !== undefined) {
    const what = special === '160000' ? 'a submodule; submodule patches are' : 'a symbolic link (mode 120000), whose content is its target; patches to links are';
    return engineError('unsupported_git_patch_feature', `Line ${state.index + 1} (${quoteLine(text)}) belongs to ${what} not supported.`);
  }
  state.ignoredMetadata.push(text);
  const blobs = INDEX_LINE.exec(text);
  if (blobs) headers.blobs = { old: blobs[1]!, new: blobs[2]! };
  if (prefix === 'index ') headers.indexLine = true;
  const similarity = SIMILARITY.exec(text);
  if (similarity) headers.similarity = similarity[1] === undefined ? Number(similarity[2]) : 100 - Number(similarity[2]);
  if (prefix === 'new file mode ') headers.newFile = true;
  if (prefix === 'deleted file mode ') headers.deletedFile = true;
  if (prefix === 'old mode ' || prefix === 'new mode ') headers.modeChange = true;
  if (prefix === 'new file mode ' || prefix === 'new mode ') headers.newMode = text.slice(prefix.length).trim();
  return 'read';
}

function unsupportedFeature(text: string, index: number): EngineError | undefined {
  let what: string | undefined;
  if (BINARY_FILES.test(text) || text.startsWith('GIT binary patch')) what = 'binary file patches are not supported';
  else if (text.startsWith('copy from ') || text.startsWith('copy to ')) what = 'copy headers are not supported (add the new file with --- /dev/null instead)';
  if (what === undefined) return undefined;
  return engineError('unsupported_git_patch_feature', `Line ${index + 1} (${quoteLine(text)}): ${what}.`);
}

// ─── Building the file patch ────────────────────────────────────────────────────────────────────

/** The section's `FilePatch`, or null for a mode-only section (nothing to do but list its metadata). */
function buildFilePatch(target: Target, parsed: readonly ParsedHunk[]): Result<FilePatch | null> {
  const { oldPath, newPath } = target;
  const unshown = parsed.length === 0 ? unshownContentError(target) : undefined;
  if (unshown) return fail(unshown);
  const gitBlobs = target.git?.blobs;
  const asParsed = parsed.map((entry) => entry.hunk);
  const maker = madeBy(target);
  const hunks = maker === 'git' ? withFileEdges(asParsed) : maker === 'diff -u' ? withFileEdges(asParsed, true) : asParsed;
  const blobs = gitBlobs === undefined ? {} : { blobs: gitBlobs };
  if (target.rename && oldPath !== null && newPath !== null) return ok({ op: 'rename', fromPath: oldPath, path: newPath, hunks, ...blobs });
  if (oldPath === null && newPath === null) {
    return fail(engineError('parse_error', `The file section at line ${target.line} has /dev/null on both the --- and the +++ line.`));
  }
  if (parsed.length === 0) return buildEmptySection(target);
  if (oldPath === null) return buildAdd(newPath ?? '', parsed);
  if (newPath === null) return buildDelete(oldPath, parsed);
  return ok({ op: 'update', path: newPath, hunks, ...blobs });
}

/**
 * The tool that made a section, as far as its headers show: an index line says git did (and what
 * the file was); timestamps on both header lines, that `diff -u` did. Without either, a person or
 * a model may have written it. A tool's hunks hold to the file's edges (fileEdges.ts), and a tool's
 * hunk that stops short of its counts where the patch ends was cut off (unifiedCutOff.ts), as was
 * a tool's patch that ends inside a file's header (unifiedHeaderCutOff.ts).
 */
function madeBy(section: { readonly git?: GitHeaders | undefined; readonly dated?: boolean | undefined }): DiffTool | undefined {
  if (section.git?.blobs !== undefined) return 'git';
  return section.dated === true ? 'diff -u' : undefined;
}

/** Without hunks only git metadata or `diff -N`'s epoch dates can say what to do: add or delete an empty file, or change a mode. */
function buildEmptySection(target: Target): Result<FilePatch | null> {
  if (target.epoch === true) {
    if (target.oldPath === null && target.newPath !== null) return ok({ op: 'add', path: target.newPath, content: '' });
    if (target.newPath === null && target.oldPath !== null) return ok({ op: 'delete', path: target.oldPath, hunks: [], mustBeEmpty: true });
  }
  const git = target.git;
  if (git && !git.fileHeaders) {
    if (target.oldPath === null && target.newPath !== null && git.newFile) return ok({ op: 'add', path: target.newPath, content: '' });
    if (target.newPath === null && target.oldPath !== null && git.deletedFile) return ok({ op: 'delete', path: target.oldPath, hunks: [], mustBeEmpty: true, ...deletedBlobs(git) });
    if (git.modeChange && target.oldPath === target.newPath) return ok(null);
  }
  return fail(engineError('parse_error', `The file section for ${displayPath(target)} at line ${target.line} has no hunks. Follow its file header with at least one \`@@ -start,count +start,count @@\` hunk.`, { path: displayPath(target) }));
}

/** The blobs of a delete without lines when they name content (`git diff -D`): the file must be that blob (blobs.ts, `deletedAsSaid`). */
function deletedBlobs({ blobs }: GitHeaders): { blobs?: BlobIds } {
  return blobs === undefined || isEmptyBlob(blobs.old) ? {} : { blobs };
}

/** A hunkless section whose index line names content it does not show: what it says alone is a wrong edit. */
function unshownContentError(target: Target): EngineError | undefined {
  const unshown = target.git && unshownContent(target.git);
  if (!unshown) return undefined;
  const path = displayPath(target);
  return engineError('parse_error', `The file section for ${path} at line ${target.line} has no hunk, but ${unshown}: applying it without one would be a wrong edit, so nothing was applied. Send the section with its \`@@\` hunks.`, { path });
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
  const finalNewline = last?.finalNewline?.new === false ? '' : '\n';
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
