/** What the commit, rollback and recovery steps share for one workspace. */
import type { CommitLog } from './commitLog.ts';
import type { DiskCalls } from './diskCalls.ts';
import type { DirectorySyncer } from './durable.ts';
import type { PathGuard } from './guard.ts';
import type { JournalStore } from './journal.ts';
import type { RecordStore } from './records.ts';
import type { Settling } from './settling.ts';

/** Fault injection for tests. */
export interface CommitHooks {
  /** Runs before each rename of a commit; throwing aborts the commit (rolled back). */
  readonly beforeRename?: ((index: number, path: string) => void | Promise<void>) | undefined;
  /** Runs after a commit's renames, fsyncs and record write, before it is logged done (for a commit reported before its fsyncs, after the report). */
  readonly beforeDone?: (() => void | Promise<void>) | undefined;
  /** Runs when a commit starts, before it reads the disk to verify the plan's snapshots. */
  readonly beforeVerify?: ((paths: readonly string[]) => void | Promise<void>) | undefined;
}

export interface WorkspaceContext {
  /** Real path of the workspace root. */
  readonly root: string;
  /** Where the log, journals, records and trash live; outside the tree. */
  readonly stateDir: string;
  readonly guard: PathGuard;
  readonly syncer: DirectorySyncer;
  /** Journal files handed over for recovery (see `journal.ts`). */
  readonly journals: JournalStore;
  /** The group-commit log every transaction goes through (see `commitLog.ts`). */
  readonly log: CommitLog;
  /** The durable-write system calls (see `diskCalls.ts`). */
  readonly disk: DiskCalls;
  /** Undo records of committed transactions. */
  readonly records: RecordStore;
  readonly hooks: CommitHooks;
  /** Commits reported before their fsyncs ended (see `settling.ts`). */
  readonly settling: Settling;
  /** This boot of the machine (`boot.ts`), recorded with such commits. */
  readonly bootId: string | null;
}
