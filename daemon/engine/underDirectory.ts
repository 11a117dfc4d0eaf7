/** A patch's paths taken relative to a directory of the workspace (a shell command's, or one prose names). */
import { normalizePatchPath, pathErrorAt, pathSegments } from './paths.ts';
import { fail, ok, type FilePatch, type Result } from './types.ts';

/** `files` with `directory` (as written, relative) before every path; an escape is `path_escape`, `where` saying whose directory. */
export function underDirectory(files: readonly FilePatch[], directory: string, where: string): Result<FilePatch[]> {
  if (directory === '') return ok([...files]);
  const moved: FilePatch[] = [];
  for (const file of files) {
    const path = joinPath(directory, file.path, where);
    if (!path.ok) return path;
    if (file.op !== 'rename') {
      moved.push({ ...file, path: path.value });
      continue;
    }
    const fromPath = joinPath(directory, file.fromPath, where);
    if (!fromPath.ok) return fromPath;
    moved.push({ ...file, fromPath: fromPath.value, path: path.value });
  }
  return ok(moved);
}

function joinPath(directory: string, path: string, where: string): Result<string> {
  const joined = normalizePatchPath(`${directory}/${path}`);
  return joined.ok ? joined : fail(pathErrorAt(where, `${directory}/${path}`, joined.error));
}

/**
 * `directory` as a workspace path, '' for the root itself (`cd .`, `cd sub/..`). Only for a
 * directory `underDirectory` took: an escape was refused there.
 */
export function workspaceDirectory(directory: string): string {
  return (pathSegments(directory) ?? []).join('/');
}
