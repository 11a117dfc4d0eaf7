/** Structured logs: one JSON object per line on stderr (stdout is the wire). */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Readonly<Record<string, unknown>>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

function parseLevel(value: string | undefined): LogLevel {
  return value !== undefined && value in RANK ? (value as LogLevel) : 'info';
}

/** A logger writing JSON lines; the level defaults to `$PATCHD_LOG_LEVEL`, else `info`. */
export function createLogger(output: NodeJS.WritableStream = process.stderr, level = parseLevel(process.env.PATCHD_LOG_LEVEL)): Logger {
  const write = (at: LogLevel) => (message: string, fields: LogFields = {}) => {
    if (RANK[at] < RANK[level]) return;
    output.write(`${JSON.stringify({ time: new Date().toISOString(), level: at, msg: message, ...fields })}\n`);
  };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}

/** Fields describing a caught value, with the stack kept for the log (never for the wire). */
export function describeError(error: unknown): LogFields {
  if (error instanceof Error) return { error: error.message, name: error.name, stack: error.stack };
  return { error: String(error) };
}
