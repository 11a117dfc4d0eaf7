/** `patchd --help` and `patchd --version`. */
import { FORMATS } from '../../protocol/index.ts';
import { packageInfo } from '../server/packageInfo.ts';

export const USAGE = `usage: patchd apply [PATCHFILE|-] [-C DIR] [--format F] [--dry-run] [--exact] [--json]
       patchd apply --batch PATH… [-C DIR] [--concurrency N] [--format F] [--dry-run] [--exact] [--json]
       patchd serve [--socket PATH] [--task-timeout-ms N] [--state-dir DIR]
       patchd mcp [-C DIR] [--task-timeout-ms N] [--state-dir DIR]
       patchd --help | --version`;

export function helpText(): string {
  return `patchd ${packageInfo().version} — applies patches written by coding agents to a workspace.

${USAGE}

Commands
  apply     Apply one patch to the directory DIR (default: the current directory).
            The patch is read from PATCHFILE, or from stdin when it is "-" or absent.
            With --batch, apply every patch file named (a directory stands for its
            files, in name order); each patch is independent. A .json file holds V4A
            operations (an array) or {"edits": [...]}.
  serve     Speak JSON-RPC (wire contract v1) over stdin/stdout; logs go to stderr.
            With --socket PATH, serve any number of clients on a unix socket instead
            (one shared arbiter per workspace) until SIGINT/SIGTERM.

apply options
  -C, --directory DIR  workspace root (default: .)
  --format F           auto (default), ${FORMATS.join(', ')}; with v4a the input is a JSON array of operations
  --dry-run            compute and show the receipt, write nothing
  --exact              no whitespace or punctuation tolerance when matching context
  --json               print the receipt as JSON (with --batch: the summary and every receipt)
  --batch              apply every PATH given as one batch; a progress bar on a terminal,
                       then a summary table
  --concurrency N      patches of a batch in flight at once (default 8)
  --state-dir DIR      where journals and trash live (also $PATCHD_STATE_DIR)

serve options
  --socket PATH        listen on a unix socket (mode 0600); a stale socket file is replaced,
                       a live daemon's is refused
  --task-timeout-ms N  per-task time limit for the matcher (also $PATCHD_TASK_TIMEOUT_MS)
  --state-dir DIR      where journals and trash live (also $PATCHD_STATE_DIR; default:
                       the system temp dir)

Exit status: 0 applied (or dry run) — with --batch, every patch — 1 rejected or partially
applied, 2 usage or internal error.
`;
}

export function versionText(): string {
  return `patchd ${packageInfo().version}\n`;
}
