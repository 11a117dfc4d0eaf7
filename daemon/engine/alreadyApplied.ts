/**
 * A patch that failed may simply be there already: applied before, or written backwards (old
 * and new swapped). GNU patch says "Reversed (or previously applied) patch detected"; patchd
 * says `already_applied` instead of a misleading `context_not_found`, `already_exists` or
 * `not_found`. Asked only after the normal plan of a file failed, so it never changes a
 * successful apply.
 *
 * The test is the reverse patch: its old side is the patch's new side. A file whose update
 * reverse-applies, an add whose file already holds exactly the content, a delete (with its
 * content) of a file that is gone, a rename whose source is gone and whose target reverse-applies,
 * SEARCH/REPLACE blocks and str_replace edits whose replacements are found where their searches
 * are not (the edits undone in reverse order apply), edits that create a file holding exactly
 * their content. A reverse with nothing to find proves nothing: a hunk that only removes lines,
 * without context, or an edit that only deletes text (see `editsUndo`).
 */
import { alreadyThere, type EngineError } from './errors.ts';
import { applyHunks, sideLines } from './hunks.ts';
import { reverseHunks, swappedBlobs } from './reverse.ts';
import { requireText, sameBytes, type Files } from './snapshots.ts';
import type { LineTier } from './tiers.ts';
import type { FilePatch, FileSnapshot, Hunk, PlannedFile, Result, TextEdit } from './types.ts';

/** The failures that may mean "already there". */
export const REFINED_CODES: ReadonlySet<string> = new Set(['context_not_found', 'already_exists', 'not_found', 'already_applied']);

/** The `already_applied` error for a file patch whose plan failed with `failure`, or undefined when its change is not there. */
export function alreadyAppliedError(
  filePatch: FilePatch,
  files: Files,
  tiers: readonly LineTier[],
  failure: EngineError,
  planFile: (filePatch: FilePatch, files: Files) => Result<PlannedFile>,
): EngineError | undefined {
  if (!REFINED_CODES.has(failure.code)) return undefined;
  if (failure.code === 'already_applied') return failure;
  const present = isPresent(filePatch, files, tiers, planFile);
  return present ? alreadyThere(filePatch.path, present) : undefined;
}

/** Why the file patch's change is already in place, or undefined when it is not. */
function isPresent(filePatch: FilePatch, files: Files, tiers: readonly LineTier[], planFile: (filePatch: FilePatch, files: Files) => Result<PlannedFile>): string | undefined {
  switch (filePatch.op) {
    case 'update':
      return reverseApplies(filePatch.path, filePatch.hunks, files, tiers)
        ? `${filePatch.path} already has the patch's new lines and not its old ones.`
        : undefined;
    case 'add':
      return holdsAddedContent(filePatch, files, planFile) ? `${filePatch.path} already exists with exactly the content the patch adds.` : undefined;
    case 'delete':
      return filePatch.hunks.length > 0 && isMissing(files.get(filePatch.path)) ? `${filePatch.path}, which the patch deletes, does not exist.` : undefined;
    case 'rename': {
      if (!isMissing(files.get(filePatch.fromPath)) || isMissing(files.get(filePatch.path))) return undefined;
      const edited = filePatch.hunks.length === 0 || reverseApplies(filePatch.path, filePatch.hunks, files, tiers);
      return edited ? `${filePatch.fromPath} is already gone and ${filePatch.path}, where the patch renames it, holds its new content.` : undefined;
    }
    case 'edit':
      if (createsFile(filePatch.edits)) {
        return holdsAddedContent(filePatch, files, planFile) ? `${filePatch.path} already exists with exactly the content the edits create.` : undefined;
      }
      return editsUndo(filePatch.path, filePatch.edits, files, planFile)
        ? `${filePatch.path} already has the new text of every edit and not the old text.`
        : undefined;
    case 'write':
      return undefined;
  }
}

/** The first edit has an empty search: it creates the file (edits.ts). */
function createsFile(edits: readonly TextEdit[]): boolean {
  const first = edits[0];
  return first?.kind === 'replace' && first.search === '';
}

/**
 * Whether the edits are already in the file. Only a replacement with text on both sides can show
 * it (DESIGN: its new side is present, its old side is not): those, undone (replacement → search)
 * in reverse order, must apply, and there must be at least one. A pure deletion (empty new text)
 * has no new side to find: its text being absent may mean it was never there, so alone it proves
 * nothing and stays `context_not_found`; beside proving edits it must merely not contradict them
 * (its text is absent). An insert has no old side: its text must be present. Deleting with
 * surrounding text (`a b c` → `a c`) is a replacement with both sides, and proves it.
 */
function editsUndo(path: string, edits: readonly TextEdit[], files: Files, planFile: (filePatch: FilePatch, files: Files) => Result<PlannedFile>): boolean {
  const undone: TextEdit[] = [];
  for (const edit of edits) {
    if (edit.kind === 'replace' && edit.search !== '' && edit.replace !== '') undone.unshift({ ...edit, search: edit.replace, replace: edit.search });
    else if (!agrees(path, edit, files, planFile)) return false;
  }
  return undone.length > 0 && planFile({ op: 'edit', path, edits: undone }, files).ok;
}

/** A deletion whose text is not in the file, or an insert whose text is. */
function agrees(path: string, edit: TextEdit, files: Files, planFile: (filePatch: FilePatch, files: Files) => Result<PlannedFile>): boolean {
  const text = edit.kind === 'insert' ? edit.text : edit.search;
  if (text === '') return edit.kind === 'insert';
  const probe: TextEdit = edit.kind === 'insert' ? { kind: 'replace', search: text, replace: text, relativeIndent: false } : { ...edit, replace: text };
  const found = planFile({ op: 'edit', path, edits: [probe] }, files);
  const present = found.ok || found.error.code === 'ambiguous_context';
  return edit.kind === 'insert' ? present : !present && found.error.code === 'context_not_found';
}

/**
 * Whether the hunks are already in the file: reversed, those with something to find apply. A hunk
 * that only removes lines, without context, has nothing to find (as a pure deletion edit): alone
 * it proves nothing; beside proving hunks it must agree, its lines absent from the file. Reversed,
 * each hunk's line hint is where it sits in the patched file, as for `-R`: a hint counts (hunks.ts).
 */
function reverseApplies(path: string, hunks: readonly Hunk[], files: Files, tiers: readonly LineTier[]): boolean {
  const reversed = reverseHunks(hunks);
  const proving = reversed.filter((_, index) => !onlyRemoves(hunks[index]!));
  if (proving.length === 0) return false;
  const source = requireText(path, files);
  if (!source.ok) return false;
  const absent = (hunk: Hunk) => {
    const found = applyHunks(source.value, [hunk], path, tiers);
    return !found.ok && found.error.code === 'context_not_found';
  };
  return hunks.filter(onlyRemoves).every(absent) && applyHunks(source.value, proving, path, tiers).ok;
}

/** The add planned onto a free path makes exactly the bytes the file already holds. */
function holdsAddedContent(filePatch: FilePatch, files: Files, planFile: (filePatch: FilePatch, files: Files) => Result<PlannedFile>): boolean {
  const existing = files.get(filePatch.path);
  if (existing?.kind !== 'file') return false;
  const planned = planFile(filePatch, new Map([...files, [filePatch.path, { kind: 'missing' }]]));
  return planned.ok && planned.value.after !== null && sameBytes(planned.value.after, existing.bytes);
}

/**
 * The file patch that undoes `filePatch`, for checking whether a series is already applied. Adds
 * undo as deletes and deletes as adds of their old lines; only as strict as that check needs.
 */
export function reversedFilePatch(filePatch: FilePatch): FilePatch | undefined {
  switch (filePatch.op) {
    case 'update': return { op: 'update', path: filePatch.path, hunks: reverseHunks(filePatch.hunks), ...swappedBlobs(filePatch) };
    case 'rename': return { op: 'rename', fromPath: filePatch.path, path: filePatch.fromPath, hunks: reverseHunks(filePatch.hunks), ...swappedBlobs(filePatch) };
    case 'add': return { op: 'delete', path: filePatch.path, hunks: [] };
    case 'delete': return { op: 'add', path: filePatch.path, content: oldContent(filePatch.hunks) };
    case 'edit':
    case 'write':
      return undefined;
  }
}

function oldContent(hunks: readonly Hunk[]): string {
  const lines = hunks.flatMap((hunk) => sideLines(hunk, 'old'));
  const lacksNewline = hunks.some((hunk) => hunk.finalNewline?.old === false);
  return lines.length === 0 ? '' : lines.join('\n') + (lacksNewline ? '' : '\n');
}

/** Reversed, the hunk only adds lines: it applies anywhere, so it shows nothing. */
function onlyRemoves(hunk: Hunk): boolean {
  return hunk.lines.every((line) => line.kind === 'remove');
}

function isMissing(snapshot: FileSnapshot | undefined): boolean {
  return snapshot === undefined || snapshot.kind === 'missing';
}
