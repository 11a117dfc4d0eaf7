/** The engine tasks, run on the main thread or by a worker; their messages are plain data both ways. */
import { parsePatch, requiredPaths, type FileSnapshot, type ParsedPatch, type PatchInput, type PlanOptions, type Result } from '../engine/index.ts';

/** Parse patch text or operations; the reply names the paths the plan will need. */
export interface ParseTask {
  readonly kind: 'parse';
  readonly input: PatchInput;
}

/** Plan a parsed patch against the current files; new contents come back as transferred bytes. */
export interface PlanTask {
  readonly kind: 'plan';
  readonly parsed: ParsedPatch;
  readonly files: ReadonlyMap<string, FileSnapshot>;
  readonly options: PlanOptions;
}

export type EngineTask = ParseTask | PlanTask;

export interface ParseOutput {
  readonly parsed: ParsedPatch;
  /** The paths whose snapshots `plan` needs (`requiredPaths`). */
  readonly paths: readonly string[];
}

export function runParse(input: PatchInput): Result<ParseOutput> {
  const parsed = parsePatch(input);
  if (!parsed.ok) return parsed;
  return { ok: true, value: { parsed: parsed.value, paths: requiredPaths(parsed.value) } };
}

/**
 * What the pool posts to a worker: the task, and a flag the worker raises the moment it starts
 * running it, so the time limit counts the task's own work, not its wait in the queue or a
 * thread's boot (see `taskClock.ts`).
 */
export interface TaskMessage {
  readonly task: EngineTask;
  readonly started: Int32Array;
}
