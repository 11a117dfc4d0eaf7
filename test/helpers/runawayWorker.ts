/**
 * A pool worker for tests (given to `EnginePool` as `workerFile`): the real worker, except that
 * a patch containing RUNAWAY_MARKER spins while parsing, and a file containing it spins while
 * planning (so, holding the file's lock) — until the time limit or a cancellation kills the thread.
 *
 * Only work too big for the main thread reaches a worker (daemon/pool/cost.ts), so runaway
 * inputs are made big: `RUNAWAY_PATCH`, and files made with `runawayFile`.
 */
import { INLINE_LIMITS } from '../../daemon/pool/cost.ts';
import { raiseStartFlag } from '../../daemon/pool/taskClock.ts';
import type { EngineTask, TaskMessage } from '../../daemon/pool/tasks.ts';
import { runTask } from '../../daemon/pool/worker.ts';

export const RUNAWAY_MARKER = '@@patchd-test-runaway@@';
export const RUNAWAY_WORKER = import.meta.url;

/** Text longer than the main thread may parse, so it goes to a worker. */
export const PARSED_ON_A_WORKER = `${'#'.repeat(INLINE_LIMITS.maxParseChars)}\n`;

/** Patch text of a.txt that a worker parses, spinning. */
export const RUNAWAY_PATCH = `--- a/a.txt\n+++ b/a.txt\n${RUNAWAY_MARKER}\n${PARSED_ON_A_WORKER}`;

/** A line too long for the main thread to plan on: a patch of a file holding it is planned on a worker. */
export const PLANNED_ON_A_WORKER = `${'#'.repeat(INLINE_LIMITS.maxPlanUnits)}\n`;

/** File content whose every patch is planned on a worker, spinning: the marker, then `text` from line 2, then a long last line. */
export function runawayFile(text: string): string {
  return `${RUNAWAY_MARKER}\n${text}${PLANNED_ON_A_WORKER}`;
}

export default function runOrRunAway({ task, started }: TaskMessage): unknown {
  raiseStartFlag(started);
  if (runsAway(task)) for (;;);
  return runTask(task);
}

function runsAway(task: EngineTask): boolean {
  if (task.kind === 'parse') return task.input.patch?.includes(RUNAWAY_MARKER) === true;
  const marker = Buffer.from(RUNAWAY_MARKER);
  return [...task.files.values()].some((file) => file.kind === 'file' && Buffer.from(file.bytes).includes(marker));
}
