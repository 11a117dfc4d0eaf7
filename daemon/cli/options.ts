/** `patchd apply` arguments: one patch (`PATCHFILE|-`) or a batch (`--batch PATH…`). */
import { parseArgs } from 'node:util';
import { FormatNameSchema, MAX_BATCH_CONCURRENCY, type FormatName } from '../../protocol/index.ts';

/** Bad arguments: the CLI prints the message and the usage, and exits 2. */
export class UsageError extends Error {}

export interface ApplyCommand {
  /** PATCHFILE (`-`: stdin) for one patch; files and directories with `--batch`. */
  readonly sources: readonly string[];
  readonly batch: boolean;
  readonly directory: string;
  readonly format: FormatName;
  readonly dryRun: boolean;
  readonly exact: boolean;
  readonly json: boolean;
  readonly concurrency: number | undefined;
  readonly stateDir: string | undefined;
}

export function parseApplyArgs(args: readonly string[]): ApplyCommand {
  const { values, positionals } = parseOrThrow(args);
  const batch = values.batch ?? false;
  if (!batch && positionals.length > 1) throw new UsageError('give at most one PATCHFILE (or use --batch)');
  if (batch && positionals.length === 0) throw new UsageError('--batch needs at least one file or directory');
  const format = FormatNameSchema.safeParse(values.format ?? 'auto');
  if (!format.success) throw new UsageError(`unknown format ${JSON.stringify(values.format)}`);
  return {
    sources: positionals.length === 0 ? ['-'] : positionals,
    batch,
    directory: values.directory ?? '.',
    format: format.data,
    dryRun: values['dry-run'] ?? false,
    exact: values.exact ?? false,
    json: values.json ?? false,
    concurrency: parseConcurrency(values.concurrency),
    stateDir: values['state-dir'],
  };
}

function parseConcurrency(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (Number.isInteger(parsed) && parsed >= 1 && parsed <= MAX_BATCH_CONCURRENCY) return parsed;
  throw new UsageError(`--concurrency must be an integer from 1 to ${MAX_BATCH_CONCURRENCY}`);
}

function parseOrThrow(args: readonly string[]) {
  try {
    return parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: {
        directory: { type: 'string', short: 'C' },
        format: { type: 'string' },
        'dry-run': { type: 'boolean' },
        exact: { type: 'boolean' },
        json: { type: 'boolean' },
        batch: { type: 'boolean' },
        concurrency: { type: 'string' },
        'state-dir': { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}
