/**
 * The unified diff shown in a receipt. A hunk's own lines already say what changed, so each
 * applied hunk becomes a diff hunk as is; jsdiff formats them, and diffs whole files (adds,
 * deletes) and hunks that change the final newline, where it writes the markers.
 */
// The module, not the package index, which would load every one of jsdiff's diffs and parsers.
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff/lib/patch/create.js';
import type { StructuredPatchHunk } from 'diff';
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

/**
 * Diff of two versions of one file, for text edits: jsdiff runs only over the lines between the
 * common prefix and suffix (plus context), so a small edit to a large file costs its own size.
 */
export function diffVersions(oldName: string, oldText: string, newName: string, newText: string): string {
  if (oldText === newText) return '';
  const window = changedWindow(oldText, newText);
  const oldPart = oldText.slice(window.start, oldText.length - window.suffix);
  const newPart = newText.slice(window.start, newText.length - window.suffix);
  const patch = structuredPatch(oldName, newName, oldPart, newPart, undefined, undefined, { context: CONTEXT, maxEditLength: MAX_EDIT_LENGTH });
  const hunks = patch?.hunks ?? [replaceEverything(oldPart, newPart)];
  const shifted = hunks.map((hunk) => ({ ...hunk, oldStart: hunk.oldStart + window.skippedLines, newStart: hunk.newStart + window.skippedLines }));
  return formatPatch({ oldFileName: oldName, newFileName: newName, oldHeader: undefined, newHeader: undefined, hunks: shifted }, FILE_HEADERS_ONLY);
}

interface ChangedWindow {
  /** Offset (in both texts) where the diffed part starts: a line start, CONTEXT lines before the first change. */
  readonly start: number;
  /** Characters at the end of both texts left out: whole lines, CONTEXT lines after the last change. */
  readonly suffix: number;
  readonly skippedLines: number;
}

function changedWindow(oldText: string, newText: string): ChangedWindow {
  const shortest = Math.min(oldText.length, newText.length);
  let prefix = 0;
  while (prefix < shortest && oldText.charCodeAt(prefix) === newText.charCodeAt(prefix)) prefix++;
  let start = lineStartAt(oldText, prefix);
  for (let line = 0; line < CONTEXT && start > 0; line++) start = lineStartAt(oldText, start - 1);
  let common = 0;
  while (common < shortest - start && oldText.charCodeAt(oldText.length - 1 - common) === newText.charCodeAt(newText.length - 1 - common)) common++;
  // The kept suffix starts right after a newline that is itself common to both texts.
  let end = oldText.indexOf('\n', oldText.length - common);
  end = end === -1 ? oldText.length : end + 1;
  for (let line = 0; line < CONTEXT && end < oldText.length; line++) end = nextLineStart(oldText, end);
  return { start, suffix: oldText.length - end, skippedLines: countNewlines(oldText, start) };
}

/** Where the line holding offset `at` starts. */
function lineStartAt(text: string, at: number): number {
  return at <= 0 ? 0 : text.lastIndexOf('\n', at - 1) + 1;
}

function nextLineStart(text: string, from: number): number {
  const newline = text.indexOf('\n', from);
  return newline === -1 ? text.length : newline + 1;
}

function countNewlines(text: string, end: number): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < end; at = text.indexOf('\n', at + 1)) count++;
  return count;
}

/** One hunk removing all of `oldText` and adding all of `newText`, for contents too far apart to diff cheaply. */
export function replaceEverything(oldText: string, newText: string): StructuredPatchHunk {
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
