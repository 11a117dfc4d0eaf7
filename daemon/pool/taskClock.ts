/**
 * The start signal of a pool task: a one-slot shared flag the worker raises as it begins the
 * task, and the main thread awaits (without blocking) to start the task's clock.
 */

const WAITING = 0;
const RUNNING = 1;
const ENDED = 2;

// ES2023's lib does not declare Atomics.waitAsync (Node 20 has it).
type WaitAsync = (array: Int32Array, index: number, value: number) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export function createStartFlag(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
}

/** Worker side: the task starts now. */
export function raiseStartFlag(flag: Int32Array): void {
  Atomics.store(flag, 0, RUNNING);
  Atomics.notify(flag, 0);
}

/** Main side: resolves true when the worker starts the task, false if `lowerStartFlag` came first. */
export async function taskStarted(flag: Int32Array): Promise<boolean> {
  const waited = waitAsync(flag, 0, WAITING);
  if (waited.async) await waited.value;
  return Atomics.load(flag, 0) === RUNNING;
}

/** Main side: the task is over (or never ran); releases a pending `taskStarted`. */
export function lowerStartFlag(flag: Int32Array): void {
  if (Atomics.compareExchange(flag, 0, WAITING, ENDED) === WAITING) Atomics.notify(flag, 0);
}
