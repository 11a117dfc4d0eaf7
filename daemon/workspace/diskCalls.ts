/**
 * The system calls that make a commit durable, behind one seam: staging temps, their fsyncs,
 * the renames onto targets, journal writes and directory fsyncs all go through a `DiskCalls`.
 * The workspace uses `nodeDiskCalls`; tests pass one that records the calls (to check that a
 * staged file is fsynced before it is renamed into place) or that dies at a chosen call (to
 * crash a commit or a recovery at a precise instant).
 */
import { renameSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';

export interface DiskCalls {
  /** `fs.promises.open`; every fsync goes through the handle it returns. */
  open(path: string, flags: string, mode?: number): Promise<FileHandle>;
  rename(from: string, to: string): Promise<void>;
  /** Synchronous, so a commit can rename right after its last look at the target (see `confirm.ts`). */
  renameSync(from: string, to: string): void;
  unlink(path: string): Promise<void>;
}

export const nodeDiskCalls: DiskCalls = { open, rename, renameSync, unlink };
