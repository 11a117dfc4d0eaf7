/** `patchd apply` arguments: one patch (`PATCHFILE|-`) or a batch (`--batch PATH…`). */
import { DEFAULT_BATCH_CONCURRENCY, FORMATS, MAX_BATCH_CONCURRENCY, MAX_STRIP } from '../../protocol/constants.ts';
import type { FormatName } from '../engine/types.ts';
import { HELP_OPTION, integerOption, parseCommandArgs, UsageError, type OptionSpecs } from './args.ts';

/** Patch formats `--format` takes (the wire's `format` names). */
const FORMAT_NAMES: readonly FormatName[] = ['auto', ...FORMATS];

export const APPLY_OPTIONS: OptionSpecs = {
  directory: { type: 'string', short: 'C', value: 'DIR', help: 'workspace root (default: the current directory)' },
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
  ...HELP_OPTION,
};

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
  readonly interactive: boolean;
  readonly concurrency: number | undefined;
  readonly socket: string | undefined;
  readonly stateDir: string | undefined;
}

/** The parsed command, or `help` when `--help` was given. */
export function parseApplyArgs(args: readonly string[]): ApplyCommand | 'help' {
  const { values, positionals } = parseCommandArgs(args, APPLY_OPTIONS);
  if (values.help === true) return 'help';
  const flag = (name: string) => values[name] === true;
  const text = (name: string) => values[name] as string | undefined;
  const batch = flag('batch');
  if (!batch && positionals.length > 1) throw new UsageError('give at most one PATCHFILE (or use --batch for several)');
  if (batch && positionals.length === 0) throw new UsageError('--batch needs at least one patch file or directory');
  if (!batch && values.concurrency !== undefined) throw new UsageError('--concurrency only applies to --batch');
  if (batch && positionals.includes('-')) throw new UsageError('--batch reads patch files, not stdin (-)');
  if (batch && (values.check !== undefined || values.stat !== undefined)) throw new UsageError('--check and --stat take one patch; use --dry-run with --batch');
  if (flag('interactive') && (batch || values.socket !== undefined)) throw new UsageError('--interactive takes one patch, applied in this process');
  if (batch && values.socket !== undefined) throw new UsageError('--socket takes one patch; --batch runs in this process');
  if (values.socket !== undefined && values['state-dir'] !== undefined) throw new UsageError('--state-dir does not apply with --socket: the daemon keeps its own state');
  return {
    sources: positionals.length === 0 ? ['-'] : positionals,
    batch,
    directory: text('directory') ?? '.',
    format: formatOf(text('format')),
    strip: integerOption(text('strip'), '-p/--strip', 0, MAX_STRIP),
    reverse: flag('reverse'),
    dryRun: flag('dry-run') || flag('check') || flag('stat'),
    check: flag('check'),
    stat: flag('stat'),
    exact: flag('exact'),
    json: flag('json'),
    interactive: flag('interactive'),
    concurrency: integerOption(text('concurrency'), '--concurrency', 1, MAX_BATCH_CONCURRENCY),
    socket: text('socket'),
    stateDir: text('state-dir'),
  };
}

function formatOf(value: string | undefined): FormatName {
  if (value === undefined) return 'auto';
  if ((FORMAT_NAMES as readonly string[]).includes(value)) return value as FormatName;
  throw new UsageError(`unknown format ${JSON.stringify(value)}: use one of ${FORMAT_NAMES.join(', ')}`);
}
