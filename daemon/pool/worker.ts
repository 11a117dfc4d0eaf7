/**
 * The pool's worker: runs the pure engine and returns data (a `Result`), never throws for a
 * bad patch, never touches the disk. Aborting a task kills this thread, so it must hold no
 * half-done work outside its return value.
 */
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { planPatch, type Plan, type PlannedFile, type Result } from '../engine/index.ts';
import { raiseStartFlag } from './taskClock.ts';
import { runParse, type EngineTask, type TaskMessage } from './tasks.ts';

export default function runEngineTask({ task, started }: TaskMessage): unknown {
  raiseStartFlag(started);
  return runTask(task);
}

export function runTask(task: EngineTask): unknown {
  if (task.kind === 'parse') return runParse(task.input);
  return transferPlan(planPatch(task.parsed, task.files, task.options));
}

/** Sends the new contents back by transfer instead of a copy. */
function transferPlan(result: Result<Plan>): unknown {
  if (!result.ok) return result;
  const buffers: ArrayBuffer[] = [];
  const files = result.value.files.map((file) => withOwnedBytes(file, buffers));
  const value: Result<Plan> = { ok: true, value: { ...result.value, files } };
  return move({ [transferableSymbol]: buffers, [valueSymbol]: value });
}

/** A transfer detaches the whole ArrayBuffer, so each file's bytes must own theirs alone. */
function withOwnedBytes(file: PlannedFile, buffers: ArrayBuffer[]): PlannedFile {
  if (file.after === null) return file;
  const owned = ownedBuffer(file.after);
  const after = owned !== undefined && !buffers.includes(owned) ? file.after : new Uint8Array(file.after);
  buffers.push(after.buffer as ArrayBuffer);
  return { ...file, after };
}

function ownedBuffer(bytes: Uint8Array): ArrayBuffer | undefined {
  const { buffer } = bytes;
  const whole = bytes.byteOffset === 0 && bytes.byteLength === buffer.byteLength;
  return whole && buffer instanceof ArrayBuffer ? buffer : undefined;
}
