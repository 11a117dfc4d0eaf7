/**
 * The unified diff shown in a receipt. jsdiff runs only over the regions the hunks touched
 * (plus context), so the cost follows the patch, not the file, and is capped per region.
 */
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch, type StructuredPatchHunk } from 'diff';
import type { Span } from './hunks.ts';
import type { TextFile } from './text.ts';

const CONTEXT = 3;
/** jsdiff's edit-distance cap per region; past it the region is shown as all removed, all added. */
const MAX_EDIT_LENGTH = 2_000;

export interface DiffSide {
  readonly name: string;
  readonly file: TextFile | null;
}

/** Diff of the whole content: for adds, deletes and anything without spans. */
export function diffWhole(before: DiffSide, after: DiffSide): string {
  const oldLines = before.file?.lines ?? [];
  const newLines = after.file?.lines ?? [];
  const span = { oldStart: 0, oldLength: oldLines.length, newStart: 0, newLength: newLines.length };
  return diffSpans(before, after, oldLines.length === 0 && newLines.length === 0 ? [] : [span]);
}

/** Diff of the regions the spans touched. */
export function diffSpans(before: DiffSide, after: DiffSide, spans: readonly Span[]): string {
  const hunks: StructuredPatchHunk[] = [];
  for (const region of mergeRegions(spans, before.file?.lines.length ?? 0, after.file?.lines.length ?? 0)) {
    hunks.push(...diffRegion(before.file, after.file, region));
  }
  if (hunks.length === 0) return '';
  return formatPatch({ oldFileName: before.name, newFileName: after.name, oldHeader: undefined, newHeader: undefined, hunks }, FILE_HEADERS_ONLY);
}

function mergeRegions(spans: readonly Span[], oldTotal: number, newTotal: number): Span[] {
  const regions: Span[] = [];
  for (const span of spans) {
    const oldStart = Math.max(0, span.oldStart - CONTEXT);
    const newStart = Math.max(0, span.newStart - CONTEXT);
    const oldEnd = Math.min(oldTotal, span.oldStart + span.oldLength + CONTEXT);
    const newEnd = Math.min(newTotal, span.newStart + span.newLength + CONTEXT);
    const last = regions[regions.length - 1];
    if (last && oldStart <= last.oldStart + last.oldLength) {
      regions[regions.length - 1] = { oldStart: last.oldStart, newStart: last.newStart, oldLength: oldEnd - last.oldStart, newLength: newEnd - last.newStart };
    } else {
      regions.push({ oldStart, newStart, oldLength: oldEnd - oldStart, newLength: newEnd - newStart });
    }
  }
  return regions;
}

function diffRegion(before: TextFile | null, after: TextFile | null, region: Span): StructuredPatchHunk[] {
  const oldText = sliceText(before, region.oldStart, region.oldLength);
  const newText = sliceText(after, region.newStart, region.newLength);
  const patch = structuredPatch('', '', oldText, newText, undefined, undefined, { context: CONTEXT, maxEditLength: MAX_EDIT_LENGTH });
  const hunks = patch?.hunks ?? [replaceAll(oldText, newText)];
  return hunks.map((hunk) => ({
    ...hunk,
    oldStart: hunk.oldStart + region.oldStart,
    newStart: hunk.newStart + region.newStart,
  }));
}

function sliceText(file: TextFile | null, start: number, length: number): string {
  if (!file || length === 0) return '';
  const lines = file.lines.slice(start, start + length);
  const reachesEnd = start + length === file.lines.length;
  return lines.join('\n') + (reachesEnd && !file.finalNewline ? '' : '\n');
}

function replaceAll(oldText: string, newText: string): StructuredPatchHunk {
  const oldLines = oldText === '' ? [] : oldText.replace(/\n$/, '').split('\n');
  const newLines = newText === '' ? [] : newText.replace(/\n$/, '').split('\n');
  return {
    oldStart: oldLines.length === 0 ? 0 : 1,
    oldLines: oldLines.length,
    newStart: newLines.length === 0 ? 0 : 1,
    newLines: newLines.length,
    lines: [...oldLines.map((line) => `-${line}`), ...newLines.map((line) => `+${line}`)],
  };
}
