/** Lexical path rules: the engine refuses escapes before any file is looked up. */
import { engineError, type EngineError } from './errors.ts';
import { LIMITS } from './limits.ts';
import { fail, ok, type Result } from './types.ts';

/** How much of an overlong path a message shows. */
const SHOWN_PATH_CHARS = 80;

/**
 * Normalises a workspace-relative path as a patch names it: collapses `.` and `a/../b`,
 * drops duplicate slashes. Absolute paths, drive letters, backslashes, NUL and `..` that
 * climbs out of the root are `path_escape`; a path that can only name a directory (`dir/`,
 * `dir/.`) is `is_directory`, never a file called `dir`. A path still longer than
 * `maxPathChars` once normalised is `limit_exceeded`, and its error names no path: no receipt
 * could carry it (nor does any other error carry so long a name, see `engineError`).
 */
export function normalizePatchPath(raw: string): Result<string> {
  const path = isAlreadyNormal(raw) ? ok(raw) : applyPathRules(raw);
  return path.ok && path.value.length > LIMITS.maxPathChars ? fail(pathTooLong(path.value)) : path;
}

function applyPathRules(raw: string): Result<string> {
  const escape = (why: string) => fail<string>(engineError('path_escape', `The path ${quoted(raw)} ${why}.`, { path: raw }));
  if (raw.length === 0) return fail(engineError('parse_error', 'A file path is empty.'));
  if (raw.includes('\0')) return escape('contains a NUL byte');
  if (raw.includes('\\')) return escape('contains a backslash');
  if (raw.startsWith('/') || raw.startsWith('~')) return escape('is absolute');
  if (/^[A-Za-z]:/.test(raw)) return escape('starts with a drive letter');
  const parts = pathSegments(raw);
  if (parts === undefined) return escape('leaves the workspace');
  if (parts.length === 0) return escape('names the workspace root itself');
  if (namesDirectory(raw)) {
    return fail(engineError('is_directory', `The path ${quoted(raw)} names a directory (it ends in \`/\`); patches add, change and delete files.`, { path: parts.join('/') }));
  }
  return ok(parts.join('/'));
}

/**
 * The segments a relative `path` names once empty and `.` segments are dropped and `a/..`
 * collapsed: none for the directory it starts from; undefined when a `..` climbs above it.
 */
export function pathSegments(path: string): string[] | undefined {
  const parts: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment !== '..') parts.push(segment);
    else if (parts.pop() === undefined) return undefined;
  }
  return parts;
}

/** The path as a message quotes it: whole, unless it is longer than any path patchd accepts. */
function quoted(path: string): string {
  return JSON.stringify(path.length > LIMITS.maxPathChars ? `${path.slice(0, SHOWN_PATH_CHARS)}…` : path);
}

function pathTooLong(path: string): EngineError {
  const max = LIMITS.maxPathChars;
  return engineError('limit_exceeded', `A file path is ${path.length} characters long; at most ${max} are accepted (${quoted(path)}). Name a file with a shorter path.`, {
    limit: { name: 'maxPathChars', max, actual: path.length },
  });
}

/**
 * `error`, from normalising `raw`, told `where` (a patch line, an operation): it names `raw` as
 * written, unless it is a path too long to name.
 */
export function pathErrorAt(where: string, raw: string, error: EngineError): EngineError {
  const path = error.code === 'limit_exceeded' ? undefined : raw;
  return engineError(error.code, `${where}: ${error.message}`, { path, limit: error.limit });
}

const SLASH = 0x2f;
const BACKSLASH = 0x5c;
const DOT = 0x2e;
const TILDE = 0x7e;
const COLON = 0x3a;

/**
 * The rules above would return `raw` itself: relative, no NUL or backslash, no empty, `.` or
 * `..` component, nothing that looks like a drive letter. One pass and no allocation, for the
 * paths the daemon checks several times per patch.
 */
function isAlreadyNormal(raw: string): boolean {
  if (raw.length === 0) return false;
  const first = raw.charCodeAt(0);
  if (first === SLASH || first === TILDE || raw.charCodeAt(1) === COLON) return false;
  let start = 0;
  for (let index = 0; index <= raw.length; index++) {
    const code = index === raw.length ? SLASH : raw.charCodeAt(index);
    if (code === 0 || code === BACKSLASH) return false;
    if (code !== SLASH) continue;
    const length = index - start;
    if (length === 0) return false;
    if (raw.charCodeAt(start) === DOT && (length === 1 || (length === 2 && raw.charCodeAt(start + 1) === DOT))) return false;
    start = index + 1;
  }
  return true;
}

function namesDirectory(raw: string): boolean {
  const last = raw.slice(raw.lastIndexOf('/') + 1);
  return last === '' || last === '.' || last === '..';
}
