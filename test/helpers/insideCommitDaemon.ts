/**
 * `patchd serve` in which a test acts inside a commit — once the plan is made under the locks,
 * before the commit looks at the disk — standing in for an outside writer that lands in that
 * instant; injected from the test, never from the product. Spawn it with `INSIDE_COMMIT_DAEMON`
 * in place of the daemon's own entry and `PATCHD_TEST_INSIDE_COMMIT` naming a directory outside
 * the workspace; `actInsideNextCommit` leaves there what to do in the next commit of a path.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { claimStdout } from '../../daemon/server/stdoutGuard.ts';

export const INSIDE_COMMIT_DAEMON: readonly string[] = ['--import', import.meta.resolve('tsx'), fileURLToPath(import.meta.url), 'serve'];

export interface InsideCommit {
  /** Written over the file just before the commit looks at the disk. */
  readonly write?: string;
  /** The file's bytes from before `write` are put back once the commit returns: a change that came and went. */
  readonly putBack?: boolean;
  /** Report whether the file's lock is still held while the commit runs (see `lockHeldInCommit`). */
  readonly probeLock?: boolean;
}

/** What the next commit of `path` (workspace-relative) does first; `control` is the daemon's `PATCHD_TEST_INSIDE_COMMIT`. */
export function actInsideNextCommit(control: string, path: string, act: InsideCommit): void {
  writeFileSync(instructionFile(control, path), JSON.stringify(act));
}

/** Whether the lock of `path` was held while its commit ran, as probed (undefined: not probed yet). */
export function lockHeldInCommit(control: string, path: string): boolean | undefined {
  const report = reportFile(control, path);
  return existsSync(report) ? (JSON.parse(readFileSync(report, 'utf8')) as { held: boolean }).held : undefined;
}

const instructionFile = (control: string, path: string) => join(control, `${encodeURIComponent(path)}.json`);
const reportFile = (control: string, path: string) => join(control, `${encodeURIComponent(path)}.lock.json`);

/** The instruction left for `path`, removed so that it acts once. */
function takeInstruction(control: string, path: string): InsideCommit | undefined {
  const file = instructionFile(control, path);
  if (!existsSync(file)) return undefined;
  const act = JSON.parse(readFileSync(file, 'utf8')) as InsideCommit;
  rmSync(file);
  return act;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const control = process.env.PATCHD_TEST_INSIDE_COMMIT;
  if (control === undefined) throw new Error('PATCHD_TEST_INSIDE_COMMIT names no directory');
  const wire = claimStdout();
  const { runCommitsThrough } = await import('./workspaceInjection.ts');
  runCommitsThrough(async (workspace, options, commit) => {
    const acts = [...options.snapshots.keys()].flatMap((path) => {
      const act = takeInstruction(control, path);
      return act === undefined ? [] : [{ path, act }];
    });
    if (acts.length === 0) return commit();
    // The caller's own code after starting the commit (releasing a lease too early, say) runs first.
    await new Promise(setImmediate);
    const putBack: (() => void)[] = [];
    for (const { path, act } of acts) {
      if (act.probeLock === true) {
        const probe = new AbortController();
        const asked = workspace.lock([path], probe.signal);
        // Granted at once when free; when held, the abort takes the request back.
        probe.abort();
        const held = await asked.then((lease) => (lease.release(), false), () => true);
        writeFileSync(reportFile(control, path), JSON.stringify({ held }));
      }
      if (act.write !== undefined) {
        const file = join(workspace.root, path);
        const before = readFileSync(file);
        writeFileSync(file, act.write);
        if (act.putBack === true) putBack.push(() => writeFileSync(file, before));
      }
    }
    try {
      return await commit();
    } finally {
      for (const restore of putBack) restore();
    }
  });
  const { serve } = await import('../../daemon/cli/serve.ts');
  const failed = await serve(process.argv.slice(3), wire);
  if (failed !== undefined) process.exit(failed);
}
