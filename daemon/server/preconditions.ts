/**
 * Pre-images a caller asserts for `patch/apply`: `expectedSha256ByPath` (`""` = must not
 * exist), `baseVersions` (versions from `file/read`) and the `expectedSha256` of whole-file
 * writes. They are collected per normalised path, then checked against the snapshots the
 * plan is built on — taken under the paths' locks, so what passes here is what the commit
 * then verifies on disk.
 */
import { engineError, type FileSnapshot } from '../engine/index.ts';
import { normalizePatchPath } from '../engine/paths.ts';
import { sha256Hex, versionFromSha256 } from '../workspace/workspace.ts';
import type { StructuredEdit } from '../../protocol/index.ts';
import type { PatchFailure } from './receipts.ts';

export type Checked<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: PatchFailure };

/** One assertion: a sha256 (`""` for "must not exist") or a `file/read` version. */
export type Expectation = { readonly sha256: string } | { readonly version: string };

/** Normalised path → every assertion made about it. */
export type Expectations = ReadonlyMap<string, readonly Expectation[]>;

export interface PreconditionParams {
  readonly expectedSha256ByPath?: Readonly<Record<string, string>> | undefined;
  readonly baseVersions?: Readonly<Record<string, string>> | undefined;
  /** Whole-file writes carry their own `expectedSha256`. */
  readonly edits?: readonly StructuredEdit[] | undefined;
}

/** Gathers every precondition by normalised path; a path that cannot be normalised fails here. */
export function collectExpectations(params: PreconditionParams): Checked<Expectations> {
  const expected = new Map<string, Expectation[]>();
  const pins: [string, Expectation][] = [
    ...Object.entries(params.expectedSha256ByPath ?? {}).map(([path, sha256]): [string, Expectation] => [path, { sha256 }]),
    ...writePins(params),
    ...Object.entries(params.baseVersions ?? {}).map(([path, version]): [string, Expectation] => [path, { version }]),
  ];
  for (const [raw, expectation] of pins) {
    const path = normalizePatchPath(raw);
    if (!path.ok) return { ok: false, failure: { error: path.error } };
    expected.set(path.value, [...(expected.get(path.value) ?? []), expectation]);
  }
  return { ok: true, value: expected };
}

function writePins(params: PreconditionParams): [string, Expectation][] {
  const pins: [string, Expectation][] = [];
  for (const edit of params.edits ?? []) {
    if ('expectedSha256' in edit && edit.expectedSha256 !== undefined) pins.push([edit.path, { sha256: edit.expectedSha256 }]);
  }
  return pins;
}

/** Checks every expectation against the snapshots; the first contradiction is `stale_file` with the current sha256. */
export function checkExpectations(expected: Expectations, snapshots: ReadonlyMap<string, FileSnapshot>): Checked<void> {
  for (const [path, expectations] of expected) {
    const snapshot = snapshots.get(path);
    const current = snapshot?.kind === 'file' ? sha256Hex(snapshot.bytes) : null;
    for (const expectation of expectations) {
      const broken = contradiction(path, expectation, snapshot, current);
      if (broken !== undefined) return stale(path, current, broken);
    }
  }
  return { ok: true, value: undefined };
}

/** Why `expectation` does not hold, or undefined when it does. */
function contradiction(path: string, expectation: Expectation, snapshot: FileSnapshot | undefined, current: string | null): string | undefined {
  if ('version' in expectation) {
    if (current === null) return `${path} was read at version ${expectation.version} but no longer exists.`;
    const now = versionFromSha256(current);
    return now === expectation.version ? undefined : `${path} is no longer at version ${expectation.version} (it is now at ${now}).`;
  }
  const { sha256 } = expectation;
  const holds = sha256 === '' ? snapshot?.kind === 'missing' : current === sha256;
  if (holds) return undefined;
  const wanted = sha256 === '' ? 'not to exist' : `to have sha256 ${sha256}`;
  return `${path} was expected ${wanted}, but ${describe(snapshot, current)}.`;
}

function describe(snapshot: FileSnapshot | undefined, current: string | null): string {
  if (current !== null) return `its sha256 is ${current}`;
  return snapshot?.kind === 'directory' ? 'it is a directory' : 'it does not exist';
}

/** `stale_file` naming the path and what it holds now. */
export function stale(path: string, currentSha256: string | null, message: string): { ok: false; failure: PatchFailure } {
  return { ok: false, failure: { error: engineError('stale_file', message, { path }), currentSha256 } };
}
