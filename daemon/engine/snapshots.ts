/** What a patch may assume about the files it names: present, absent, text; checked before planning. */
import { engineError } from './errors.ts';
import { LIMITS } from './limits.ts';
import { decodeText, type TextFile } from './text.ts';
import { fail, ok, type FileSnapshot, type Result } from './types.ts';

export type Files = ReadonlyMap<string, FileSnapshot>;

export function requireAbsent(path: string, files: Files): Result<true> {
  const snapshot = files.get(path);
  if (!snapshot || snapshot.kind === 'missing') return ok(true);
  const what = snapshot.kind === 'directory' ? 'a directory' : 'a file';
  return fail(engineError('already_exists', `${path} already exists (${what}).`, { path }));
}

/** `files` with each of `paths` that is a directory seen as free: directories a patch replaces by a file (`pathConflicts.ts`). */
export function withDirectoriesFreed(files: Files, paths: ReadonlySet<string>): Files {
  const replaced = [...paths].filter((path) => files.get(path)?.kind === 'directory');
  if (replaced.length === 0) return files;
  const view = new Map(files);
  for (const path of replaced) view.set(path, { kind: 'missing' });
  return view;
}

/** A shell's `cd <path>` must find a directory there: otherwise the shell stops, and runs nothing after `&&`. */
export function requireDirectory(path: string, files: Files): Result<true> {
  const snapshot = files.get(path);
  if (snapshot?.kind === 'directory') return ok(true);
  const found = snapshot?.kind === 'file' ? 'is a file, not a directory' : 'does not exist';
  return fail(engineError('not_found', `cd ${path}: ${path} ${found}, so a shell would stop at the cd and never run apply_patch; nothing was written. Name the files from the workspace root instead (an Add File creates missing directories).`, { path }));
}

export function requireFile(path: string, files: Files): Result<Uint8Array> {
  const snapshot = files.get(path);
  if (!snapshot || snapshot.kind === 'missing') return fail(engineError('not_found', `${path} does not exist.`, { path }));
  if (snapshot.kind === 'directory') return fail(engineError('not_found', `${path} is a directory, not a file.`, { path }));
  if (snapshot.bytes.length > LIMITS.maxFileBytes) {
    return fail(engineError('limit_exceeded', `${path} is ${snapshot.bytes.length} bytes; at most ${LIMITS.maxFileBytes} are patched.`, {
      path, limit: { name: 'maxFileBytes', max: LIMITS.maxFileBytes, actual: snapshot.bytes.length },
    }));
  }
  return ok(snapshot.bytes);
}

export function requireText(path: string, files: Files): Result<TextFile> {
  const bytes = requireFile(path, files);
  return bytes.ok ? decodeText(bytes.value, path) : bytes;
}

/** Byte-for-byte equality; four bytes at a time where both views allow it (a plan checks whole files). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let at = 0;
  if (a.byteOffset % 4 === 0 && b.byteOffset % 4 === 0) {
    const count = a.length >>> 2;
    const left = new Uint32Array(a.buffer, a.byteOffset, count);
    const right = new Uint32Array(b.buffer, b.byteOffset, count);
    for (let word = 0; word < count; word++) if (left[word] !== right[word]) return false;
    at = count * 4;
  }
  for (; at < a.length; at++) if (a[at] !== b[at]) return false;
  return true;
}
