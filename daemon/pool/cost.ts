/**
 * Which engine work is cheap enough for the main thread. A worker hop costs a structured clone
 * each way and a thread wake-up — more than parsing and planning a typical patch — but work on
 * the main thread has no time limit and holds up every other request, so each bound is set by
 * the WORST input under it, measured (2-core machine, loaded), not by the typical one.
 *
 * Parsing is close to linear in the patch: 10–400 ns per character, the slow end being
 * mailboxes and unified diffs whose strip level is probed.
 *
 * Planning is where inputs turn pathological. When a hunk's hint misses, it is looked for tier
 * by tier over the whole file, every line equal to its first line a candidate compared line by
 * line; a hunk that fails is looked for again reversed (`already_applied`) and by a
 * nearest-region vote; loose tiers normalise every character. So one file patch costs about
 * (size of the file + 1) × (size of the patch's lines + 16) "units", a size being lines plus
 * characters / 16 (long lines cost per character) and the 16 standing for the per-line work
 * done whatever the hunk. Fitted on failing hunks over files of identical lines, short or
 * indented, real code and text dense in foldable punctuation, for every dialect: 40–200 ns per
 * unit. Receipt diffs of whole contents (writes, adds) and replace-all edits compare every line
 * with every line (jsdiff: lines × changes), so they count the file and the text on both sides.
 */
import { hunksOf, type FilePatch, type FileSnapshot, type ParsedPatch, type PatchInput, type TextEdit } from '../engine/index.ts';

export const INLINE_LIMITS = {
  /**
   * Characters of patch text (or of the strings of operations and edits) parsed on the main
   * thread: ≤ ~6 ms for the slowest dialect, typically well under 1 ms.
   */
  maxParseChars: 16 * 1024,
  /**
   * Planning units run on the main thread: ≤ ~6 ms at the worst rate measured (real code runs at
   * 25–60 ns per unit). A one-hunk patch (7 lines of 35 characters) fits a file of ~250 such
   * lines; a one-line change to a 4-line file costs ~250.
   */
  maxPlanUnits: 32_000,
} as const;

/** Whether parsing `input` is cheap enough for the main thread. */
export function parsesInline(input: PatchInput): boolean {
  return inputChars(input) <= INLINE_LIMITS.maxParseChars;
}

/** Whether planning `parsed` against `files` is cheap enough for the main thread, whatever the files hold. */
export function plansInline(parsed: ParsedPatch, files: ReadonlyMap<string, FileSnapshot>): boolean {
  return planUnits(parsed, files) <= INLINE_LIMITS.maxPlanUnits;
}

/** The cost bound (in units, see above) of planning `parsed` on `files`; Infinity as soon as it is clearly over the limit. */
export function planUnits(parsed: ParsedPatch, files: ReadonlyMap<string, FileSnapshot>): number {
  let fileBytes = 0;
  for (const snapshot of files.values()) if (snapshot.kind === 'file') fileBytes += snapshot.bytes.byteLength;
  // Each file byte is at least one unit: no need to count the lines of files that big.
  if (fileBytes > INLINE_LIMITS.maxPlanUnits) return Infinity;
  let units = 0;
  for (const filePatch of parsed.files) {
    const { size, wholeContent, replaceAll } = patchTexts(filePatch);
    const fileSize = snapshotSize(files.get(filePatch.op === 'rename' ? filePatch.fromPath : filePatch.path));
    const searched = wholeContent ? fileSize + size : fileSize;
    const compared = wholeContent || replaceAll ? fileSize + size : size;
    units += (searched + 1) * (compared + 16);
  }
  return units;
}

/** Characters of patch text, or of the strings of operations or edits. */
export function inputChars({ patch, operations, edits }: PatchInput): number {
  let chars = patch?.length ?? 0;
  for (const operation of operations ?? []) chars += operation.path.length + (operation.diff?.length ?? 0);
  for (const edit of edits ?? []) {
    chars += edit.path.length;
    if ('oldText' in edit) chars += edit.oldText.length + edit.newText.length;
    else if ('insertLine' in edit) chars += edit.text.length;
    else chars += edit.content.length;
  }
  return chars;
}

interface PatchTexts {
  /** The size of what the file patch looks for in its file or diffs against it. */
  readonly size: number;
  /** Its receipt diff compares whole contents (a write or an add). */
  readonly wholeContent: boolean;
  readonly replaceAll: boolean;
}

function patchTexts(filePatch: FilePatch): PatchTexts {
  let lines = 0;
  let chars = 0;
  for (const hunk of hunksOf(filePatch)) {
    lines += hunk.lines.length + hunk.anchors.length;
    for (const line of hunk.lines) chars += line.text.length + 1;
    for (const anchor of hunk.anchors) chars += anchor.length + 1;
  }
  const texts = filePatch.op === 'edit' ? filePatch.edits.flatMap(editTexts) : filePatch.op === 'add' || filePatch.op === 'write' ? [filePatch.content] : [];
  for (const text of texts) {
    lines += newlines(text) + 1;
    chars += text.length;
  }
  const replaceAll = filePatch.op === 'edit' && filePatch.edits.some((edit) => edit.kind === 'replace' && edit.replaceAll === true);
  return { size: sizeOf(lines, chars), wholeContent: filePatch.op === 'add' || filePatch.op === 'write', replaceAll };
}

function editTexts(edit: TextEdit): string[] {
  return edit.kind === 'replace' ? [edit.search, edit.replace] : [edit.text];
}

/** Text size as the matcher feels it: lines (a comparison each) plus characters / 16 (normalised and compared one by one). */
function sizeOf(lines: number, chars: number): number {
  return lines + chars / 16;
}

function snapshotSize(snapshot: FileSnapshot | undefined): number {
  if (snapshot?.kind !== 'file') return 0;
  const { bytes } = snapshot;
  let lines = 0;
  for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) lines++;
  return sizeOf(lines, bytes.byteLength);
}

function newlines(text: string): number {
  let count = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) count++;
  return count;
}
