/**
 * Values a client sent, as error messages echo them back: cut to a bounded length, so that a
 * 5,000-character key or a megabyte method name costs the answer (and the log) a line, not a
 * copy of itself.
 */

/** The longest piece of a client's value an error message repeats. */
export const MAX_ECHO_CHARS = 80;

/** `text`, cut to `max` characters (never inside a surrogate pair) with `…` when it was longer. */
export function clip(text: string, max = MAX_ECHO_CHARS): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/** `value` quoted as JSON, cut like `clip`. */
export function quoteClipped(value: string | number | null): string {
  return typeof value === 'string' ? JSON.stringify(clip(value)) : String(value);
}
