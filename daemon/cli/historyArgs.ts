/** Arguments of `patchd log`, `patchd undo` and `patchd diff`: `-C DIR`, `--json`, `--state-dir`, `--help`, and each one's own. */
import { HELP_OPTION, integerOption, parseCommandArgs, UsageError, type OptionSpecs } from './args.ts';
import { commandHelp } from './help.ts';
import { withLocalWorkspace, type LocalRun } from './local.ts';
import { readSettings } from './settings.ts';

/** One history command: its usage line, what it does, how many operands it takes and its own options. */
export interface HistorySpec {
  readonly name: string;
  readonly usage: string;
  readonly about: string;
  readonly positionals: number;
  readonly options: OptionSpecs;
}

export interface HistoryCommand {
  readonly directory: string;
  readonly stateDir: string | undefined;
  readonly json: boolean;
  readonly positionals: readonly string[];
  readonly since: string | undefined;
  readonly limit: number | undefined;
  readonly dryRun: boolean;
}

const SHARED_OPTIONS: OptionSpecs = {
  directory: { type: 'string', short: 'C', value: 'DIR', help: 'the workspace (default: the current directory)' },
  json: { type: 'boolean', help: 'print JSON instead of text' },
  'state-dir': { type: 'string', value: 'DIR', help: 'state root (undo records, journals, trash); also $PATCHD_STATE_DIR' },
  ...HELP_OPTION,
};

/** Runs a history command: `--help` prints its help and exits 0; usage errors print the usage and exit 2, other failures exit 2 with their message. */
export async function runHistoryCommand(spec: HistorySpec, args: readonly string[], run: (command: HistoryCommand) => Promise<number>): Promise<number> {
  const options = { ...spec.options, ...SHARED_OPTIONS };
  try {
    const { values, positionals } = parseCommandArgs(args, options);
    if (values.help === true) {
      process.stdout.write(commandHelp(spec.usage, spec.about, options));
      return 0;
    }
    if (positionals.length !== spec.positionals) {
      throw new UsageError(spec.positionals === 0 ? `unexpected argument ${JSON.stringify(positionals[0])}` : 'give one TRANSACTION_ID');
    }
    const text = (name: string) => (typeof values[name] === 'string' ? values[name] : undefined);
    return await run({
      directory: text('directory') ?? '.',
      stateDir: text('state-dir'),
      json: values.json === true,
      positionals,
      since: text('since'),
      limit: integerOption(text('limit'), '--limit', 1, 10_000),
      dryRun: values['dry-run'] === true,
    });
  } catch (error) {
    const message = error instanceof UsageError ? `${error.message}\n${spec.usage}` : error instanceof Error ? error.message : String(error);
    process.stderr.write(`patchd ${spec.name}: ${message}\n`);
    return 2;
  }
}

/** Runs `work` on the command's workspace, in-process, with the state root the daemon uses. */
export function withHistoryWorkspace<T>(command: HistoryCommand, work: (run: LocalRun) => Promise<T>): Promise<T> {
  return withLocalWorkspace(command.directory, readSettings({ stateDir: command.stateDir }, 'warn'), work);
}
