/**
 * apply_patch shell heredocs (dialect `shell`) → `ParsedPatch`. Pure; never throws.
 *
 *     cd sub/dir && apply_patch <<'EOF'
 *     *** Begin Patch
 *     …
 *     *** End Patch
 *     EOF
 *
 * Models that learned to patch through a shell send this; like Codex, patchd intercepts exactly
 * this form and governs it as a patch. Accepted: `apply_patch` or `applypatch`, `<<'X'`, `<<"X"`,
 * `<<X` or `<<-X`, optionally after one `cd <dir> &&`. As in bash, the heredoc ends at the first
 * line that is exactly the delimiter (`<<-`: once its leading tabs are gone); ` EOF` is a body
 * line. The body (envelope or unified diff, by detection) is parsed as such and every path is
 * taken relative to `<dir>`, which must stay inside the workspace (absolute and `~` directories
 * are `path_escape`: the engine never sees the root) and must be a directory there
 * (`workingDirectory`: a shell stops at a failed `cd`, so the plan is `not_found`).
 *
 * Prose may come before the command, and the command may stand in a code fence; that text is
 * ignored and reported. Anything else — other commands on its line, more `&&`, pipes,
 * redirections, `;`, `bash -lc "…"` (its quotes would expand `$` and backticks in the patch), a
 * `cd` anywhere before it, text after the heredoc outside a fence, a second command or patch after
 * the fence — is refused: it is never run, and never half understood.
 */
import { isBlank, quoteLine } from './chunks.ts';
import { APPLY_PATCH_HEREDOC, DIRECTORY_CHANGE, detectTextDialect, isPatchLine } from './detect.ts';
import { parseEnvelope } from './envelope.ts';
import { engineError, type EngineError } from './errors.ts';
import { normalizePatchPath, pathErrorAt, pathSegments } from './paths.ts';
import { fail, ok, type Diagnostic, type FilePatch, type ParsedPatch, type Result } from './types.ts';
import { parseUnified } from './unified.ts';
import { FENCE } from './unifiedLines.ts';

const COMMAND = /^(?:cd\s+(?<directory>'[^']*'|"[^"$`\\]*"|[\w./@+,:=~-]+)\s*&&\s*)?(?:apply_patch|applypatch)\s*<<(?<tabs>-?)\s*(?<quote>['"]?)(?<delimiter>[A-Za-z_][\w.-]*)\k<quote>$/;

interface Command {
  /** The `cd` directory, unquoted; '' when there is none. */
  readonly directory: string;
  readonly body: readonly string[];
  /** Non-blank lines before the command and after its heredoc (prose, fences): ignored. */
  readonly around: { readonly before: number; readonly after: number };
}

/** Parses a shell command string (as `splitPatchLines` gives its lines) that runs apply_patch on a heredoc. */
export function parseShellCommand(lines: readonly string[]): Result<ParsedPatch> {
  const command = readCommand(lines);
  if (!command.ok) return command;
  const inner = parseBody(command.value.body);
  if (!inner.ok) return inner;
  const files = inDirectory(inner.value.files, command.value.directory);
  if (!files.ok) return files;
  const diagnostics = [describeCommand(command.value), ...describeTextAround(command.value), ...inner.value.diagnostics];
  const workingDirectory = workspaceDirectory(command.value.directory);
  return ok({
    dialect: 'shell', files: files.value, diagnostics, ignoredMetadata: inner.value.ignoredMetadata,
    ...(workingDirectory === '' ? {} : { workingDirectory }),
  });
}

function readCommand(lines: readonly string[]): Result<Command> {
  const start = findCommand(lines);
  if (!start.ok) return start;
  const first = start.value;
  const match = COMMAND.exec(lines[first]!.trim());
  if (match === null) return fail(unsupported(lines[first]!));
  const delimiter = match.groups?.delimiter ?? '';
  const end = heredocEnd(lines, first, delimiter, match.groups?.tabs === '-');
  if (end === -1) {
    return fail(engineError('parse_error', `The heredoc opened on line ${first + 1} is never closed by a line that is exactly ${delimiter}: the command may be truncated. Resend it whole.`));
  }
  const fenced = lines.slice(0, first).filter((line) => FENCE.test(line)).length % 2 === 1;
  const after = readAfter(lines, end + 1, fenced);
  if (!after.ok) return after;
  const before = lines.slice(0, first).filter((line) => !isBlank(line)).length;
  return ok({ directory: unquote(match.groups?.directory ?? ''), body: lines.slice(first + 1, end), around: { before, after: after.value } });
}

/**
 * The line that runs apply_patch. Prose (and a fence) may come before it; a `cd` may not (on a line
 * of its own, or joined with `;`, it would change what the paths mean), nor may a patch.
 */
function findCommand(lines: readonly string[]): Result<number> {
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (APPLY_PATCH_HEREDOC.test(line)) return ok(index);
    if (isPatchLine(line, lines[index + 1])) break;
    if (DIRECTORY_CHANGE.test(line)) return fail(unsupported(line, ' (a cd apart from the apply_patch command, which would change what its paths mean)'));
  }
  const first = lines.find((line) => !isBlank(line));
  return fail(first === undefined ? engineError('parse_error', 'The command is empty.') : unsupported(first));
}

/** Bash ends a heredoc only at a line that is exactly the delimiter (`<<-`: after leading tabs); a CR left from CRLF text is a line ending. */
function heredocEnd(lines: readonly string[], first: number, delimiter: string, stripTabs: boolean): number {
  return lines.findIndex((line, index) => {
    if (index <= first) return false;
    const text = stripTabs ? line.replace(/^\t+/, '') : line;
    return text === delimiter || text === `${delimiter}\r`;
  });
}

/**
 * The non-blank lines after the heredoc, which must be ignorable: none, unless the command stands
 * in a code fence — then the fence must close right after it, and prose may follow, but no
 * second command or patch.
 */
function readAfter(lines: readonly string[], start: number, fenced: boolean): Result<number> {
  const fence = lines.findIndex((line, index) => index >= start && !isBlank(line));
  if (fence === -1) return ok(0);
  if (!fenced || !FENCE.test(lines[fence]!)) return fail(unsupported(lines[fence]!, ' (after the heredoc)'));
  let count = 0;
  for (let index = fence; index < lines.length; index++) {
    const line = lines[index]!;
    if (isBlank(line)) continue;
    count++;
    if (index === fence) continue;
    if (APPLY_PATCH_HEREDOC.test(line)) {
      return fail(engineError('unsupported_command', `Line ${index + 1} (${quoteLine(line.trim())}) runs apply_patch a second time. Send one apply_patch command holding every change.`));
    }
    if (isPatchLine(line, lines[index + 1])) {
      return fail(engineError('parse_error', `Line ${index + 1} (${quoteLine(line)}), after the apply_patch command, starts another patch. Send one command (or one patch) holding every change.`));
    }
  }
  return ok(count);
}

function unquote(word: string): string {
  return /^(['"]).*\1$/.test(word) ? word.slice(1, -1) : word;
}

function parseBody(body: readonly string[]): Result<ParsedPatch> {
  const dialect = detectTextDialect(body);
  if (dialect === 'codex') return parseEnvelope(body);
  if (dialect === 'unified') return parseUnified(body);
  if (dialect === 'shell') {
    return fail(engineError('parse_error', 'The heredoc holds a shell command (a cd, or apply_patch again) before its patch; apply_patch reads the heredoc as patch text. Put only the patch in it.'));
  }
  return fail(engineError('parse_error', 'apply_patch takes a *** Begin Patch envelope or a unified diff, and the heredoc holds neither.'));
}

function inDirectory(files: readonly FilePatch[], directory: string): Result<FilePatch[]> {
  if (directory === '') return ok([...files]);
  const moved: FilePatch[] = [];
  for (const file of files) {
    const path = joinPath(directory, file.path);
    if (!path.ok) return path;
    if (file.op !== 'rename') {
      moved.push({ ...file, path: path.value });
      continue;
    }
    const fromPath = joinPath(directory, file.fromPath);
    if (!fromPath.ok) return fromPath;
    moved.push({ ...file, fromPath: fromPath.value, path: path.value });
  }
  return ok(moved);
}

function joinPath(directory: string, path: string): Result<string> {
  const joined = normalizePatchPath(`${directory}/${path}`);
  if (joined.ok) return joined;
  return fail(pathErrorAt(`After cd ${directory}`, `${directory}/${path}`, joined.error));
}

/**
 * The `cd` directory as a workspace path, '' for the root itself (`cd .`, `cd sub/..`). Escapes
 * never get here: the directory leads every joined path, so `joinPath` refused them first.
 */
function workspaceDirectory(directory: string): string {
  return (pathSegments(directory) ?? []).join('/');
}

function describeCommand(command: Command): Diagnostic {
  const where = command.directory === '' ? '' : ` run in ${command.directory} (its paths are taken relative to that directory)`;
  return { code: 'shell_command', message: `The patch was taken out of an apply_patch heredoc${where}. Send the patch itself rather than a shell command.` };
}

function describeTextAround({ around }: Command): Diagnostic[] {
  if (around.before + around.after === 0) return [];
  return [{ code: 'text_around_patch', message: `Ignored text around the apply_patch command: ${around.before} line(s) before it, ${around.after} after it.` }];
}

function unsupported(line: string, where = ''): EngineError {
  return engineError('unsupported_command', `${quoteLine(line.trim())}${where} is not an apply_patch heredoc. Only apply_patch <<'EOF' … EOF, optionally after one cd <dir> && on the same line, is accepted: no other commands, pipes, redirections, ; or bash -lc wrappers.`);
}
