/** `patchd --help` and `patchd --version`. */
import { FORMATS } from '../../protocol/index.ts';
import { packageInfo } from '../server/packageInfo.ts';

export const USAGE = `usage: patchd apply [PATCHFILE|-] [-C DIR] [--format F] [--dry-run] [--exact] [--json]
       patchd serve [--task-timeout-ms N]
       patchd --help | --version`;

export function helpText(): string {
  return `patchd ${packageInfo().version} — applies patches written by coding agents to a workspace.

${USAGE}

Commands
  apply     Apply one patch to the directory DIR (default: the current directory).
            The patch is read from PATCHFILE, or from stdin when it is "-" or absent.
  serve     Speak JSON-RPC (wire contract v1) over stdin/stdout; logs go to stderr.

apply options
  -C, --directory DIR  workspace root (default: .)
  --format F           auto (default), ${FORMATS.join(', ')}; with v4a the input is a JSON array of operations
  --dry-run            compute and show the receipt, write nothing
  --exact              no whitespace or punctuation tolerance when matching context
  --json               print the receipt as JSON

serve options
  --task-timeout-ms N  per-task time limit for the matcher (also $PATCHD_TASK_TIMEOUT_MS)

Exit status: 0 applied (or dry run), 1 rejected or partially applied, 2 usage or internal error.
`;
}

export function versionText(): string {
  return `patchd ${packageInfo().version}\n`;
}
