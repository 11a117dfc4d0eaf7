/** Turning a call that reports items while it runs into an async generator. */

/**
 * Runs `start`, yielding each item it pushes as it arrives, then returns its result (or throws
 * its error). Leaving the loop early does not stop the call.
 */
export async function* streamOf<T, R>(start: (push: (item: T) => void) => Promise<R>): AsyncGenerator<T, R, undefined> {
  const arrived: T[] = [];
  let read = 0;
  let wake: (() => void) | undefined;
  let finished = false;
  const result = start((item) => {
    arrived.push(item);
    wake?.();
  }).finally(() => {
    finished = true;
    wake?.();
  });
  result.catch(() => {}); // observed below; avoids an unhandled rejection if the caller stops early
  for (;;) {
    if (read < arrived.length) yield arrived[read++]!;
    else if (finished) return await result;
    else await new Promise<void>((resolve) => (wake = resolve));
  }
}
