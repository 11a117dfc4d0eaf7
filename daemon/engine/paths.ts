/** Lexical path rules: the engine refuses escapes before any file is looked up. */
import { engineError } from './errors.ts';
import { fail, ok, type Result } from './types.ts';

/**
 * Normalises a workspace-relative path as a patch names it: collapses `.` and `a/../b`,
 * drops duplicate slashes. Absolute paths, drive letters, backslashes, NUL and `..` that
 * climbs out of the root are `path_escape`; a path that can only name a directory (`dir/`,
 * `dir/.`) is `is_directory`, never a file called `dir`.
 */
export function normalizePatchPath(raw: string): Result<string> {
  if (isAlreadyNormal(raw)) return ok(raw);
  const escape = (why: string) => fail<string>(engineError('path_escape', `The path ${JSON.stringify(raw)} ${why}.`, { path: raw }));
  if (raw.length === 0) return fail(engineError('parse_error', 'A file path is empty.'));
  if (raw.includes('\0')) return escape('contains a NUL byte');
  if (raw.includes('\\')) return escape('contains a backslash');
  if (raw.startsWith('/') || raw.startsWith('~')) return escape('is absolute');
  if (/^[A-Za-z]:/.test(raw)) return escape('starts with a drive letter');
  const parts: string[] = [];
  for (const segment of raw.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (parts.length === 0) return escape('leaves the workspace');
      parts.pop();
    } else {
      parts.push(segment);
    }
  }
  if (parts.length === 0) return escape('names the workspace root itself');
  if (namesDirectory(raw)) {
    return fail(engineError('is_directory', `The path ${JSON.stringify(raw)} names a directory (it ends in \`/\`); patches add, change and delete files.`, { path: parts.join('/') }));
  }
  return ok(parts.join('/'));
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
