/**
 * The command line of a shell patch: which tool reads the heredoc, where it runs, and at which
 * strip level. Pure; never throws. Accepted, `<dir>` being a plain or quoted word:
 *
 *     [cd <dir> &&] apply_patch <<'EOF'                      (or applypatch)
 *     [cd <dir> &&] git [-C <dir>]… apply [-p<n>] [--directory=<root>] [-v] [-] <<'EOF'
 *     [cd <dir> &&] patch -p<n> [-d <dir>] [-u] [-s] <<'EOF'
 *
 * `cd`, `git -C` and `patch -d` all change where the command runs, so they add up (`cd a && git
 * -C b apply` runs in a/b); `git apply --directory` instead puts a directory before each path once
 * it is stripped. Anything else a shell would read — `$`, backticks, `;`, pipes, redirections, a
 * file operand, an option not listed — is refused: it might change what the command does
 * (`--check` and `--stat` write nothing, `-R` reverses, `--cached` writes the index only).
 */
import { quoteLine } from './chunks.ts';
import { engineError, type EngineError } from './errors.ts';
import type { Heredoc } from './heredoc.ts';
import { fail, ok, type Result } from './types.ts';

export type PatchTool = 'apply_patch' | 'git apply' | 'patch';

export interface PatchCommand {
  readonly tool: PatchTool;
  /** Where the command runs, its `cd`, `-C` and `-d` directories joined with `/`, unquoted; '' when none. */
  readonly directory: string;
  /** `git apply --directory`: put before every path once stripped; '' when not given. */
  readonly root: string;
  /** `-p<n>`, when given. */
  readonly strip?: number | undefined;
  readonly heredoc: Heredoc;
}

type Token =
  | { readonly kind: 'word'; readonly text: string }
  | { readonly kind: 'and' }
  | { readonly kind: 'heredoc'; readonly heredoc: Heredoc };

/** One run of a shell word: plain characters, or a quoted string with nothing a shell would expand. */
const WORD_PART = /[\w./@+,:=~-]+|'[^']*'|"[^"$`\\]*"/y;
const HEREDOC = /<<(-?)\s*(['"]?)([A-Za-z_][\w.-]*)\2\s*$/y;
const SPACE = /\s+/y;

/** Reads the line that runs a patch tool on a heredoc (see the module comment). */
export function readPatchCommand(line: string): Result<PatchCommand> {
  const tokens = tokenize(line.trim());
  if (tokens === undefined) return fail(unsupported(line, 'it holds shell syntax other than words, one `&&` and the heredoc'));
  const heredoc = tokens.at(-1);
  if (heredoc?.kind !== 'heredoc') return fail(unsupported(line, 'the heredoc must end the line'));
  const commands = splitCommands(tokens.slice(0, -1));
  if (commands === undefined) return fail(unsupported(line, 'only `cd <dir> &&` may come before the patch command'));
  const [name, ...args] = commands.command;
  const read = readTool(name, args);
  if (typeof read === 'string') return fail(unsupported(line, read));
  const directory = [commands.cd, read.directory].filter((part) => part !== '').join('/');
  return ok({ ...read, directory, heredoc: heredoc.heredoc });
}

/** The message of a refused command line; `why` says what patchd does not read in it. */
export function unsupported(line: string, why: string): EngineError {
  return engineError('unsupported_command', `${quoteLine(line.trim())} is not a patch command patchd runs: ${why}. Accepted: apply_patch <<'EOF', git apply [-p<n>] [--directory=<dir>] <<'EOF' and patch -p<n> [-d <dir>] <<'EOF', in a directory given by one cd <dir> && before it, git -C <dir> or patch -d <dir>.`);
}

function tokenize(text: string): Token[] | undefined {
  const tokens: Token[] = [];
  let at = 0;
  while (at < text.length) {
    SPACE.lastIndex = at;
    if (SPACE.test(text)) at = SPACE.lastIndex;
    if (text.startsWith('&&', at)) {
      tokens.push({ kind: 'and' });
      at += 2;
      continue;
    }
    HEREDOC.lastIndex = at;
    const heredoc = HEREDOC.exec(text);
    if (heredoc !== null) {
      tokens.push({ kind: 'heredoc', heredoc: { delimiter: heredoc[3]!, stripTabs: heredoc[1] === '-', quoted: heredoc[2] !== '' } });
      break;
    }
    const word = readWord(text, at);
    if (word === undefined) return undefined;
    tokens.push({ kind: 'word', text: word.text });
    at = word.end;
  }
  return tokens;
}

/**
 * The shell word at `start`, quotes removed, and where it ends: undefined when none starts there,
 * or when it runs into something a shell would expand (`$`, a backtick). `closing`: the quote
 * the word stands in (inline code, a quoted command in prose), which ends it.
 */
export function readWord(text: string, start: number, closing?: string): { readonly text: string; readonly end: number } | undefined {
  let at = start;
  let word = '';
  while (text[at] !== closing) {
    WORD_PART.lastIndex = at;
    const part = WORD_PART.exec(text);
    if (part === null) break;
    word += /^['"]/.test(part[0]) ? part[0].slice(1, -1) : part[0];
    at = WORD_PART.lastIndex;
  }
  const ends = at === text.length || /[\s;&|()<>`'"]/.test(text[at]!);
  return at > start && ends ? { text: word, end: at } : undefined;
}

/** The words of the patch command, and the directory of a `cd <dir> &&` before it; undefined for any other shape. */
function splitCommands(tokens: readonly Token[]): { readonly cd: string; readonly command: string[] } | undefined {
  const commands: string[][] = [[]];
  for (const token of tokens) {
    if (token.kind === 'and') commands.push([]);
    else if (token.kind === 'word') commands.at(-1)!.push(token.text);
  }
  if (commands.some((words) => words.length === 0)) return undefined;
  if (commands.length === 1) return { cd: '', command: commands[0]! };
  const [cd, command] = commands;
  if (commands.length > 2 || cd!.length !== 2 || cd![0] !== 'cd') return undefined;
  return { cd: cd![1]!, command: command! };
}

type ToolReading = Omit<PatchCommand, 'heredoc'>;

/** The tool's reading of its arguments, or why patchd does not run it. */
function readTool(name: string | undefined, args: readonly string[]): ToolReading | string {
  if (name === 'apply_patch' || name === 'applypatch') {
    return args.length === 0 ? { tool: 'apply_patch', directory: '', root: '' } : `${name} takes no arguments`;
  }
  if (name === 'git') return readGitApply(args);
  if (name === 'patch') return readPatch(args);
  return `${name ?? 'the line'} is not apply_patch, git apply or patch`;
}

/** `git [-C <dir>]… apply [-p<n>] [--directory=<root>] [-v] [-]`. */
function readGitApply(args: readonly string[]): ToolReading | string {
  const directories: string[] = [];
  let at = 0;
  while (args[at] === '-C' && args[at + 1] !== undefined) {
    directories.push(args[at + 1]!);
    at += 2;
  }
  if (args[at] !== 'apply') return 'of git, only `git [-C <dir>] apply` is run';
  let strip: number | undefined;
  let root = '';
  for (const option of options(args.slice(at + 1), ['-p'])) {
    if (option.name === '-p' && /^\d+$/.test(option.value)) strip = Number(option.value);
    else if (option.name === '--directory' && option.value !== '') root = option.value;
    else if (!['-v', '--verbose', '-'].includes(option.name) || option.value !== '') return `git apply ${option.text} is not an option patchd reads`;
  }
  return { tool: 'git apply', directory: directories.filter((directory) => directory !== '').join('/'), root, strip };
}

/** `patch -p<n> [-d <dir>] [-u] [-s]`. */
function readPatch(args: readonly string[]): ToolReading | string {
  let strip: number | undefined;
  let directory: string | undefined;
  for (const option of options(args, ['-d', '-p'])) {
    if ((option.name === '-p' || option.name === '--strip') && /^\d+$/.test(option.value)) strip = Number(option.value);
    else if ((option.name === '-d' || option.name === '--directory') && option.value !== '' && directory === undefined) directory = option.value;
    else if (!['-u', '--unified', '-s', '--silent', '--quiet'].includes(option.name) || option.value !== '') return `patch ${option.text} is not an option patchd reads`;
  }
  if (strip === undefined) return 'patch without -p patches each file by its base name (a/src/x.c patches x.c); say -p1 for a/ b/ paths, -p0 for paths from the directory it runs in';
  return { tool: 'patch', directory: directory ?? '', root: '', strip };
}

interface Option {
  readonly name: string;
  /** Its value (`--directory=x`, `-d x`, `-dx`, `-p1`), '' when none. */
  readonly value: string;
  /** As written, for messages. */
  readonly text: string;
}

/**
 * The options among `args`: `--name=value`, a short option of `valued` with its value joined
 * (`-p1`) or in the next word (`-d dir`), and the long options `--directory` and `--strip` with
 * theirs in the next word. Any other word is an option without a value, or (not starting with
 * `-`) an operand, returned as a name for the caller to refuse.
 */
function options(args: readonly string[], valued: readonly string[]): Option[] {
  const read: Option[] = [];
  for (let at = 0; at < args.length; at++) {
    const arg = args[at]!;
    const long = /^(--[\w-]+)=(.*)$/.exec(arg);
    const short = valued.find((name) => arg.startsWith(name));
    if (long !== null) read.push({ name: long[1]!, value: long[2]!, text: arg });
    else if (short !== undefined && arg.length > 2) read.push({ name: short, value: arg.slice(2), text: arg });
    else if ((short !== undefined || arg === '--directory' || arg === '--strip') && args[at + 1] !== undefined) {
      read.push({ name: arg, value: args[at + 1]!, text: `${arg} ${args[at + 1]!}` });
      at++;
    } else read.push({ name: arg, value: '', text: arg });
  }
  return read;
}
