/**
 * Real diff producers for tests: scratch trees, `diff`, `git`, `patch` and `git apply` run for
 * real, so fixtures are what those tools emit today rather than pasted text.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readTree, diffTrees } from './corpus.ts';
import { writeFiles, type TreeFiles } from './tempTree.ts';

export { readTree, diffTrees };

export interface Scratch extends Disposable {
  readonly dir: string;
  /** Writes files under `dir/<sub>`. */
  write(sub: string, files: TreeFiles): string;
  /** Copies `dir/<from>` to `dir/<to>`. */
  copy(from: string, to: string): string;
}

export function createScratch(): Scratch {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'patchd-producers-')));
  return {
    dir,
    write: (sub, files) => {
      writeFiles(join(dir, sub), files);
      return join(dir, sub);
    },
    copy: (from, to) => {
      cpSync(join(dir, from), join(dir, to), { recursive: true });
      return join(dir, to);
    },
    [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface Ran {
  readonly status: number;
  readonly stdout: string;
  readonly stderr: string;
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Patch Test', GIT_AUTHOR_EMAIL: 'test@example.com', GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_NAME: 'Patch Test', GIT_COMMITTER_EMAIL: 'test@example.com', GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
  GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', LC_ALL: 'C', TZ: 'UTC',
};

/** Runs a tool; `ok` lists the exit codes that are not failures (`diff` exits 1 when files differ). */
export function run(command: string, args: readonly string[], cwd: string, options: { input?: string; ok?: readonly number[] } = {}): Ran {
  const result = spawnSync(command, args, { cwd, input: options.input, encoding: 'utf8', env: { ...process.env, ...GIT_ENV }, maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  const status = result.status ?? -1;
  if (!(options.ok ?? [0]).includes(status)) {
    throw new Error(`${command} ${args.join(' ')} exited ${status}: ${result.stderr}`);
  }
  return { status, stdout: result.stdout, stderr: result.stderr };
}

/** `git` in `cwd`, with a fixed identity and dates. */
export function git(cwd: string, ...args: string[]): string {
  return run('git', ['-c', 'core.autocrlf=false', '-c', 'init.defaultBranch=main', ...args], cwd).stdout;
}

/** A git repository in `dir` with `files` committed as its first commit. */
export function gitRepo(dir: string, files: TreeFiles): void {
  writeFiles(dir, files);
  git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial');
}

/** Writes `files` in the repository and commits them as one commit with `message`. */
export function commit(dir: string, files: TreeFiles, message: string, remove: readonly string[] = []): void {
  writeFiles(dir, files);
  for (const path of remove) git(dir, 'rm', '-q', path);
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', message);
}

/** The tree under `dir` without `.git`. */
export function workTree(dir: string): Map<string, Uint8Array> {
  const tree = readTree(dir);
  for (const path of [...tree.keys()]) if (path === '.git' || path.startsWith('.git/')) tree.delete(path);
  return tree;
}
