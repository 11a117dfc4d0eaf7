/**
 * Which boot of the machine this is. A commit may be reported before its new content is fsynced
 * (its post-image is in the commit log: `transaction.ts`); recovery in the same boot finds the
 * page cache intact, and only after a reboot (a power loss) may those writes be lost. Linux names
 * each boot; elsewhere the boot is unknown (null) and recovery assumes the worst it safely can.
 */
import { readFileSync } from 'node:fs';

function readBootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

export const BOOT_ID: string | null = readBootId();
