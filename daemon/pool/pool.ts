/**
 * The engine of one open workspace. Work that is cheap whatever the input (`cost.ts`: a small
 * patch, small files) runs right here on the main thread, where a worker hop would cost more
 * than the work. The rest runs on the workspace's piscina pool, one task per step, with memory
 * and time limits: a task's time limit counts its own running time (not its wait for a
 * thread), and a runaway ends as a typed `timeout` error (data, like any engine error) while
 * piscina replaces the killed thread, so the pool keeps serving.
 *
 * The pool is warm while the workspace is open: its first thread starts `warmDelayMs` after the
 * open (or with the first task that needs it, if sooner) and stays until `close`; threads added
 * under load exit after `idleTimeoutMs`. Not at the open itself: booting a thread takes a core
 * for tens of milliseconds, and on a small machine the open and a first small patch, which
 * usually follow at once and run on the main thread, would wait on it.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { engineError, planPatch, type FileSnapshot, type ParsedPatch, type PatchInput, type Plan, type PlanOptions, type Result } from '../engine/index.ts';
import { parsesInline, plansInline } from './cost.ts';
import { createStartFlag, lowerStartFlag, taskStarted } from './taskClock.ts';
import { runParse, type EngineTask, type ParseOutput, type TaskMessage } from './tasks.ts';

export interface EnginePoolOptions {
  /** Per-task time limit, counted from the moment a worker starts the task. */
  readonly taskTimeoutMs: number;
  /** The worker module (a `file:` URL); defaults to `worker.ts`. Tests give one that misbehaves on purpose. */
  readonly workerFile?: string | undefined;
  readonly maxThreads?: number;
  /** Idle threads beyond the first exit after this long; the first stays warm while the pool lives (from its creation, i.e. the workspace's open). */
  readonly idleTimeoutMs?: number;
  readonly maxOldGenerationSizeMb?: number;
  /** How long after its creation the pool boots its warm thread, unless a task boots it first. */
  readonly warmDelayMs?: number;
  /** A worker that failed outside a task (e.g. could not start). */
  readonly onError: (error: unknown) => void;
}

/** The caller's own signal aborted the task (client cancellation), as opposed to the time limit. */
export class TaskCancelledError extends Error {
  override readonly name = 'TaskCancelledError';
}

const fromSource = import.meta.url.endsWith('.ts');

export class EnginePool {
  readonly #options: EnginePoolOptions;
  #piscina: Piscina<TaskMessage, unknown> | undefined;
  readonly #warming: NodeJS.Timeout;
  #closed = false;

  constructor(options: EnginePoolOptions) {
    this.#options = options;
    this.#warming = setTimeout(() => {
      try {
        this.#threads();
      } catch (error) {
        options.onError(error);
      }
    }, options.warmDelayMs ?? 250);
    this.#warming.unref();
  }

  /** Parses patch text or operations and lists the paths the plan needs. */
  async parse(input: PatchInput, signal?: AbortSignal): Promise<Result<ParseOutput>> {
    if (parsesInline(input)) return runParse(input);
    return this.#run({ kind: 'parse', input }, signal);
  }

  /** Plans a parsed patch against the snapshots of the files it names. */
  async plan(parsed: ParsedPatch, files: ReadonlyMap<string, FileSnapshot>, options: PlanOptions, signal?: AbortSignal): Promise<Result<Plan>> {
    if (plansInline(parsed, files)) return planPatch(parsed, files, options);
    return this.#run({ kind: 'plan', parsed, files, options }, signal);
  }

  /** Live worker threads (booting included): none before the warm thread starts, more under load, one again after `idleTimeoutMs` idle. */
  get threadCount(): number {
    return this.#piscina?.threads.length ?? 0;
  }

  /** Stops every thread; queued tasks are rejected, and so are later ones. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#warming);
    await this.#piscina?.close({ force: true });
  }

  /** The piscina pool, made (with its warm thread) on first need. */
  #threads(): Piscina<TaskMessage, unknown> {
    if (this.#piscina !== undefined) return this.#piscina;
    if (this.#closed) throw new Error('The engine pool is closed.');
    clearTimeout(this.#warming);
    const { workerFile, maxThreads, idleTimeoutMs, maxOldGenerationSizeMb, onError } = this.#options;
    this.#piscina = new Piscina({
      filename: workerFile ?? new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url).href,
      // One warm thread: no boot on a later big patch, and piscina replaces a thread killed by the time limit at once.
      minThreads: 1,
      maxThreads: maxThreads ?? Math.max(1, Math.min(4, availableParallelism())),
      idleTimeout: idleTimeoutMs ?? 10_000,
      resourceLimits: { maxOldGenerationSizeMb: maxOldGenerationSizeMb ?? 512 },
      // Threads do not inherit a loader registered in-process (tsx `register()`), so pass it explicitly.
      ...(fromSource ? { execArgv: ['--import', import.meta.resolve('tsx')] } : {}),
    });
    this.#piscina.on('error', onError);
    return this.#piscina;
  }

  async #run<T>(task: EngineTask, signal: AbortSignal | undefined): Promise<Result<T>> {
    const limit = new AbortController();
    const started = createStartFlag();
    let timer: NodeJS.Timeout | undefined;
    let finished = false;
    // Waiting on the start flag holds no event-loop handle of its own (nor do piscina's threads).
    const alive = setInterval(() => {}, 1 << 30);
    void taskStarted(started).then((running) => {
      if (running && !finished) timer = setTimeout(() => limit.abort(), this.#options.taskTimeoutMs);
    });
    try {
      const combined = signal === undefined ? limit.signal : AbortSignal.any([signal, limit.signal]);
      return (await this.#threads().run({ task, started }, { signal: combined })) as Result<T>;
    } catch (error) {
      return this.#failure(error, signal, limit.signal);
    } finally {
      finished = true;
      lowerStartFlag(started);
      clearTimeout(timer);
      clearInterval(alive);
    }
  }

  #failure<T>(error: unknown, caller: AbortSignal | undefined, limit: AbortSignal): Result<T> {
    if (caller?.aborted === true) throw new TaskCancelledError('The request was cancelled.');
    if (limit.aborted) {
      return { ok: false, error: engineError('timeout', `Matching took longer than ${this.#options.taskTimeoutMs} ms and was stopped.`) };
    }
    if ((error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return { ok: false, error: engineError('limit_exceeded', 'The patch needed more memory than a worker may use.') };
    }
    throw error;
  }
}
