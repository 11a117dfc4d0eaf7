/** Arguments of `patchd log`, `patchd undo` and `patchd diff`: `-C DIR`, `--json`, `--state-dir`, and each one's own. */
import { parseArgs } from 'node:util';
import { UsageError } from './args.ts';
import { withLocalWorkspace, type LocalRun } from './local.ts';
import { readSettings } from './settings.ts';


export interface HistoryCommand {
  readonly directory: string;
  readonly stateDir: string | undefined;
  readonly json: boolean;
  readonly positionals: readonly string[];
  readonly since: string | undefined;
  readonly limit: number | undefined;
  readonly dryRun: boolean;
}

export function parseHistoryArgs(args: readonly string[], accepts: { readonly positionals: number; readonly flags: readonly ('since' | 'limit' | 'dry-run')[] }): HistoryCommand {
  const { values, positionals } = parseOrThrow(args);
  for (const flag of ['since', 'limit', 'dry-run'] as const) {
    if (values[flag] !== undefined && !accepts.flags.includes(flag)) throw new UsageError(`unknown option --${flag}`);
  }
  if (positionals.length !== accepts.positionals) {
    throw new UsageError(accepts.positionals === 0 ? `unexpected argument ${JSON.stringify(positionals[0])}` : 'give one TRANSACTION_ID');
  }
  return {
    directory: values.directory ?? '.',
    stateDir: values['state-dir'],
    json: values.json ?? false,
    positionals,
    since: values.since,
    limit: parseLimit(values.limit),
    dryRun: values['dry-run'] ?? false,
  };
}

function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (Number.isInteger(parsed) && parsed >= 1 && parsed <= 10_000) return parsed;
  throw new UsageError('--limit must be an integer from 1 to 10000');
}

function parseOrThrow(args: readonly string[]) {
  try {
    return parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: {
        directory: { type: 'string', short: 'C' },
        json: { type: 'boolean' },
        'state-dir': { type: 'string' },
        since: { type: 'string' },
        limit: { type: 'string', short: 'n' },
        'dry-run': { type: 'boolean' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** Runs a history command: usage errors print the usage and exit 2, other failures exit 2 with their message. */
export async function runHistoryCommand(name: string, usage: string, run: () => Promise<number>): Promise<number> {
  try {
    return await run();
  } catch (error) {
    const message = error instanceof UsageError ? `${error.message}\n${usage}` : error instanceof Error ? error.message : String(error);
    process.stderr.write(`patchd ${name}: ${message}\n`);
    return 2;
  }
}

/** Runs `work` on the command's workspace, in-process, with the state root the daemon uses. */
export function withHistoryWorkspace<T>(command: HistoryCommand, work: (run: LocalRun) => Promise<T>): Promise<T> {
  return withLocalWorkspace(command.directory, readSettings({ stateDir: command.stateDir }, 'warn'), work);
}
