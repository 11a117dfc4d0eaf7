/**
 * The unified diff shown in a receipt. A hunk's own lines already say what changed, so each
 * applied hunk becomes a diff hunk as is; jsdiff formats them, and diffs whole files (adds,
 * deletes) and hunks that change the final newline, where it writes the markers.
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatchHunk } from 'diff';
import type { AppliedEdit } from './hunks.ts';

const CONTEXT = 3;
/** jsdiff's edit-distance cap; past it a region is shown as all removed, then all added. */
const MAX_EDIT_LENGTH = 2_000;

export interface DiffSide {
  readonly name: string;
  readonly lines: number;
  readonly finalNewline: boolean;
}

/** Diff of two whole contents: adds, deletes, whole-file writes. */
export function diffWhole(oldName: string, oldText: string, newName: string, newText: string): string {
  if (oldText === newText) return '';
  const patch = structuredPatch(oldName, newName, oldText, newText, undefined, undefined, { context: CONTEXT, maxEditLength: MAX_EDIT_LENGTH })
    ?? { oldFileName: oldName, newFileName: newName, oldHeader: undefined, newHeader: undefined, hunks: [replaceEverything(oldText, newText)] };
  return formatPatch(patch, FILE_HEADERS_ONLY);
}

/** One hunk removing all of `oldText` and adding all of `newText`, for contents too far apart to diff cheaply. */
function replaceEverything(oldText: string, newText: string): StructuredPatchHunk {
  const removed = structuredPatch('', '', oldText, '').hunks[0];
  const added = structuredPatch('', '', '', newText).hunks[0];
  return {
    oldStart: 1, oldLines: removed?.oldLines ?? 0, newStart: 1, newLines: added?.newLines ?? 0,
    lines: [...(removed?.lines ?? []), ...(added?.lines ?? [])],
  };
}

/** Diff of the applied hunks of an update or rename. */
export function diffEdits(before: DiffSide, after: DiffSide, edits: readonly AppliedEdit[]): string {
  const hunks: StructuredPatchHunk[] = [];
  for (const edit of edits) {
    if (!edit.changed) continue;
    const touchesMissingNewline = (edit.oldStart + edit.oldLines.length === before.lines && !before.finalNewline)
      || (edit.newStart + edit.newLines.length === after.lines && !after.finalNewline);
    hunks.push(...(touchesMissingNewline ? diffWithMarkers(edit, before, after) : [hunkOf(edit)]));
  }
  if (hunks.length === 0) return '';
  return formatPatch({ oldFileName: before.name, newFileName: after.name, oldHeader: undefined, newHeader: undefined, hunks }, FILE_HEADERS_ONLY);
}

function hunkOf(edit: AppliedEdit): StructuredPatchHunk {
  return { oldStart: edit.oldStart + 1, oldLines: edit.oldLines.length, newStart: edit.newStart + 1, newLines: edit.newLines.length, lines: [...edit.diffLines] };
}

function diffWithMarkers(edit: AppliedEdit, before: DiffSide, after: DiffSide): StructuredPatchHunk[] {
  const oldText = joinSide(edit.oldLines, edit.oldStart + edit.oldLines.length === before.lines && !before.finalNewline);
  const newText = joinSide(edit.newLines, edit.newStart + edit.newLines.length === after.lines && !after.finalNewline);
  const patch = structuredPatch('', '', oldText, newText, undefined, undefined, { context: CONTEXT, maxEditLength: MAX_EDIT_LENGTH });
  if (!patch) return [hunkOf(edit)];
  return patch.hunks.map((hunk) => ({ ...hunk, oldStart: hunk.oldStart + edit.oldStart, newStart: hunk.newStart + edit.newStart }));
}

function joinSide(lines: readonly string[], missingNewline: boolean): string {
  if (lines.length === 0) return '';
  return lines.join('\n') + (missingNewline ? '' : '\n');
}
