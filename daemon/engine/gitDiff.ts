/**
 * A diff in `git diff` format from whole contents: `diff --git` headers with `a/` `b/` prefixes,
 * file modes, `rename from/to`, `\ No newline at end of file` and git's path quoting — so
 * `git apply` reproduces the new side byte for byte. jsdiff computes the hunks (with an edit
 * cap, so two unrelated large contents cost a bounded time) and writes the git headers. A file
 * with a side that is not text (NUL bytes, or not UTF-8: a diff string cannot carry its bytes)
 * gets the `GIT binary patch` that `git diff --binary` writes (`gitBinary.ts`).
 */
import { formatPatch, structuredPatch } from 'diff/lib/patch/create.js';
import type { StructuredPatch } from 'diff';
import { gitBinaryBody } from './gitBinary.ts';
import { replaceEverything } from './receiptDiff.ts';
import { sameBytes } from './snapshots.ts';

const CONTEXT = 3;
/** Past this edit distance a file's change is shown as all removed, then all added. */
const MAX_EDIT_LENGTH = 20_000;

/** One side of a change: a path, its bytes, their text (undefined when they are not text) and its permission bits. */
export interface GitSide {
  readonly path: string;
  readonly bytes: Uint8Array;
  /** The bytes decoded, losslessly; undefined for binary (NUL bytes, or not UTF-8), which is then diffed as git diffs binary files. */
  readonly text: string | undefined;
  readonly mode: number;
}

/** A file's change; `before` null: added; `after` null: deleted; paths differing: renamed. */
export interface GitChange {
  readonly before: GitSide | null;
  readonly after: GitSide | null;
}

export function formatGitDiff(changes: readonly GitChange[]): string {
  return changes.map(formatChange).join('');
}

function formatChange({ before, after }: GitChange): string {
  if (before === null && after === null) return '';
  const oldName = before === null ? '/dev/null' : `a/${before.path}`;
  const newName = after === null ? '/dev/null' : `b/${after.path}`;
  const binary = isBinary(before) || isBinary(after);
  const oldText = before?.text ?? '';
  const newText = after?.text ?? '';
  const hunks = binary || oldText === newText ? [] : hunksBetween(oldText, newText);
  const patch: StructuredPatch = { oldFileName: oldName, newFileName: newName, oldHeader: undefined, newHeader: undefined, hunks, isGit: true };
  if (before === null) patch.isCreate = true;
  if (after === null) patch.isDelete = true;
  if (before !== null && after !== null && before.path !== after.path) patch.isRename = true;
  if (before !== null) patch.oldMode = gitMode(before.mode);
  if (after !== null) patch.newMode = gitMode(after.mode);
  if (before !== null && after !== null && patch.oldMode === patch.newMode) {
    delete patch.oldMode;
    delete patch.newMode;
  }
  const headers = formatPatch(patch);
  if (!binary || (before !== null && after !== null && sameBytes(before.bytes, after.bytes))) return headers;
  const sameMode = before !== null && after !== null && patch.oldMode === undefined ? gitMode(after.mode) : undefined;
  return headers + gitBinaryBody(before?.bytes ?? null, after?.bytes ?? null, sameMode);
}

/** Whether git diffs this side's file as binary: it is there, and is not text. */
export function isBinary(side: GitSide | null): boolean {
  return side !== null && side.text === undefined;
}

function hunksBetween(oldText: string, newText: string): StructuredPatch['hunks'] {
  const patch = structuredPatch('', '', oldText, newText, undefined, undefined, { context: CONTEXT, maxEditLength: MAX_EDIT_LENGTH });
  return patch?.hunks ?? [replaceEverything(oldText, newText)];
}

/** Git records only whether the owner may execute a file. */
export function gitMode(mode: number): string {
  return (mode & 0o100) === 0 ? '100644' : '100755';
}
