/**
 * A `cd` that the text before a patch names without running it: "Run 'cd build' first.", "You may
 * need to `cd build`." Prose is not a command, so the paths stay relative to the workspace root.
 * But the text may mean that they are relative to that directory; where the patch would apply
 * there as well, applying it at the root could be a wrong edit. So the workspace is asked
 * (`pathProbe`) whether the files the patch changes exist under the directory: when one is missing
 * there, the root reading is the only one that can apply and stands; when they all exist, when
 * the workspace does not look at one (`refusedPaths`: a symbolic link is or leads there), or when
 * the patch only adds files (nothing to tell the readings apart), it is refused, saying how to
 * send it.
 */
import { quoteLine } from './chunks.ts';
import { DIRECTORY_COMMAND, DIRECTORY_MENTION, runsPatchCommand, isPatchLine } from './detect.ts';
import { engineError, type EngineError } from './errors.ts';
import { normalizePatchPath } from './paths.ts';
import { readWord } from './shellCommand.ts';
import { fail, ok, type FilePatch, type ParsedPatch, type PatchInput, type Result } from './types.ts';
import { underDirectory, workspaceDirectory } from './underDirectory.ts';

/**
 * The directory that `cd` commands named in the text before the patch (up to its first patch
 * line or command) lead to; undefined when none does, or only `cd .` or a bare `cd` is named.
 * One that cannot be read as a directory of the workspace, or several different ones, refuse
 * the patch: its paths may be relative to them, and that cannot be checked.
 */
export function findDirectoryMention(lines: readonly string[]): Result<string | undefined> {
  const named = new Set<string>();
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (runsPatchCommand(line) || isPatchLine(line, lines[index + 1])) break;
    if (DIRECTORY_COMMAND.test(line)) continue;
    for (const match of line.matchAll(DIRECTORY_MENTION)) {
      const directory = mentionedDirectory(line, match.index + match[0].length, match[1]!);
      if (!directory.ok) return directory;
      if (directory.value !== '') named.add(directory.value);
    }
  }
  if (named.size > 1) return fail(unclear(`The text before the patch names cd into several directories (${[...named].join(', ')})`));
  return ok(named.values().next().value);
}

const SPACES = /\s*/y;

/** The directory a named `cd` at `start` (just after the word) leads to; '' for none (`cd` named alone, `cd .`). */
function mentionedDirectory(line: string, start: number, quote: string): Result<string> {
  SPACES.lastIndex = start;
  SPACES.test(line);
  const at = SPACES.lastIndex;
  if (at === line.length || line[at] === quote) return ok('');
  const word = readWord(line, at, quote);
  if (word === undefined || word.text === '-') return fail(unclear(`${quoteLine(line.trim())} names a cd whose directory patchd cannot read`));
  if (!normalizePatchPath(`${word.text}/_`).ok) return fail(unclear(`${quoteLine(line.trim())} names a cd out of the workspace (${word.text})`));
  return ok(workspaceDirectory(word.text));
}

/**
 * Checks a parsed patch against the directory the text before it named (`mentionedDirectory`):
 * on a first parse with `probe`, adds the paths to ask about; once `existingPaths` answers,
 * keeps the patch (with a note) or refuses it. A caller that cannot look (neither) gets a refusal.
 */
export function weighDirectoryMention(parsed: ParsedPatch, input: PatchInput): Result<ParsedPatch> {
  const directory = parsed.mentionedDirectory;
  if (directory === undefined) return ok(parsed);
  const there = underDirectory(parsed.files, directory, `Under ${directory}`);
  if (!there.ok) return there;
  const changedThere = changedFiles(there.value);
  const changedHere = changedFiles(parsed.files);
  if (input.existingPaths === undefined) {
    if (input.probe !== true) return fail(unclear(`The text before the patch names cd ${directory}, and patchd cannot look at the workspace here to tell whether the patch's paths are relative to it`));
    const candidates = parsed.pathProbe ?? [];
    const pathProbe = [...new Set([...candidates, ...candidates.map((path) => `${directory}/${path}`), ...changedThere, ...changedHere])];
    return ok({ ...parsed, pathProbe, probeExpects: undefined });
  }
  const existing = new Set(input.existingPaths);
  const refused = new Set(input.refusedPaths);
  if (changedThere.some((path) => !existing.has(path) && !refused.has(path))) {
    const note = `The text before the patch names cd ${directory}; that is not run, so the paths were taken from the workspace root (the files the patch changes are not all under ${directory}).`;
    return ok({ ...parsed, diagnostics: [...parsed.diagnostics, { code: 'directory_named_in_text', message: note }] });
  }
  const unseen = changedThere.find((path) => refused.has(path));
  if (unseen !== undefined) {
    return fail(unclear(`The text before the patch names cd ${directory}, and patchd does not look at ${unseen} (a symbolic link is or leads there, or it is in .git/ or unreadable): whether the patch's paths are relative to ${directory} cannot be told`, unseen));
  }
  return fail(ambiguity(directory, changedThere, changedHere.length > 0 && changedHere.every((path) => existing.has(path))));
}

/** The files the patch changes, which must exist: what tells where it applies. */
function changedFiles(files: readonly FilePatch[]): string[] {
  return files.flatMap((file) => (file.op === 'add' || file.op === 'write' ? [] : [file.op === 'rename' ? file.fromPath : file.path]));
}

function ambiguity(directory: string, changedThere: readonly string[], changedHere: boolean): EngineError {
  const named = `The text before the patch names cd ${directory}`;
  const [first] = changedThere;
  if (first === undefined) {
    return unclear(`${named}, and the patch only adds files, which may belong at the workspace root or under ${directory}`);
  }
  if (changedHere) {
    return unclear(`${named}, and the files the patch changes exist both at the workspace root and under ${directory} (${first}): which it means is unclear`, first);
  }
  return engineError('unsupported_command', `${named}, and the files the patch changes are under ${directory} (${first}), not at the workspace root, so its paths are relative to ${directory}; prose is not run, and paths are taken from the workspace root. Put ${directory}/ before each path, or send the patch as cd ${directory} && apply_patch <<'EOF' … EOF.`, { path: first });
}

function unclear(what: string, path?: string): EngineError {
  return engineError('unsupported_command', `${what}. Nothing was applied: send the patch without that text, every path written from the workspace root.`, { path });
}
