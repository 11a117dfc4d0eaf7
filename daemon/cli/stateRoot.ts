/**
 * Where patchd keeps its state (journals of in-flight commits, trash, undo records, the
 * transaction log): one folder per workspace under the state root. Every command resolves the
 * root here, the same way:
 *
 *   --state-dir DIR  >  $PATCHD_STATE_DIR  >  $XDG_STATE_HOME/patchd  >  ~/.local/state/patchd
 */
import os from 'node:os';
import path from 'node:path';
import { UsageError } from './args.ts';

export function resolveStateRoot(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  const chosen = flag ?? nonEmpty(env.PATCHD_STATE_DIR);
  if (chosen !== undefined) return path.resolve(chosen);
  // The XDG spec: a relative XDG_STATE_HOME is invalid and must be ignored.
  const xdg = nonEmpty(env.XDG_STATE_HOME);
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, 'patchd');
  const home = nonEmpty(env.HOME) ?? os.homedir();
  if (home === '') throw new UsageError('no home directory to keep state in: set PATCHD_STATE_DIR or pass --state-dir');
  return path.join(home, '.local', 'state', 'patchd');
}

/** An unset and an empty variable mean the same: not set. */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
