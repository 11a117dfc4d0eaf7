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

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}
