/**
 * One piscina pool per open workspace, running the engine off the main thread. Each task has
 * a time limit on its own running time (not its wait for a thread): a runaway ends as a typed
 * `timeout` error (data, like any engine error) and piscina replaces the killed thread, so the
 * pool keeps serving.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { engineError, type FileSnapshot, type ParsedPatch, type PatchInput, type Plan, type PlanOptions, type Result } from '../engine/index.ts';
import { createStartFlag, lowerStartFlag, taskStarted } from './taskClock.ts';
import type { EngineTask, ParseOutput, TaskMessage } from './tasks.ts';

export interface EnginePoolOptions {
  /** Per-task time limit, counted from the moment a worker starts the task. */
  readonly taskTimeoutMs: number;
  /** The worker module (a `file:` URL); defaults to `worker.ts`. Tests give one that misbehaves on purpose. */
  readonly workerFile?: string | undefined;
  readonly maxThreads?: number;
  /** Idle threads beyond the first exit after this long; one stays warm while the pool lives (from its creation, i.e. the workspace's open). */
  readonly idleTimeoutMs?: number;
  readonly maxOldGenerationSizeMb?: number;
  /** A worker that failed outside a task (e.g. could not start). */
  readonly onError: (error: unknown) => void;
}

/** The caller's own signal aborted the task (client cancellation), as opposed to the time limit. */
export class TaskCancelledError extends Error {
  override readonly name = 'TaskCancelledError';
}

const fromSource = import.meta.url.endsWith('.ts');

export class EnginePool {
  readonly #piscina: Piscina<TaskMessage, unknown>;
  readonly #options: EnginePoolOptions;

  constructor(options: EnginePoolOptions) {
    this.#options = options;
    this.#piscina = new Piscina({
      filename: options.workerFile ?? new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url).href,
      // One warm thread: no boot on the first patch, and piscina replaces a thread killed by the time limit at once.
      minThreads: 1,
      maxThreads: options.maxThreads ?? Math.max(1, Math.min(4, availableParallelism())),
      idleTimeout: options.idleTimeoutMs ?? 10_000,
      resourceLimits: { maxOldGenerationSizeMb: options.maxOldGenerationSizeMb ?? 512 },
      // Threads do not inherit a loader registered in-process (tsx `register()`), so pass it explicitly.
      ...(fromSource ? { execArgv: ['--import', import.meta.resolve('tsx')] } : {}),
    });
    this.#piscina.on('error', options.onError);
  }

  /** Parses patch text or operations and lists the paths the plan needs. */
  parse(input: PatchInput, signal?: AbortSignal): Promise<Result<ParseOutput>> {
    return this.#run({ kind: 'parse', input }, signal);
  }

  /** Plans a parsed patch against the snapshots of the files it names. */
  plan(parsed: ParsedPatch, files: ReadonlyMap<string, FileSnapshot>, options: PlanOptions, signal?: AbortSignal): Promise<Result<Plan>> {
    return this.#run({ kind: 'plan', parsed, files, options }, signal);
  }

  /** Live worker threads (1 once the pool has been idle for `idleTimeoutMs`). */
  get threadCount(): number {
    return this.#piscina.threads.length;
  }

  /** Stops every thread; queued tasks are rejected. */
  async close(): Promise<void> {
    await this.#piscina.close({ force: true });
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
      return (await this.#piscina.run({ task, started }, { signal: combined })) as Result<T>;
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
