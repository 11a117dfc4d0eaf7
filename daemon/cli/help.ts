/** `patchd --help`, `patchd COMMAND --help` and `patchd --version`. */
import { packageInfo } from '../server/packageInfo.ts';
import { optionsHelp, type OptionSpecs } from './args.ts';
import { ENVIRONMENT_HELP } from './settings.ts';

export const APPLY_USAGE = `usage: patchd apply [PATCHFILE|-|-i PATCHFILE] [-C DIR] [-p N] [-R] [--format F]
                    [--dry-run | --check | --stat] [--exact] [--json | -s] [--socket PATH | --state-dir DIR]
       patchd apply --batch PATH… [-C DIR] [--concurrency N] [-p N] [-R] [--format F]
                    [--dry-run | --check | --stat] [--exact] [--json] [--state-dir DIR]`;

export const SERVE_USAGE = 'usage: patchd serve [--socket PATH] [--task-timeout-ms N] [--state-dir DIR] [--retain N,Dd]';

/** The one usage line printed after a mistake. */
export const APPLY_USAGE_LINE = 'usage: patchd apply [OPTION…] [PATCHFILE|-]  or  patchd apply --batch [OPTION…] PATH…  (see patchd apply --help)';
export const SERVE_USAGE_LINE = `${SERVE_USAGE}  (see patchd serve --help)`;
export const USAGE_LINE = 'usage: patchd apply|serve|mcp|log|undo|diff [OPTION…]  (see patchd --help)';

export const MCP_USAGE = 'usage: patchd mcp [-C DIR] [--task-timeout-ms N] [--state-dir DIR]';

export const USAGE = `${APPLY_USAGE}
       ${SERVE_USAGE.slice('usage: '.length)}
       ${MCP_USAGE.slice('usage: '.length)}
       patchd COMMAND --help | patchd --help | patchd --version`;

const EXIT_STATUS = `Exit status: 0 applied (or would apply) — with --batch, every patch; 1 rejected or
partially applied; 2 a usage mistake or an internal error.`;

export function helpText(): string {
  return `patchd ${packageInfo().version} — applies patches written by coding agents to a workspace.

${USAGE}

Commands
  apply     Apply a patch to the directory DIR (default: the current directory), in-process.
  serve     The daemon: JSON-RPC over stdin/stdout, or a shared daemon on a unix socket.
  mcp       One workspace as an MCP server over stdin/stdout.
  log       The workspace's committed transactions, newest first (shared with the daemon).
  undo      Undo a committed transaction as a new one; undoing an undo redoes.
  diff      The net change in git diff format, since a transaction or of every retained one.

Run "patchd COMMAND --help" for a command's options.

${ENVIRONMENT_HELP}

${EXIT_STATUS}
`;
}

/** One command's help: usage, what it does, its options, the environment. */
export function commandHelp(usage: string, about: string, options: OptionSpecs): string {
  return `${usage}

${about}

Options
${optionsHelp(options)}

${ENVIRONMENT_HELP}
`;
}

export function applyAbout(): string {
  return `Applies one patch to DIR: from PATCHFILE, or from stdin when it is "-" or absent. The patch
is text in any dialect (unified / git diff, *** Begin Patch envelope, SEARCH/REPLACE blocks,
an apply_patch heredoc) or JSON: an array of V4A operations, {"operations": [...]} or
{"edits": [...]}. The dialect is detected from the content; --format overrides it.
With --batch, applies every PATH (a directory stands for its files, in name order) as
independent patches: a progress bar on a terminal, then one row per patch.
The engine runs in this process; with --socket it runs in the shared daemon listening there.

${EXIT_STATUS}`;
}

export function versionText(): string {
  return `patchd ${packageInfo().version}\n`;
}
