/**
 * Command-line arguments of every subcommand, read one way: each option is declared once with
 * its help line, and every mistake (unknown option, missing value, stray operand) is a
 * {@link UsageError} with one plain sentence — never the parser's own wording.
 */
import { parseArgs } from 'node:util';

/** Bad arguments or settings: the CLI prints the message and the usage, and exits 2. */
export class UsageError extends Error {}

export interface OptionSpec {
  readonly type: 'boolean' | 'string';
  readonly short?: string;
  /** The value's placeholder in help (`DIR`, `N`); string options only. */
  readonly value?: string;
  readonly help: string;
  /** Other spellings of the same option: a letter is a short one (`-d`), a word a long one (`--silent`). */
  readonly also?: readonly string[];
}

export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

export interface ParsedArgs {
  readonly values: Readonly<Record<string, string | boolean | undefined>>;
  readonly positionals: readonly string[];
}

/** Every command takes `-h`/`--help`. */
export const HELP_OPTION: OptionSpecs = { help: { type: 'boolean', short: 'h', help: 'show this help and exit' } };

/**
 * `foreign`: options of other tools (`git apply`, GNU `patch`) that this command does not take,
 * keyed by name without dashes, with the sentence that says why (said after "unknown option").
 */
export function parseCommandArgs(args: readonly string[], specs: OptionSpecs, foreign: Readonly<Record<string, string>> = {}): ParsedArgs {
  const options: Record<string, { type: 'boolean' | 'string'; short?: string }> = {};
  const canonical = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) {
    options[name] = spec.short === undefined ? { type: spec.type } : { type: spec.type, short: spec.short };
    canonical.set(name, name);
    for (const alias of spec.also ?? []) {
      // A short alias needs an option name of its own; no long option is spelled with a space.
      const key = alias.length === 1 ? `${name} ${alias}` : alias;
      options[key] = alias.length === 1 ? { type: spec.type, short: alias } : { type: spec.type };
      canonical.set(key, name);
    }
  }
  const { tokens } = parseArgs({ args: [...args], options, allowPositionals: true, strict: false, tokens: true });
  const values: Record<string, string | boolean | undefined> = {};
  const positionals: string[] = [];
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const name = canonical.get(token.name);
    if (name === undefined) {
      const why = Object.hasOwn(foreign, token.name) ? `: ${foreign[token.name]}` : '';
      throw new UsageError(`unknown option ${token.rawName}${why}`);
    }
    values[name] = optionValue(specs[name]!, token.rawName, token.value, token.inlineValue === true);
  }
  return { values, positionals };
}

function optionValue(spec: OptionSpec, rawName: string, value: string | undefined, inline: boolean): string | boolean {
  if (spec.type === 'boolean') {
    if (value !== undefined) throw new UsageError(`${rawName} takes no value`);
    return true;
  }
  // `-C --dry-run`: the user forgot the value, the next option is not it. `-p -1` gave one, which its range check refuses.
  const looksLikeOption = !inline && value !== undefined && value.startsWith('-') && value !== '-' && !(spec.value === 'N' && /^-\d+$/.test(value));
  if (value === undefined || looksLikeOption) throw new UsageError(`${rawName} needs a value (${spec.value ?? 'VALUE'})`);
  if (value === '') throw new UsageError(`${rawName} needs a non-empty value`);
  return value;
}

/** A whole number from `min` to `max`, or a usage error naming the option. */
export function integerOption(value: string | undefined, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const parsed = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (Number.isSafeInteger(parsed) && parsed >= min && parsed <= max) return parsed;
  const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`;
  throw new UsageError(`${name} must be a whole number ${range} (got ${JSON.stringify(value)})`);
}

/** The options block of a command's help: one aligned line per option. */
export function optionsHelp(specs: OptionSpecs): string {
  const names = Object.entries(specs).map(([name, spec]) => {
    const spellings = [spec.short ?? [], name, spec.also ?? []].flat();
    const shorts = spellings.filter((spelling) => spelling.length === 1).map((short) => `-${short}, `).join('');
    const longs = spellings.filter((spelling) => spelling.length > 1).map((long) => `--${long}`).join(', ');
    return `${shorts === '' ? '    ' : shorts}${longs}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`;
  });
  const width = Math.max(...names.map((name) => name.length));
  return Object.values(specs).map((spec, index) => `  ${names[index]!.padEnd(width)}  ${spec.help}`).join('\n');
}
