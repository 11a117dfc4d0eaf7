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
 * `<<X` or `<<-X`, optionally after one `cd <dir> &&`. The body (envelope or unified diff, by
 * detection) is parsed as such and every path is taken relative to `<dir>`, which must stay inside
 * the workspace (absolute and `~` directories are `path_escape`: the engine never sees the root).
 * Anything else — other commands, more `&&`, pipes, redirections, `;`, text after the heredoc —
 * is `unsupported_command`: it is never run, and never half understood.
 */
import { isBlank, quoteLine } from './chunks.ts';
import { detectTextDialect } from './detect.ts';
import { parseEnvelope } from './envelope.ts';
import { engineError, type EngineError } from './errors.ts';
import { normalizePatchPath, pathErrorAt } from './paths.ts';
import { fail, ok, type Diagnostic, type FilePatch, type ParsedPatch, type Result } from './types.ts';
import { parseUnified } from './unified.ts';

const COMMAND = /^(?:cd\s+(?<directory>'[^']*'|"[^"$`\\]*"|[\w./@+,:=~-]+)\s*&&\s*)?(?:apply_patch|applypatch)\s*<<-?\s*(?<quote>['"]?)(?<delimiter>[A-Za-z_][\w.-]*)\k<quote>$/;

interface Command {
  /** The `cd` directory, unquoted; '' when there is none. */
  readonly directory: string;
  readonly body: readonly string[];
}

/** Parses a shell command string (as `splitPatchLines` gives its lines) that runs apply_patch on a heredoc. */
export function parseShellCommand(lines: readonly string[]): Result<ParsedPatch> {
  const command = readCommand(lines);
  if (!command.ok) return command;
  const inner = parseBody(command.value.body);
  if (!inner.ok) return inner;
  const files = inDirectory(inner.value.files, command.value.directory);
  if (!files.ok) return files;
  const diagnostics = [describeCommand(command.value), ...inner.value.diagnostics];
  return ok({ dialect: 'shell', files: files.value, diagnostics, ignoredMetadata: inner.value.ignoredMetadata });
}

function readCommand(lines: readonly string[]): Result<Command> {
  const first = lines.findIndex((line) => !isBlank(line));
  if (first === -1) return fail(engineError('parse_error', 'The command is empty.'));
  const match = COMMAND.exec(lines[first]!.trim());
  if (match === null) return fail(unsupported(lines[first]!));
  const delimiter = match.groups?.delimiter ?? '';
  const end = lines.findIndex((line, index) => index > first && line.trim() === delimiter);
  if (end === -1) {
    return fail(engineError('parse_error', `The heredoc opened on line ${first + 1} is never closed by a ${delimiter} line: the command may be truncated. Resend it whole.`));
  }
  const extra = lines.findIndex((line, index) => index > end && !isBlank(line));
  if (extra !== -1) return fail(unsupported(lines[extra]!, ' (after the heredoc)'));
  return ok({ directory: unquote(match.groups?.directory ?? ''), body: lines.slice(first + 1, end) });
}

function unquote(word: string): string {
  return /^(['"]).*\1$/.test(word) ? word.slice(1, -1) : word;
}

function parseBody(body: readonly string[]): Result<ParsedPatch> {
  const dialect = detectTextDialect(body);
  if (dialect === 'codex') return parseEnvelope(body);
  if (dialect === 'unified') return parseUnified(body);
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

function describeCommand(command: Command): Diagnostic {
  const where = command.directory === '' ? '' : ` run in ${command.directory} (its paths are taken relative to that directory)`;
  return { code: 'shell_command', message: `The patch was taken out of an apply_patch heredoc${where}. Send the patch itself rather than a shell command.` };
}

function unsupported(line: string, where = ''): EngineError {
  return engineError('unsupported_command', `${quoteLine(line.trim())}${where} is not an apply_patch heredoc. Only apply_patch <<'EOF' … EOF, optionally after one cd <dir> &&, is accepted: no other commands, pipes, redirections or ;.`);
}
