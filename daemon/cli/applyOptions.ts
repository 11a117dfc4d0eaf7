/** `patchd apply` arguments: one patch (`PATCHFILE|-`) or a batch (`--batch PATH…`). */
import { DEFAULT_BATCH_CONCURRENCY, FORMATS, MAX_BATCH_CONCURRENCY, MAX_STRIP } from '../../protocol/constants.ts';
import type { FormatName } from '../engine/types.ts';
import { HELP_OPTION, integerOption, parseCommandArgs, UsageError, type OptionSpecs } from './args.ts';

/** Patch formats `--format` takes (the wire's `format` names). */
const FORMAT_NAMES: readonly FormatName[] = ['auto', ...FORMATS];

export const APPLY_OPTIONS: OptionSpecs = {
  directory: { type: 'string', short: 'C', also: ['d'], value: 'DIR', help: 'workspace root (default: .); a relative PATCHFILE is still read from the current directory' },
  input: { type: 'string', short: 'i', value: 'PATCHFILE', help: 'read the patch from PATCHFILE (patch -i): the same as naming it as the operand' },
  format: { type: 'string', value: 'F', help: `the patch's dialect: ${FORMAT_NAMES.join(', ')} (default auto: detected)` },
  strip: { type: 'string', short: 'p', value: 'N', help: 'remove N leading path components from the paths in the patch, like patch -pN' },
  reverse: { type: 'boolean', short: 'R', help: 'apply the patch in reverse (undo it)' },
  'dry-run': { type: 'boolean', help: 'compute the receipt, write nothing; on a terminal, show the diff' },
  check: { type: 'boolean', help: 'like git apply --check: write nothing, print nothing unless it would fail; exit 0 or 1' },
  stat: { type: 'boolean', help: 'like git apply --stat: write nothing, print +/- per file' },
  exact: { type: 'boolean', help: 'no whitespace or punctuation tolerance when matching context' },
  interactive: { type: 'boolean', help: 'show the planned diff and write only after y on the terminal' },
  json: { type: 'boolean', help: 'print the receipt as JSON (with --batch: one receipt per line, JSON Lines)' },
  batch: { type: 'boolean', help: 'apply every PATH (a directory: its files, in name order) as independent patches' },
  concurrency: { type: 'string', value: 'N', help: `with --batch: patches in flight at once, 1 to ${MAX_BATCH_CONCURRENCY} (default ${DEFAULT_BATCH_CONCURRENCY})` },
  socket: { type: 'string', value: 'PATH', help: 'hand the patch to a running shared daemon (patchd serve --socket PATH)' },
  'state-dir': { type: 'string', value: 'DIR', help: 'state root (journals, trash); also $PATCHD_STATE_DIR' },
  quiet: { type: 'boolean', short: 's', also: ['silent'], help: 'print nothing when the patch applies (patch -s); a rejection still says why on stderr' },
  unified: { type: 'boolean', short: 'u', help: 'the patch is a unified diff (patch -u): the same as --format unified' },
  forward: { type: 'boolean', short: 'N', help: 'accepted for patch -N: an already-applied patch is rejected (exit 1), not applied again' },
  'ignore-whitespace': { type: 'boolean', short: 'l', help: 'accepted for patch -l: context matches across whitespace changes unless --exact' },
  'no-backup-if-mismatch': { type: 'boolean', help: 'accepted for patch: patchd writes no backups (patchd undo reverts a patch)' },
  'unidiff-zero': { type: 'boolean', help: 'accepted for git apply: hunks without context lines apply as they are' },
  recount: { type: 'boolean', help: 'accepted for git apply: wrong line counts in hunk headers are tolerated' },
  whitespace: { type: 'string', value: 'ACTION', help: 'accepted for git apply as nowarn or warn (no whitespace checks); fix and error are refused' },
  ...HELP_OPTION,
};

const NOT_GIT_INDEX = "patchd changes the workspace's files, never git's index: apply, then git add (or use git apply --index)";
const NO_MERGE = 'patchd does not merge: a patch whose context is not found is rejected whole, with the nearest text it found';
const NO_REJECTS = 'patchd applies a patch whole or not at all: when a hunk does not apply nothing is written, so there are no .rej files';
const NO_BACKUPS = 'patchd writes no backup files: patchd undo reverts an applied patch';
const IN_PLACE = 'patchd patches files in place; --dry-run (or --json) shows the result without writing';
const WHOLE_PATCH = 'patchd applies every file of a patch: split the patch to apply part of it';
const NO_FUZZ = 'patchd has no fuzz factor: it finds context across drift and whitespace changes, and --exact turns that tolerance off';
const NEVER_ASKS = 'patchd never asks questions, and never applies a patch it finds already applied';
const KEEPS_EMPTIED = 'patchd keeps a file a patch empties; a diff deletes a file with +++ /dev/null';
const STAT_INSTEAD = 'use --stat for the changed lines per file, or --json';

/** Options of `git apply` and GNU `patch` that `patchd apply` does not take, and why (the usage error says it). */
export const FOREIGN_APPLY_OPTIONS: Readonly<Record<string, string>> = {
  index: NOT_GIT_INDEX,
  cached: NOT_GIT_INDEX,
  '3way': NO_MERGE,
  '3': NO_MERGE,
  reject: NO_REJECTS,
  'reject-file': NO_REJECTS,
  r: NO_REJECTS,
  backup: NO_BACKUPS,
  b: NO_BACKUPS,
  output: IN_PLACE,
  o: IN_PLACE,
  include: WHOLE_PATCH,
  exclude: WHOLE_PATCH,
  fuzz: NO_FUZZ,
  F: NO_FUZZ,
  force: NEVER_ASKS,
  f: NEVER_ASKS,
  'remove-empty-files': KEEPS_EMPTIED,
  E: KEEPS_EMPTIED,
  verbose: 'the receipt names every file; --json prints all of it, hunk by hunk',
  v: 'patchd --version prints the version (patch -v); --json prints the whole receipt (git apply -v)',
  numstat: STAT_INSTEAD,
  summary: STAT_INSTEAD,
  'allow-empty': 'patchd rejects a patch with no change in it (exit 1)',
};

/** `--whitespace` actions git apply takes; only those that change nothing are accepted. */
const WHITESPACE_ACTIONS = ['nowarn', 'warn', 'fix', 'strip', 'error', 'error-all'];

export interface ApplyCommand {
  /** PATCHFILE (`-`: stdin) for one patch; files and directories with `--batch`. */
  readonly sources: readonly string[];
  readonly batch: boolean;
  readonly directory: string;
  readonly format: FormatName;
  readonly strip: number | undefined;
  readonly reverse: boolean;
  /** Write nothing: `--dry-run`, `--check` or `--stat`. */
  readonly dryRun: boolean;
  readonly check: boolean;
  readonly stat: boolean;
  readonly exact: boolean;
  readonly json: boolean;
  /** Print nothing unless the patch is rejected (then on stderr). */
  readonly quiet: boolean;
  readonly interactive: boolean;
  readonly concurrency: number | undefined;
  readonly socket: string | undefined;
  readonly stateDir: string | undefined;
}

/** The parsed command, or `help` when `--help` was given. */
export function parseApplyArgs(args: readonly string[]): ApplyCommand | 'help' {
  const { values, positionals } = parseCommandArgs(args, APPLY_OPTIONS, FOREIGN_APPLY_OPTIONS);
  if (values.help === true) return 'help';
  const flag = (name: string) => values[name] === true;
  const text = (name: string) => values[name] as string | undefined;
  const batch = flag('batch');
  const input = text('input');
  if (input !== undefined && (batch || positionals.length > 0)) throw new UsageError('-i/--input names the one patch file; give it there or as the operand, not both (nor with --batch)');
  if (!batch && positionals.length > 1) throw new UsageError('give at most one PATCHFILE (or use --batch for several)');
  if (batch && positionals.length === 0) throw new UsageError('--batch needs at least one patch file or directory');
  if (!batch && values.concurrency !== undefined) throw new UsageError('--concurrency only applies to --batch');
  if (batch && positionals.includes('-')) throw new UsageError('--batch reads patch files, not stdin (-)');
  if (batch && (values.check !== undefined || values.stat !== undefined)) throw new UsageError('--check and --stat take one patch; use --dry-run with --batch');
  if (flag('interactive') && (batch || values.socket !== undefined)) throw new UsageError('--interactive takes one patch, applied in this process');
  if (batch && values.socket !== undefined) throw new UsageError('--socket takes one patch; --batch runs in this process');
  if (values.socket !== undefined && values['state-dir'] !== undefined) throw new UsageError('--state-dir does not apply with --socket: the daemon keeps its own state');
  if (flag('quiet') && (batch || flag('json') || flag('stat') || flag('interactive'))) throw new UsageError('-s/--quiet prints nothing; it takes one patch, without --json, --stat or --interactive');
  if (flag('ignore-whitespace') && flag('exact')) throw new UsageError('-l/--ignore-whitespace and --exact contradict each other; give one');
  checkWhitespaceAction(text('whitespace'));
  return {
    sources: input !== undefined ? [input] : positionals.length === 0 ? ['-'] : positionals,
    batch,
    directory: text('directory') ?? '.',
    format: formatOf(text('format'), flag('unified')),
    strip: integerOption(text('strip'), '-p/--strip', 0, MAX_STRIP),
    reverse: flag('reverse'),
    dryRun: flag('dry-run') || flag('check') || flag('stat'),
    check: flag('check'),
    stat: flag('stat'),
    exact: flag('exact'),
    json: flag('json'),
    quiet: flag('quiet'),
    interactive: flag('interactive'),
    concurrency: integerOption(text('concurrency'), '--concurrency', 1, MAX_BATCH_CONCURRENCY),
    socket: text('socket'),
    stateDir: text('state-dir'),
  };
}

function formatOf(value: string | undefined, unified: boolean): FormatName {
  if (unified && value !== undefined && value !== 'unified') throw new UsageError(`-u/--unified says the patch is a unified diff, --format says ${value}; give one`);
  if (unified) return 'unified';
  if (value === undefined) return 'auto';
  if ((FORMAT_NAMES as readonly string[]).includes(value)) return value as FormatName;
  throw new UsageError(`unknown format ${JSON.stringify(value)}: use one of ${FORMAT_NAMES.join(', ')}`);
}

function checkWhitespaceAction(action: string | undefined): void {
  if (action === undefined || action === 'nowarn' || action === 'warn') return;
  if (!WHITESPACE_ACTIONS.includes(action)) throw new UsageError(`--whitespace must be one of ${WHITESPACE_ACTIONS.join(', ')} (got ${JSON.stringify(action)})`);
  throw new UsageError(`--whitespace=${action} is not taken: patchd neither fixes nor flags whitespace errors, it applies the lines as the patch gives them`);
}
