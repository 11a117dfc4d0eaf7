/**
 * The spawned `patchd serve` child: how to start this package's daemon (TypeScript source via
 * tsx, or the compiled build), its stderr tail for error messages, and a graceful stop.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * What happens to the daemon's stderr besides keeping its last few KiB for error messages:
 * nothing (`capture`), copied to this process's stderr (`inherit`), or handed to a callback.
 */
export type StderrMode = 'capture' | 'inherit' | ((text: string) => void);

export interface DaemonProcessOptions {
  readonly cwd?: string | undefined;
  readonly env?: NodeJS.ProcessEnv | undefined;
  /** Extra `patchd serve` arguments, e.g. `['--task-timeout-ms', '5000']`. */
  readonly serveArgs?: readonly string[] | undefined;
  /** Node arguments that start the daemon up to `serve` (default: this package's `patchd serve`), e.g. a wrapper for tests. */
  readonly daemonArgs?: readonly string[] | undefined;
  readonly stderr?: StderrMode | undefined;
}

export interface DaemonExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Set when the process could not be started at all. */
  readonly error?: Error;
}

const STDERR_TAIL_CHARS = 4096;

/**
 * libuv's threadpool runs every read, write and fsync of the daemon, four at a time by default.
 * Measured with 1,000 one-hunk patches to distinct files, 32 in flight, interleaved runs on a
 * loaded 2-core machine: 4 threads 95–120 patches/s, 16: 103–169, 32: 129–211, 64: 140–243.
 * It must be in the environment the daemon starts with: an ES module entry point uses the pool
 * before any of its code runs, so the daemon cannot raise it for itself.
 */
export const DAEMON_THREADPOOL_SIZE = '64';

/** The daemon's environment: `env`, with the threadpool size above unless `env` sets one. */
export function daemonEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return env.UV_THREADPOOL_SIZE === undefined ? { ...env, UV_THREADPOOL_SIZE: DAEMON_THREADPOOL_SIZE } : env;
}

/** `node` arguments that run this package's daemon: the `.ts` source under tsx when this file is source, else `dist/`. */
export function daemonArgs(): string[] {
  if (import.meta.url.endsWith('.ts')) {
    return ['--import', import.meta.resolve('tsx'), fileURLToPath(new URL('../daemon/main.ts', import.meta.url)), 'serve'];
  }
  return [fileURLToPath(new URL('../daemon/main.js', import.meta.url)), 'serve'];
}

export class DaemonProcess {
  readonly child: ChildProcessWithoutNullStreams;
  /** Resolves when the process has exited (or failed to start). */
  readonly exited: Promise<DaemonExit>;
  #exit: DaemonExit | undefined;
  #stderrTail = '';

  constructor(options: DaemonProcessOptions = {}) {
    this.child = spawn(process.execPath, [...(options.daemonArgs ?? daemonArgs()), ...(options.serveArgs ?? [])], {
      cwd: options.cwd,
      env: daemonEnvironment(options.env ?? process.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => resolve((this.#exit = { code, signal })));
      this.child.once('error', (error) => resolve((this.#exit ??= { code: null, signal: null, error })));
    });
    // A write after the daemon died must not crash the client; the exit is reported instead.
    this.child.stdin.on('error', () => {});
    this.child.stderr.setEncoding('utf8').on('data', (text: string) => this.#onStderr(text, options.stderr));
  }

  /** The exit, once known. */
  get exit(): DaemonExit | undefined {
    return this.#exit;
  }

  /** The last few KiB the daemon wrote to stderr. */
  get stderrTail(): string {
    return this.#stderrTail;
  }

  /** Closes stdin (the daemon exits 0), waits up to `graceMs`, then kills it. */
  async stop(graceMs: number): Promise<DaemonExit> {
    if (this.#exit !== undefined) return this.#exit;
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  #onStderr(text: string, mode: StderrMode | undefined): void {
    this.#stderrTail = (this.#stderrTail + text).slice(-STDERR_TAIL_CHARS);
    if (mode === 'inherit') process.stderr.write(text);
    else if (typeof mode === 'function') mode(text);
  }
}
