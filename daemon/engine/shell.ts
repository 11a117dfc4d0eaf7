/**
 * Patches wrapped in a shell command (dialect `shell`) → `ParsedPatch`. Pure; never throws.
 *
 *     cd sub/dir && apply_patch <<'EOF'          git -C sub apply <<'EOF'        patch -d sub -p1 <<'EOF'
 *     *** Begin Patch                            --- a/x.c                       --- a/x.c
 *     …                                          …                               …
 *     EOF                                        EOF                             EOF
 *
 * Models that learned to patch through a shell send this; like Codex, patchd intercepts these
 * forms and governs them as a patch, read as the tool would read it (shellCommand.ts has the
 * command line). As in bash, the heredoc ends at the first line that is exactly the delimiter
 * (`<<-` strips leading tabs from it and from every body line); ` EOF` is a body line. The body of
 * an unquoted delimiter is taken as written, not expanded as a shell would, and that is noted
 * (heredoc.ts). apply_patch takes an envelope or a unified diff, `git apply` and `patch` a
 * unified diff, stripped as the command says: `-p<n>` (`patch` needs one), or for `git apply`
 * without it git's own level, which must agree with how patchd reads the names, else the command
 * is refused rather than one of the two guessed. Every path is taken relative to the directory
 * the command runs in, which must stay inside the workspace (absolute and `~` directories are
 * `path_escape`: the engine never sees the root) and must be a directory there
 * (`workingDirectory`: a shell stops at a failed `cd`, git and patch at a missing `-C` or `-d`
 * directory, so the plan is `not_found`). `git apply` run in a directory reads `diff --git` paths
 * from the top of the repository, and skips files outside the directory, but from that directory
 * when there is no repository: the engine cannot tell which, so that is refused.
 *
 * Prose may come before the command, and the command may stand in a code fence; that text is
 * ignored and reported. Anything else — a `cd` before it that a shell would run (on its own line,
 * after `;`), `bash -lc "…"` (its quotes would expand `$` and backticks in the patch), text after
 * the heredoc outside a fence, a second command or patch after the fence — is refused: it is
 * never run, and never half understood.
 */
import { isBlank, quoteLine } from './chunks.ts';
import { DIRECTORY_COMMAND, runsPatchCommand, isPatchLine } from './detect.ts';
import { engineError } from './errors.ts';
import { describeExpansion, heredocBody, heredocEnd, type HeredocSpan } from './heredoc.ts';
import { parseShellBody } from './shellBody.ts';
import { readPatchCommand, unsupported, type PatchCommand } from './shellCommand.ts';
import { fail, ok, type Diagnostic, type ParsedPatch, type Result } from './types.ts';
import { underDirectory, workspaceDirectory } from './underDirectory.ts';
import { FENCE } from './unifiedLines.ts';

interface Command {
  readonly command: PatchCommand;
  /** The heredoc's lines as the command reads them, and where they stand in the text. */
  readonly body: readonly string[];
  readonly span: HeredocSpan;
  /** Non-blank lines before the command and after its heredoc (prose, fences): ignored. */
  readonly around: { readonly before: number; readonly after: number };
}

/**
 * Parses a shell command string (as `splitPatchLines` gives its lines) that runs a patch tool on
 * a heredoc; `strip` is the caller's level, which a `-p<n>` on the command line must agree with.
 */
export function parseShellCommand(lines: readonly string[], strip?: number): Result<ParsedPatch> {
  const read = readCommand(lines);
  if (!read.ok) return read;
  const { command } = read.value;
  const inner = parseShellBody(command, read.value.body, strip);
  if (!inner.ok) return inner;
  const place = placeOf(command);
  const files = underDirectory(inner.value.files, place, `Under ${place}`);
  if (!files.ok) return files;
  const diagnostics = [describeCommand(command), ...describeTextAround(read.value), ...describeExpansion(lines, read.value.span, command.heredoc), ...inner.value.diagnostics];
  const workingDirectory = workspaceDirectory(command.directory);
  return ok({
    dialect: 'shell', files: files.value, diagnostics, ignoredMetadata: inner.value.ignoredMetadata,
    ...(workingDirectory === '' ? {} : { workingDirectory }),
  });
}

/** Where the paths go: the directory the command runs in, then `git apply --directory`'s. */
function placeOf(command: PatchCommand): string {
  return [command.directory, command.root].filter((part) => part !== '').join('/');
}

function readCommand(lines: readonly string[]): Result<Command> {
  const start = findCommand(lines);
  if (!start.ok) return start;
  const first = start.value;
  const command = readPatchCommand(lines[first]!);
  if (!command.ok) return command;
  const { heredoc } = command.value;
  const end = heredocEnd(lines, first, heredoc);
  if (end === -1) {
    return fail(engineError('parse_error', `The heredoc opened on line ${first + 1} is never closed by a line that is exactly ${heredoc.delimiter}: the command may be truncated. Resend it whole.`));
  }
  const fenced = lines.slice(0, first).filter((line) => FENCE.test(line)).length % 2 === 1;
  const after = readAfter(lines, end + 1, fenced);
  if (!after.ok) return after;
  const before = lines.slice(0, first).filter((line) => !isBlank(line)).length;
  const span = { start: first + 1, end };
  return ok({ command: command.value, body: heredocBody(lines, span, heredoc), span, around: { before, after: after.value } });
}

/**
 * The line that runs the patch command. Prose (and a fence) may come before it; a `cd` a shell
 * would run may not (on a line of its own, or joined with `;`, it would change what the paths
 * mean), nor may a patch.
 */
function findCommand(lines: readonly string[]): Result<number> {
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    if (runsPatchCommand(line)) return ok(index);
    if (isPatchLine(line, lines[index + 1])) break;
    if (DIRECTORY_COMMAND.test(line)) return fail(unsupported(line, 'a cd apart from the patch command would change what its paths mean'));
  }
  const first = lines.find((line) => !isBlank(line));
  return fail(first === undefined ? engineError('parse_error', 'The command is empty.') : unsupported(first, 'no apply_patch, git apply or patch command reads a heredoc here'));
}

/**
 * The non-blank lines after the heredoc, which must be ignorable: none, unless the command stands
 * in a code fence — then the fence must close right after it, and prose may follow, but no
 * second command or patch.
 */
function readAfter(lines: readonly string[], start: number, fenced: boolean): Result<number> {
  const fence = lines.findIndex((line, index) => index >= start && !isBlank(line));
  if (fence === -1) return ok(0);
  if (!fenced || !FENCE.test(lines[fence]!)) return fail(unsupported(lines[fence]!, 'it follows the heredoc, and a shell would run it'));
  let count = 0;
  for (let index = fence; index < lines.length; index++) {
    const line = lines[index]!;
    if (isBlank(line)) continue;
    count++;
    if (index === fence) continue;
    if (runsPatchCommand(line)) {
      return fail(engineError('unsupported_command', `Line ${index + 1} (${quoteLine(line.trim())}) runs a patch command a second time. Send one command holding every change.`));
    }
    if (isPatchLine(line, lines[index + 1])) {
      return fail(engineError('parse_error', `Line ${index + 1} (${quoteLine(line)}), after the patch command, starts another patch. Send one command (or one patch) holding every change.`));
    }
  }
  return ok(count);
}

function describeCommand(command: PatchCommand): Diagnostic {
  const place = placeOf(command);
  const tool = command.tool === 'apply_patch' ? 'an apply_patch' : `a ${command.tool}`;
  const where = place === '' ? '' : ` run in ${place} (its paths are taken relative to that directory)`;
  return { code: 'shell_command', message: `The patch was taken out of ${tool} heredoc${where}. Send the patch itself rather than a shell command.` };
}

function describeTextAround({ around }: Command): Diagnostic[] {
  if (around.before + around.after === 0) return [];
  return [{ code: 'text_around_patch', message: `Ignored text around the patch command: ${around.before} line(s) before it, ${around.after} after it.` }];
}
