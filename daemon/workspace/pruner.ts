/**
 * When an open workspace prunes its history (`retention.ts`): hourly, and once a tenth of what
 * its retention keeps has been committed since the last prune. The hour alone let a busy daemon
 * pile up an hour of records (hundreds of thousands), which every undo, list and session diff
 * then read through; now the history stays within about 110% of the retention. One prune runs
 * at a time; one that falls due meanwhile runs after it.
 */
import { DEFAULT_RETENTION, type Retention } from './retention.ts';

/** How often a prune runs whatever was committed. */
const PRUNE_INTERVAL_MS = 3_600_000;

export class Pruner {
  /** Prunes once; resolves with the retention it pruned with, or undefined when it could not tell. */
  readonly #prune: () => Promise<Retention | undefined>;
  readonly #onError: (error: unknown) => void;
  readonly #timer: NodeJS.Timeout;
  #every: number;
  #committed = 0;
  #running: Promise<void> | undefined;
  #due = false;

  /** `retention`: what the open's own prune used. */
  constructor(prune: () => Promise<Retention | undefined>, retention: Retention | undefined, onError: (error: unknown) => void) {
    this.#prune = prune;
    this.#onError = onError;
    this.#every = commitsBetween(retention);
    this.#timer = setInterval(() => this.#start(), PRUNE_INTERVAL_MS).unref();
  }

  /** Counts one committed transaction; starts a prune when enough have been since the last. */
  committed(): void {
    this.#committed += 1;
    if (this.#committed >= this.#every) this.#start();
  }

  /** Resolves once no prune is running or due. */
  async idle(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
  }

  /** Stops the schedule and waits for the prunes running or due. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.idle();
  }

  #start(): void {
    if (this.#running !== undefined) {
      this.#due = true;
      return;
    }
    this.#committed = 0;
    this.#running = this.#prune()
      .then((retention) => {
        if (retention !== undefined) this.#every = commitsBetween(retention);
      })
      .catch(this.#onError)
      .finally(() => {
        this.#running = undefined;
        if (!this.#due) return;
        this.#due = false;
        this.#start();
      });
  }
}

/** A tenth of what the retention keeps (at least one); unknown retention: the default's tenth. */
function commitsBetween(retention: Retention | undefined): number {
  return Math.max(1, Math.ceil((retention ?? DEFAULT_RETENTION).maxTransactions / 10));
}
