/**
 * Turns: makes a series of concurrent patches queue for their locks in series order, so the
 * items of a batch that share a file apply in index order while items on other files run in
 * parallel. Only the moment of queueing is ordered — parsing still overlaps.
 */

/** One item's turn: wait for `ready` before queueing for locks; call `done` once queued (or given up). */
export interface Turn {
  readonly ready: Promise<void>;
  /** Lets the next item queue; later calls do nothing. */
  done(): void;
}

/** `count` turns, each ready once the one before it is done. */
export function createTurns(count: number): Turn[] {
  const turns: Turn[] = [];
  let previous: Promise<void> = Promise.resolve();
  for (let index = 0; index < count; index++) {
    let done!: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    turns.push({ ready: previous, done });
    previous = finished;
  }
  return turns;
}
