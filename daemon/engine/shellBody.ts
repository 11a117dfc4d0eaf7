/**
 * The heredoc of a shell patch, read as its tool reads it: apply_patch takes an envelope or a
 * unified diff; `git apply` and `patch` a unified diff at the strip level the command gives.
 * Paths come out relative to the directory the command runs in (shell.ts puts it before them).
 */
import { detectTextDialect } from './detect.ts';
import { parseEnvelope } from './envelope.ts';
import { engineError } from './errors.ts';
import type { PatchCommand } from './shellCommand.ts';
import { fail, type FilePatch, type ParsedPatch, type Result } from './types.ts';
import { workspaceDirectory } from './underDirectory.ts';
import { parseUnified } from './unified.ts';

export function parseShellBody(command: PatchCommand, body: readonly string[], callerStrip: number | undefined): Result<ParsedPatch> {
  const dialect = detectTextDialect(body);
  if (dialect === 'shell') {
    return fail(engineError('parse_error', 'The heredoc holds a shell command (a cd, or a patch command again) before its patch; the command reads the heredoc as patch text. Put only the patch in it.'));
  }
  if (command.tool === 'apply_patch' && dialect === 'codex') return parseEnvelope(body);
  if (dialect !== 'unified') {
    const takes = command.tool === 'apply_patch' ? 'a *** Begin Patch envelope or a unified diff' : 'a unified diff';
    return fail(engineError('parse_error', `${command.tool} takes ${takes}, and the heredoc holds ${dialect === 'codex' ? 'an envelope (apply_patch reads those)' : 'neither'}.`));
  }
  if (command.strip !== undefined && callerStrip !== undefined && command.strip !== callerStrip) {
    return fail(engineError('parse_error', `The command says -p${command.strip} but the request's strip is ${callerStrip}. Give one strip level.`));
  }
  const strip = command.strip ?? callerStrip;
  if (command.tool !== 'git apply') return parseUnified(body, { strip });
  const fromTop = readFromTop(command, body, strip);
  if (fromTop !== undefined) return fail(engineError('unsupported_command', fromTop));
  return strip === undefined ? parseAtGitLevel(body) : parseUnified(body, { strip });
}

/**
 * Why `git apply`, run in a directory, might read this diff's paths from the top of the
 * repository rather than from that directory: it does so for `diff --git` sections, and without
 * `-p` guesses the level from a name that starts with the directory — but only inside a
 * repository. Whether the workspace is one, the engine cannot tell.
 */
function readFromTop(command: PatchCommand, body: readonly string[], strip: number | undefined): string | undefined {
  const directory = workspaceDirectory(command.directory);
  if (directory === '') return undefined;
  const unclear = 'patchd cannot tell which the workspace is. Send the diff with paths from the workspace root, without the command';
  if (body.some((line) => line.startsWith('diff --git '))) {
    return `git apply run in ${directory} reads diff --git paths from the top of a git repository (skipping files outside ${directory}), but from ${directory} when there is no repository, and ${unclear}.`;
  }
  if (strip !== undefined) return undefined;
  const named = body.some((line) => {
    const name = /^(?:---|\+\+\+) (\S+)/.exec(line)?.[1];
    return name !== undefined && [name, name.slice(name.indexOf('/') + 1)].some((path) => path.startsWith(`${directory}/`));
  });
  return named ? `git apply run in ${directory} without -p drops ${directory}/ from a name that starts with it inside a git repository, but not outside one, and ${unclear} (or give -p).` : undefined;
}

/**
 * `git apply` without `-p`: one leading component, or none from a name without a slash (git's
 * guess). Where that differs from how patchd reads the names (`--- src/x.c` is x.c to git), which
 * was meant is unclear: refused, so that neither is guessed.
 */
function parseAtGitLevel(body: readonly string[]): Result<ParsedPatch> {
  const levelOne = parseUnified(body, { strip: 1 });
  const git = levelOne.ok ? levelOne : parseUnified(body, { strip: 0 });
  if (!git.ok) return levelOne;
  const named = parseUnified(body);
  const differs = named.ok ? firstDifference(named.value.files, git.value.files) : undefined;
  if (differs === undefined) return git;
  return fail(engineError('unsupported_command', `git apply without -p reads ${differs.git} where the diff names ${differs.named} (it drops the first directory of a name that has one). Say -p1 if the names start with a directory to drop (a/, b/), -p0 if they are paths from the workspace root.`));
}

function firstDifference(named: readonly FilePatch[], git: readonly FilePatch[]): { readonly named: string; readonly git: string } | undefined {
  const spell = (file: FilePatch | undefined) => (file === undefined ? 'nothing' : file.op === 'rename' ? `${file.fromPath} -> ${file.path}` : file.path);
  for (let index = 0; index < Math.max(named.length, git.length); index++) {
    const [ours, theirs] = [spell(named[index]), spell(git[index])];
    if (ours !== theirs) return { named: ours, git: theirs };
  }
  return undefined;
}
