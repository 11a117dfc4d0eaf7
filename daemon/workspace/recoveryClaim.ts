/**
 * One recovery at a time per state dir. Every process using a state root (a `patchd serve`,
 * `patchd mcp`, each one-shot CLI command) recovers on `Workspace.open` what a dead process left;
 * two opening at once would both hand the same log segment's commits over to `journal/`, both
 * roll back the same file through the same restore temp, both adopt or set aside the same
 * journal — failing one open with a raw ENOENT or EEXIST, and reporting one recovered commit
 * twice. So recovery runs under a claim, and only when there is something to recover: an open
 * that finds no abandoned segment or journal takes none (the same listings recovery reads).
 *
 * A claim is a file `recovery/<pid>-<nonce>-<n>.claim` in the state dir, unique to its holder
 * (no two holders ever create one name, so any holder may remove a dead one's). A process that
 * lists no claim of a live process creates its own, then lists again: with still none but its
 * own it recovers, and removes its claim after. Of two that both see each other, the one whose
 * claim sorts after withdraws it and waits until it lists none; the other keeps its claim and
 * waits for the rest to go. That is exclusive: of two claims, the later-created one's second
 * listing sees the earlier, which stays until its holder is done. A claim is live while its
 * process is (`isAbandonedOwner`: pid and nonce), so one a killed process left is ignored and
 * removed; two opens in one process hold distinct claims and wait for each other like two
 * processes. Waiting polls (it waits for the other claim to go, not for time to pass) and gives
 * up past `waitMs` with a `StateDirError` naming the holder: a live process that recovers for
 * that long is stuck. The claim's own I/O failing is a `StateDirError` too.
 *
 * The waiting process then recovers under its claim what is still left — nothing, when the other
 * finished it — so each recovered commit is reported once, by the process that recovered it.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { removeIfPresent } from './durable.ts';
import { isAbandonedOwner, PROCESS_NONCE } from './journal.ts';
import { StateDirError, unusable } from './stateDir.ts';

/** How long an open waits for another process's recovery of the same state dir before it gives up. */
export const RECOVERY_WAIT_MS = 120_000;
/** How often a waiting open looks again. */
const POLL_MS = 20;
const CLAIM_NAME = /^(\d+)-([0-9a-f]+)-\d+\.claim$/;

let claimSequence = 0;

/** Runs `recover` once no other live process (or open of this one) recovers the state dir `stateDir`. */
export async function underRecoveryClaim<T>(stateDir: string, recover: () => Promise<T>, waitMs = RECOVERY_WAIT_MS): Promise<T> {
  const directory = path.join(stateDir, 'recovery');
  const name = `${process.pid}-${PROCESS_NONCE}-${++claimSequence}.claim`;
  const mine = path.join(directory, name);
  const claimStep = <R>(step: Promise<R>): Promise<R> => step.catch((error: unknown) => Promise.reject(unusable(stateDir, error)));
  const deadline = Date.now() + waitMs;
  await claimStep(mkdir(directory, { recursive: true, mode: 0o700 }));
  let held = false;
  try {
    for (;;) {
      const others = await claimStep(liveClaimsBesides(directory, name));
      if (others.length === 0) {
        if (held) return await recover();
        // Claimed only when none is seen, then listed again: a process that withdrew waits without one, so the holder it saw is not kept waiting by it.
        await claimStep(writeFile(mine, '', { flag: 'wx', mode: 0o600 }));
        held = true;
        continue;
      }
      if (held && others.some((other) => other < name)) {
        await claimStep(removeIfPresent(mine));
        held = false;
      }
      if (Date.now() >= deadline) {
        const holder = CLAIM_NAME.exec(others[0]!)?.[1];
        throw new StateDirError(stateDir, `another patchd process (pid ${holder}) has been recovering it for over ${Math.round(waitMs / 1000)} s; try again once it is done or gone`);
      }
      await delay(POLL_MS);
    }
  } finally {
    if (held) await removeIfPresent(mine);
  }
}

/** The claims in `directory` other than `mine` whose holder lives, sorted; a dead holder's is removed. */
async function liveClaimsBesides(directory: string, mine: string): Promise<string[]> {
  const live: string[] = [];
  for (const name of await readdir(directory)) {
    const match = CLAIM_NAME.exec(name);
    if (match === null || name === mine) continue;
    if (isAbandonedOwner(Number(match[1]), match[2]!)) await removeIfPresent(path.join(directory, name));
    else live.push(name);
  }
  return live.sort();
}
