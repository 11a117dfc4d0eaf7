/**
 * Running the `patchd` command line as a user does: bin/patchd.js as a child process, through
 * pipes or in a pseudo-terminal (util-linux `script`). Import `testState.ts` first so state
 * goes to the test's own state root, never the user's home.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/patchd.js', import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface RunOptions {
  readonly cwd?: string | undefined;
  readonly input?: string | undefined;
  /** Added to (or, when a value is undefined, removed from) the test's environment. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

export interface RunResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function patchd(args: readonly string[], options: RunOptions = {}): RunResult {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: options.cwd, input: options.input ?? '', encoding: 'utf8', timeout: 60_000, env: environment(options.env),
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs `patchd ARGS` in a pseudo-terminal `columns` wide (stdin, stdout and stderr all on it)
 * and returns everything it showed, with CRLF turned back into LF. `CI` is unset because Node
 * reports a terminal as colourless whenever it is set, as it is on CI.
 */
export function patchdInTerminal(args: readonly string[], options: RunOptions & { readonly columns?: number } = {}): RunResult {
  const command = [process.execPath, BIN, ...args].map(shellQuote).join(' ');
  const result = spawnSync('script', ['-qec', `stty cols ${options.columns ?? 100} rows 40; ${command}`, '/dev/null'], {
    cwd: options.cwd, encoding: 'utf8', timeout: 60_000, env: environment({ TERM: 'xterm-256color', CI: undefined, ...options.env }),
  });
  return { code: result.status, stdout: result.stdout.replaceAll('\r\n', '\n'), stderr: result.stderr };
}

function environment(overrides: Readonly<Record<string, string | undefined>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NO_COLOR;
  delete env.FORCE_COLOR;
  for (const [name, value] of Object.entries(overrides)) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  return env;
}

function shellQuote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/** Text without ANSI colour codes. */
export function stripAnsi(text: string): string {
  return text.replaceAll(/\u001b\[[0-9;]*[A-Za-z]/g, '');
}
