/**
 * A state dir removed under an open workspace (by hand, or by a cleaner of old files when it is
 * in a temp dir) makes commits fail with `io_error`: the log finds its segment deleted
 * (`commitLog.ts`), a record or segment has no directory to go to, or a commit already reported
 * cannot write its record. Once one has, the state dir is made anew with the checks
 * `workspace/open` makes, so the next commit logs and records again; the history it held is gone.
 */
import type { WorkspaceContext } from './context.ts';
import { isPresent } from './durable.ts';
import { prepareStateDir, StateDirError } from './stateDir.ts';

export const STATE_DIR_REMADE = "patchd made the workspace's state directory anew (the undo history before now is lost); send the patch again.";

type StateParts = Pick<WorkspaceContext, 'root' | 'stateDir' | 'journals' | 'records' | 'log'>;

export class StateDirRemaker {
  readonly #context: StateParts;
  readonly #onError: (error: unknown) => void;
  #running: Promise<boolean> | undefined;

  constructor(context: StateParts, onError: (error: unknown) => void) {
    this.#context = context;
    this.#onError = onError;
  }

  /**
   * Whether part of the state dir was missing and has been made again; one remake at a time,
   * shared by every commit that failed meanwhile. A state dir that cannot be made again goes to
   * `onError` (false): it is the workspace's fault to report, not the commit's.
   */
  remakeIfRemoved(): Promise<boolean> {
    this.#running ??= this.#remake().catch((error: unknown) => {
      this.#onError(error);
      return false;
    }).finally(() => (this.#running = undefined));
    return this.#running;
  }

  async #remake(): Promise<boolean> {
    const { root, stateDir, journals, records, log } = this.#context;
    if ([journals.directory, records.directory, log.directory].every(isPresent)) return false;
    const real = await prepareStateDir(root, stateDir);
    // A link put where the state dir was would send journals elsewhere.
    if (real !== stateDir) throw new StateDirError(stateDir, `it was replaced by a link to ${real}`);
    await Promise.all([journals.prepare(), records.prepare(), log.prepare()]);
    return true;
  }
}
