/**
 * Planning an `edit` file patch (SEARCH/REPLACE blocks, str_replace edits, inserts): the edits
 * apply one after another on the running content, each located by editMatch.ts. Any edit that
 * fails rejects the whole patch. The file keeps its BOM, line endings and final-newline state,
 * except where a str_replace edit reaching the end of the file says otherwise (`finalNewlineAfter`).
 * As with hunks (DESIGN, Line endings), a file's edits are EOL-explicit when their text has
 * CRLF lines: searches then compare raw and new text is written as given. Edits that ask for a
 * change but leave every byte as it was are `already_applied`, as a hunk is (plan.ts).
 *
 * A missing file may be created by a first edit whose search is empty (str_replace tools
 * create files that way); its replacement is the new file's content, taken as given.
 */
import { alreadyThere, engineError } from './errors.ts';
import { locateEdit, type Splice } from './editMatch.ts';
import { diffVersions } from './receiptDiff.ts';
import { requireText, type Files } from './snapshots.ts';
import { encodeText, indexText, textWithBom, type TextFile } from './text.ts';
import type { LineTier } from './tiers.ts';
import { fail, ok, type HunkReport, type PlannedFile, type Result, type TextEdit } from './types.ts';

interface StartingPoint {
  readonly file: TextFile;
  /** Index of the first edit still to apply (1 when edit 0 created the file). */
  readonly first: number;
  readonly created: boolean;
}

export function planEdit(path: string, edits: readonly TextEdit[], files: Files, tiers: readonly LineTier[]): Result<PlannedFile> {
  const start = startingPoint(path, edits, files);
  if (!start.ok) return start;
  const { file: original, first, created } = start.value;
  let current = original;
  let finalNewline = original.finalNewline;
  const reports: HunkReport[] = [];
  const explicit = edits.some((edit) => (edit.kind === 'replace' ? edit.search + edit.replace : edit.text).includes('\r\n'));
  for (let editIndex = first; editIndex < edits.length; editIndex++) {
    const edit = edits[editIndex]!;
    const located = locateEdit(current, edit, { path, editIndex, tiers, explicit });
    if (!located.ok) return located;
    finalNewline = finalNewlineAfter(current, edit, located.value.splices, finalNewline);
    current = applySplices(current, located.value.splices, finalNewline);
    reports.push({ index: editIndex, line: located.value.line, tier: located.value.tier, offset: 0 });
  }
  const newText = textWithBom(current);
  const after = encodeText(newText);
  if (created) {
    return ok({ op: 'add', path, after, hunks: reports, diff: diffVersions('/dev/null', '', `b/${path}`, newText), diagnostics: [] });
  }
  if (current.text === original.text && edits.some(asksChange)) {
    return fail(alreadyThere(path, `Applying the edits would leave every byte of ${path} as it is: the file already reads as their new text.`));
  }
  const diff = diffVersions(`a/${path}`, textWithBom(original), `b/${path}`, newText);
  return ok({ op: 'update', path, after, hunks: reports, diff, diagnostics: [] });
}

function startingPoint(path: string, edits: readonly TextEdit[], files: Files): Result<StartingPoint> {
  const creation = edits[0];
  if (creation?.kind !== 'replace' || creation.search !== '') {
    const text = requireText(path, files);
    return text.ok ? ok({ file: text.value, first: 0, created: false }) : text;
  }
  const snapshot = files.get(path);
  if (snapshot?.kind === 'directory') return fail(engineError('already_exists', `${path} is a directory.`, { path }));
  if (snapshot?.kind === 'file') {
    // As an add of an existing file in every other dialect (DESIGN, Decisions): already_exists.
    return fail(engineError('already_exists', `Edit 1 creates ${path} (its search text is empty), but ${path} already exists: change it with oldText/newText or insertLine edits, or replace it with a write that gives expectedSha256.`, { path, hunkIndex: 0 }));
  }
  return ok({ file: indexText(creation.replace), first: 1, created: true });
}

/**
 * Whether the file ends with a newline after `edit`. A str_replace edit is an exact substring
 * replacement (Anthropic's text editor tool, OpenCode's edit): one whose match reaches the end of
 * the file ends it as its replacement does, adding or dropping the final newline (an empty
 * replacement leaves what precedes the match at the end). A whole-line search that matched a
 * last line lacking its newline spoke of a newline the file does not have: the file goes on
 * without one. Blocks, inserts and edits elsewhere keep the state (DESIGN, Matching).
 */
function finalNewlineAfter(file: TextFile, edit: TextEdit, splices: readonly Splice[], finalNewline: boolean): boolean {
  const last = splices.at(-1);
  if (edit.kind !== 'replace' || edit.relativeIndent === true || last === undefined || last.to < file.text.length) return finalNewline;
  if (edit.search.endsWith('\n') && !file.finalNewline) return false;
  if (edit.replace !== '') return edit.replace.endsWith('\n');
  const before = file.text.slice(0, last.from);
  return before === '' || before.endsWith('\n');
}

/** The edit asks for the file to change: its new text differs from its old, or it inserts text. */
function asksChange(edit: TextEdit): boolean {
  return edit.kind === 'insert' ? edit.text !== '' : edit.search !== edit.replace;
}

/** The running content after `splices` (ascending, disjoint), with the final-newline state given. */
function applySplices(file: TextFile, splices: readonly Splice[], finalNewline: boolean): TextFile {
  const parts: string[] = [];
  let copied = 0;
  for (const splice of splices) {
    parts.push(file.text.slice(copied, splice.from), splice.text);
    copied = splice.to;
  }
  parts.push(file.text.slice(copied));
  const text = keepFinalNewline(parts.join(''), file.eol, finalNewline);
  // The line ending stays the one the file had, whatever the edited text would now suggest.
  return { ...indexText(text, file.bom), eol: file.eol };
}

function keepFinalNewline(text: string, eol: string, finalNewline: boolean): string {
  if (text === '') return text;
  if (!finalNewline && text.endsWith('\n')) return text.slice(0, text.endsWith('\r\n') ? -2 : -1);
  if (finalNewline && !text.endsWith('\n')) return text + eol;
  return text;
}
