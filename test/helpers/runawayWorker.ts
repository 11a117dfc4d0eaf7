/**
 * A pool worker for tests (given to `EnginePool` as `workerFile`): the real worker, except that
 * a patch containing RUNAWAY_MARKER spins while parsing, and a file containing it spins while
 * planning (so, holding the file's lock) — until the time limit or a cancellation kills the thread.
 */
import { raiseStartFlag } from '../../daemon/pool/taskClock.ts';
import type { EngineTask, TaskMessage } from '../../daemon/pool/tasks.ts';
import { runTask } from '../../daemon/pool/worker.ts';

export const RUNAWAY_MARKER = '@@patchd-test-runaway@@';
export const RUNAWAY_WORKER = import.meta.url;

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
