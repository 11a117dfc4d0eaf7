/**
 * A CR inside a line (not before its LF) is content (DESIGN, Line endings, rule 5), so a patch
 * written without CRs — a model's, or a diff whose CRs were stripped — cannot match such lines.
 * When the patch would be found in the file with those CRs left out, that is the reason it
 * failed, and the error says so: retrying the same text cannot work, copying the lines with
 * their CRs can.
 *
 * Such a patch is never taken for `already_applied` either. Its old lines may be missing only
 * for want of the CRs, while its new lines are found (a blank line against a lone CR, at a tier
 * that ignores whitespace): "already applied" would then claim a change that never happened.
 */
import { engineError, type EngineError } from './errors.ts';
import { encodeText, textWithBom } from './text.ts';
import { requireText, type Files } from './snapshots.ts';
import type { FilePatch, PlannedFile, Result } from './types.ts';

const LONE_CRS = /\r(?!\n)/g;

/** For a patch that `missesLoneCarriageReturns`: a `context_not_found` that names the lone CRs as the cause, or undefined when they are not it. */
export function loneCarriageReturnError(
  filePatch: FilePatch,
  files: Files,
  failure: EngineError,
  planFile: (filePatch: FilePatch, files: Files) => Result<PlannedFile>,
): EngineError | undefined {
  if (failure.code !== 'context_not_found') return undefined;
  const path = filePatch.op === 'rename' ? filePatch.fromPath : filePatch.path;
  const file = requireText(path, files);
  if (!file.ok) return undefined;
  const withoutLoneCrs = textWithBom(file.value, file.value.text.replace(LONE_CRS, ''));
  const planned = planFile(filePatch, new Map([...files, [path, { kind: 'file', bytes: encodeText(withoutLoneCrs) }]]));
  if (!planned.ok && planned.error.code !== 'ambiguous_context') return undefined;
  const why = `${path} has carriage returns inside its lines (CRs not before a line feed), and the patch has none; without those CRs its lines `
    + 'would be found. They are content: copy the lines with their CRs (a byte-exact git diff keeps them).';
  const { path: failedPath, hunkIndex, nearest, limit } = failure;
  return engineError('context_not_found', `${failure.message} ${why}`, { path: failedPath, hunkIndex, nearest, limit });
}

/** A file the patch names (either side of a rename, which a reverse reads) has CRs inside its lines, and the patch has no CR at all. */
export function missesLoneCarriageReturns(filePatch: FilePatch, files: Files): boolean {
  if (carriesCr(filePatch)) return false;
  const paths = filePatch.op === 'rename' ? [filePatch.fromPath, filePatch.path] : [filePatch.path];
  return paths.some((path) => {
    const file = requireText(path, files);
    return file.ok && /\r(?!\n)/.test(file.value.text);
  });
}

function carriesCr(filePatch: FilePatch): boolean {
  switch (filePatch.op) {
    case 'update':
    case 'rename':
    case 'delete':
      return filePatch.hunks.some((hunk) => hunk.lines.some((line) => line.text.includes('\r')));
    case 'edit':
      return filePatch.edits.some((edit) => (edit.kind === 'replace' ? edit.search + edit.replace : edit.text).includes('\r'));
    case 'add':
    case 'write':
      return true;
  }
}
