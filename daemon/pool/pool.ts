/**
 * One piscina pool per open workspace, running the engine off the main thread. Each task has
 * a time limit: a runaway ends as a typed `timeout` error (data, like any engine error) and
 * piscina replaces the killed thread, so the pool keeps serving.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { engineError, type FileSnapshot, type ParsedPatch, type PatchInput, type Plan, type PlanOptions, type Result } from '../engine/index.ts';
import type { EngineTask, ParseOutput } from './tasks.ts';

export interface EnginePoolOptions {
  /** Per-task time limit. */
  readonly taskTimeoutMs: number;
  readonly maxThreads?: number;
  /** Idle threads exit after this long, so an idle pool holds no threads. */
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
  readonly #piscina: Piscina<EngineTask, unknown>;
  readonly #options: EnginePoolOptions;

  constructor(options: EnginePoolOptions) {
    this.#options = options;
    this.#piscina = new Piscina({
      filename: new URL(fromSource ? './worker.ts' : './worker.js', import.meta.url).href,
      minThreads: 0,
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

  /** Live worker threads (0 once the pool has been idle for `idleTimeoutMs`). */
  get threadCount(): number {
    return this.#piscina.threads.length;
  }

  /** Stops every thread; queued tasks are rejected. */
  async close(): Promise<void> {
    await this.#piscina.close({ force: true });
  }

  async #run<T>(task: EngineTask, signal: AbortSignal | undefined): Promise<Result<T>> {
    const limit = new AbortController();
    const timer = setTimeout(() => limit.abort(), this.#options.taskTimeoutMs);
    try {
      const combined = signal === undefined ? limit.signal : AbortSignal.any([signal, limit.signal]);
      return (await this.#piscina.run(task, { signal: combined })) as Result<T>;
    } catch (error) {
      return this.#failure(error, signal, limit.signal);
    } finally {
      clearTimeout(timer);
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
