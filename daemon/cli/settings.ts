/**
 * The environment settings every command reads, validated the same way everywhere: a value
 * that makes no sense is a usage error (exit 2), never silently replaced by a default.
 */
import type { LogLevel } from '../server/logger.ts';
import { integerOption, UsageError } from './args.ts';
import { nonEmpty, resolveStateRoot } from './stateRoot.ts';

export const DEFAULT_TASK_TIMEOUT_MS = 30_000;
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

export interface Settings {
  /** The matcher's per-task time limit in the daemon's worker pool. */
  readonly taskTimeoutMs: number;
  readonly logLevel: LogLevel;
  /** See `stateRoot.ts`. */
  readonly stateRoot: string;
}

/** What the command line said; a flag wins over its variable. */
export interface SettingFlags {
  readonly taskTimeoutMs?: string | undefined;
  readonly stateDir?: string | undefined;
}

export function readSettings(flags: SettingFlags, defaultLogLevel: LogLevel, env: NodeJS.ProcessEnv = process.env): Settings {
  const timeout = flags.taskTimeoutMs === undefined
    ? integerOption(nonEmpty(env.PATCHD_TASK_TIMEOUT_MS), 'PATCHD_TASK_TIMEOUT_MS', 1)
    : integerOption(flags.taskTimeoutMs, '--task-timeout-ms', 1);
  return {
    taskTimeoutMs: timeout ?? DEFAULT_TASK_TIMEOUT_MS,
    logLevel: logLevelFrom(nonEmpty(env.PATCHD_LOG_LEVEL)) ?? defaultLogLevel,
    stateRoot: resolveStateRoot(flags.stateDir, env),
  };
}

function logLevelFrom(value: string | undefined): LogLevel | undefined {
  if (value === undefined || (LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel | undefined;
  throw new UsageError(`PATCHD_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got ${JSON.stringify(value)})`);
}

/** The environment block of every command's help. */
export const ENVIRONMENT_HELP = `Environment
  PATCHD_STATE_DIR        the state root, like --state-dir (default: $XDG_STATE_HOME/patchd,
                          else ~/.local/state/patchd); one folder per workspace holds the
                          journals of in-flight commits and the trash of deleted files
  PATCHD_TASK_TIMEOUT_MS  serve: per-task time limit for the matcher, a whole number of
                          milliseconds (default ${DEFAULT_TASK_TIMEOUT_MS})
  PATCHD_LOG_LEVEL        debug, info, warn or error: JSON log lines on stderr at or above
                          it (default: info for serve, warn otherwise)
  NO_COLOR                set (non-empty) to turn colour off
A bad value is a usage error (exit 2).`;
