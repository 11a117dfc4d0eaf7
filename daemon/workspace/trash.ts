/**
 * The per-workspace trash, outside the tree: a deleted (or moved-away) file goes to
 * `<stateDir>/trash/<transactionId>/<workspace-relative path>`, where undo can find it.
 */
import { mkdir, rmdir } from 'node:fs/promises';
import path from 'node:path';
import type { DiskCalls } from './diskCalls.ts';
import { writeDurably, removeIfPresent } from './durable.ts';
import { hasErrorCode } from './ioErrors.ts';

export function trashRoot(stateDir: string): string {
  return path.join(stateDir, 'trash');
}

export function trashPathFor(stateDir: string, transactionId: string, relativePath: string): string {
  return path.join(trashRoot(stateDir), transactionId, ...relativePath.split('/'));
}

export async function prepareTrashSlot(trashPath: string): Promise<void> {
  await mkdir(path.dirname(trashPath), { recursive: true, mode: 0o700 });
}

/**
 * Moves `absolute` into its (prepared) trash slot. `afterLastLook` runs its argument (synchronous)
 * right after checking the file still holds what the commit verified (see `confirm.ts`), and
 * throws otherwise. Across filesystems (a tmpfs state dir) a rename is impossible, so the
 * pre-image is written there and the original unlinked, after a last look of its own.
 */
export async function moveToTrash(
  absolute: string, trashPath: string, preImage: Uint8Array, afterLastLook: (act: () => void) => void, disk: DiskCalls,
): Promise<void> {
  try {
    afterLastLook(() => disk.renameSync(absolute, trashPath));
  } catch (error) {
    if (!hasErrorCode(error, 'EXDEV')) throw error;
    await removeIfPresent(trashPath, disk);
    await writeDurably(trashPath, preImage, undefined, disk);
    afterLastLook(() => disk.unlinkSync(absolute));
  }
}

/** Drops a trash copy made redundant by a rollback, and the directories it leaves empty. */
export async function discardFromTrash(stateDir: string, trashPath: string): Promise<void> {
  await removeIfPresent(trashPath);
  const stop = trashRoot(stateDir);
  for (let dir = path.dirname(trashPath); dir.startsWith(stop + path.sep); dir = path.dirname(dir)) {
    try {
      await rmdir(dir);
    } catch (error) {
      if (hasErrorCode(error, 'ENOTEMPTY', 'EEXIST')) return;
      if (!hasErrorCode(error, 'ENOENT')) throw error;
    }
  }
}
