/**
 * Pre-images a caller asserts for `patch/apply`: `expectedSha256ByPath` (`""` = must not
 * exist) and `baseVersions` (versions from `file/read`). Both become one map of expected
 * sha256 per normalised path, checked against the snapshots the plan is built on.
 */
import { engineError, type FileSnapshot } from '../engine/index.ts';
import { normalizePatchPath } from '../engine/paths.ts';
import { sha256Hex, type Workspace } from '../workspace/workspace.ts';
import type { StructuredEdit } from '../../protocol/index.ts';
import type { PatchFailure } from './receipts.ts';

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: PatchFailure };

/** Normalised path → expected sha256, `""` for "must not exist". */
export type Expectations = ReadonlyMap<string, string>;

export interface PreconditionParams {
  readonly expectedSha256ByPath?: Readonly<Record<string, string>> | undefined;
  readonly baseVersions?: Readonly<Record<string, string>> | undefined;
  /** Whole-file writes carry their own `expectedSha256`. */
  readonly edits?: readonly StructuredEdit[] | undefined;
}

/** Resolves both kinds of precondition into expected hashes; a version already stale fails here. */
export async function collectExpectations(params: PreconditionParams, workspace: Workspace): Promise<Checked<Expectations>> {
  const expected = new Map<string, string>();
  for (const [raw, sha256] of [...Object.entries(params.expectedSha256ByPath ?? {}), ...writePins(params)]) {
    const path = normalizePatchPath(raw);
    if (!path.ok) return { ok: false, failure: { error: path.error } };
    expected.set(path.value, sha256);
  }
  for (const [raw, version] of Object.entries(params.baseVersions ?? {})) {
    const path = normalizePatchPath(raw);
    if (!path.ok) return { ok: false, failure: { error: path.error } };
    const current = await hashAtVersion(workspace, path.value, version);
    if (!current.ok) return current;
    if (!expected.has(path.value)) expected.set(path.value, current.value);
  }
  return { ok: true, value: expected };
}

function writePins(params: PreconditionParams): [string, string][] {
  const pins: [string, string][] = [];
  for (const edit of params.edits ?? []) {
    if ('expectedSha256' in edit && edit.expectedSha256 !== undefined) pins.push([edit.path, edit.expectedSha256]);
  }
  return pins;
}

/** The file's sha256 when it is still at `version`. */
async function hashAtVersion(workspace: Workspace, path: string, version: string): Promise<Checked<string>> {
  const read = await workspace.read(path);
  if (!read.ok && read.error.code === 'not_found') return stale(path, null, `${path} was read at version ${version} but no longer exists.`);
  if (!read.ok) return { ok: false, failure: { error: read.error } };
  if (read.value.version !== version) {
    return stale(path, read.value.sha256, `${path} is no longer at version ${version} (it is now at ${read.value.version}).`);
  }
  return { ok: true, value: read.value.sha256 };
}

/** Checks every expectation against the snapshots; the first contradiction is `stale_file`. */
export function checkExpectations(expected: Expectations, snapshots: ReadonlyMap<string, FileSnapshot>): Checked<void> {
  for (const [path, sha256] of expected) {
    const snapshot = snapshots.get(path);
    const current = snapshot?.kind === 'file' ? sha256Hex(snapshot.bytes) : null;
    const holds = sha256 === '' ? snapshot?.kind === 'missing' : current === sha256;
    if (holds) continue;
    const wanted = sha256 === '' ? 'not to exist' : `to have sha256 ${sha256}`;
    return stale(path, current, `${path} was expected ${wanted}, but ${describe(snapshot, current)}.`);
  }
  return { ok: true, value: undefined };
}

function describe(snapshot: FileSnapshot | undefined, current: string | null): string {
  if (current !== null) return `its sha256 is ${current}`;
  return snapshot?.kind === 'directory' ? 'it is a directory' : 'it does not exist';
}

function stale(path: string, currentSha256: string | null, message: string): { ok: false; failure: PatchFailure } {
  return { ok: false, failure: { error: engineError('stale_file', message, { path }), currentSha256 } };
}
