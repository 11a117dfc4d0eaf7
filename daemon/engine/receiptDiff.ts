/**
 * The unified diff shown in a receipt: a faithful git-style diff of the old and new bytes, so
 * `git apply` of it on the old file gives the new one. Lines are shown as `git diff` shows them:
 * a CRLF line keeps its CR as content, a BOM is part of line 1, `\ No newline at end of file`
 * marks an unterminated last line. Hunks come from what the patch changed (no re-diff of whole
 * files); jsdiff diffs whole contents (adds, deletes, writes) and formats every diff.
 */
// The module, not the package index, which would load every one of jsdiff's diffs and parsers.
import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff/lib/patch/create.js';
import type { StructuredPatchHunk } from 'diff';
import { BOM, lineAt, lineCount, lineEnding, linesIn, pieceText, textWithBom, type Piece, type TextFile } from './text.ts';

const CONTEXT = 3;
/** jsdiff's edit-distance cap; past it a region is shown as all removed, then all added. */
const MAX_EDIT_LENGTH = 2_000;

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

/** Old lines `[oldFrom, oldTo)` that the new version replaces with `text`, whose lines start at new line `newFrom`. */
interface Change {
  oldFrom: number;
  oldTo: number;
  readonly newFrom: number;
  text: string;
}

const NO_NEWLINE = '\\ No newline at end of file';

/**
 * Diff of an update or rename applied by hunks, read off the new version's pieces (runs of old
 * lines copied byte for byte, and new text): what lies between two runs is a change, so nothing
 * is diffed and a small edit to a large file costs its own size. Lines are shown as git shows
 * them (everything but the LF: a CRLF line keeps its CR, the BOM a file keeps apart is line 1's),
 * so `git apply` of the diff on the old bytes gives the new bytes.
 */
export function diffPieces(oldName: string, newName: string, file: TextFile, pieces: readonly Piece[]): string {
  const { changes, newLength } = changesOf(file, pieces);
  if (changes.length === 0) return '';
  if (file.bom && (lineCount(file) === 0 || newLength === 0)) {
    // The BOM alone is a line to git (without a newline): a side that is nothing else, shown whole.
    return diffWhole(oldName, textWithBom(file), newName, textWithBom(file, pieces.map((piece) => pieceText(file, piece)).join('')));
  }
  if (file.bom) bomOnFirstLine(file, changes);
  const hunks: StructuredPatchHunk[] = [];
  for (let first = 0; first < changes.length;) {
    let last = first;
    while (last + 1 < changes.length && changes[last + 1]!.oldFrom - changes[last]!.oldTo <= 2 * CONTEXT) last++;
    hunks.push(hunkOf(file, changes, first, last + 1));
    first = last + 1;
  }
  return formatPatch({ oldFileName: oldName, newFileName: newName, oldHeader: undefined, newHeader: undefined, hunks }, FILE_HEADERS_ONLY);
}

/** The changes between the runs of `pieces`, in order and apart (at least one old line kept between two), and the new version's line count. */
function changesOf(file: TextFile, pieces: readonly Piece[]): { changes: Change[]; newLength: number } {
  const changes: Change[] = [];
  const length = lineCount(file);
  let oldAt = 0;
  let newAt = 0;
  let text = '';
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      text += piece;
      continue;
    }
    newAt = addChange(changes, oldAt, piece.from, newAt, text) + piece.to - piece.from;
    oldAt = piece.to;
    text = '';
  }
  // Text after an old last line without a newline starts with the newline that line gained: the line changed.
  if (text !== '' && oldAt === length && length > 0 && !file.finalNewline) {
    oldAt--;
    newAt--;
    text = lineBytes(file, oldAt) + text;
  }
  return { changes, newLength: addChange(changes, oldAt, length, newAt, text) };
}

/** Notes old lines `[oldFrom, oldTo)` replaced by `text` at new line `newFrom`, if that changes anything; returns the new line after it. */
function addChange(changes: Change[], oldFrom: number, oldTo: number, newFrom: number, text: string): number {
  if (oldTo === oldFrom && text === '') return newFrom;
  const last = changes[changes.length - 1];
  if (last !== undefined && last.oldTo === oldFrom) {
    last.oldTo = oldTo;
    last.text += text;
  } else {
    changes.push({ oldFrom, oldTo, newFrom, text });
  }
  return newFrom + textLines(text);
}

/**
 * Line 1 carries the BOM on both sides. A change at the top that removes lines and adds none, or
 * adds lines and removes none, moves the BOM onto or off the old line right after it, which then
 * changes too.
 */
function bomOnFirstLine(file: TextFile, changes: Change[]): void {
  const first = changes[0]!;
  if (first.oldFrom !== 0 || (first.text !== '' && first.oldTo > 0)) return;
  first.text += lineBytes(file, first.oldTo);
  first.oldTo++;
  const next = changes[1];
  if (next === undefined || next.oldFrom !== first.oldTo) return;
  first.oldTo = next.oldTo;
  first.text += next.text;
  changes.splice(1, 1);
}

/** A hunk of `changes[first, end)`, close enough to share context, as git groups them. */
function hunkOf(file: TextFile, changes: readonly Change[], first: number, end: number): StructuredPatchHunk {
  const length = lineCount(file);
  const head = changes[first]!;
  const from = Math.max(0, head.oldFrom - CONTEXT);
  const to = Math.min(length, changes[end - 1]!.oldTo + CONTEXT);
  // The hunk's old lines as git shows them (everything but the LF), decoded in one piece; the kept-apart BOM is line 1's.
  const old = linesIn(file, from, to, 'raw');
  if (from === 0 && file.bom) old[0] = BOM + old[0]!;
  const unterminated = file.finalNewline ? -1 : length - 1 - from;
  const lines: string[] = [];
  let newLines = to - from;
  let at = 0;
  for (let index = first; index < end; index++) {
    const change = changes[index]!;
    pushOld(lines, ' ', old, at, change.oldFrom - from, unterminated);
    pushOld(lines, '-', old, change.oldFrom - from, change.oldTo - from, unterminated);
    newLines += pushNew(lines, change.text, change.newFrom === 0 && file.bom) - (change.oldTo - change.oldFrom);
    at = change.oldTo - from;
  }
  pushOld(lines, ' ', old, at, to - from, unterminated);
  return { oldStart: from + 1, oldLines: to - from, newStart: from + head.newFrom - head.oldFrom + 1, newLines, lines };
}

/** Lines `[start, end)` of `old` with `prefix`; the marker after line `unterminated`. */
function pushOld(lines: string[], prefix: string, old: readonly string[], start: number, end: number, unterminated: number): void {
  for (let index = start; index < end; index++) {
    lines.push(prefix + old[index]!);
    if (index === unterminated) lines.push(NO_NEWLINE);
  }
}

/** The lines of new text as added lines (the first with the BOM, when it is the file's line 1); returns how many. */
function pushNew(lines: string[], text: string, bom: boolean): number {
  if (text === '') return 0;
  const terminated = text.endsWith('\n');
  const added = (terminated ? text.slice(0, -1) : text).split('\n');
  for (let index = 0; index < added.length; index++) lines.push(`+${index === 0 && bom ? BOM : ''}${added[index]!}`);
  if (!terminated) lines.push(NO_NEWLINE);
  return added.length;
}

/** Old line `index` with its ending, as the new version copies it. */
function lineBytes(file: TextFile, index: number): string {
  return lineAt(file, index, 'raw') + (lineEnding(file, index) === '' ? '' : '\n');
}

function textLines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return text === '' || text.endsWith('\n') ? count : count + 1;
}
