/**
 * The inverse of a parsed patch (`patch -R`, `git apply -R`): applied to the patched files it
 * gives back the originals. Every side the patch shows is swapped — added and removed lines,
 * a rename's two paths, a replacement's old and new text, the final-newline markers. A
 * change that does not show what it replaced (a whole-file write, an insertion, a delete that
 * does not list the deleted lines) cannot be inverted: `not_reversible`.
 */
import { isEmptyBlob } from './blobs.ts';
import { engineError } from './errors.ts';
import { fail, ok, type BlobIds, type Diagnostic, type FilePatch, type Hunk, type HunkLine, type ParsedPatch, type Result, type TextEdit } from './types.ts';

export function reversePatch(parsed: ParsedPatch): Result<ParsedPatch> {
  const files: FilePatch[] = [];
  for (const file of parsed.files) {
    const inverse = reverseFile(file);
    if (!inverse.ok) return inverse;
    files.push(inverse.value);
  }
  return ok({ ...parsed, files, diagnostics: reversedModeNotes(parsed.diagnostics, files) });
}

/**
 * The notes on modes patchd does not apply speak of the patch as written: reversed, a new file
 * it made executable is deleted (nothing to note), and a mode change asks for the old mode.
 */
function reversedModeNotes(diagnostics: readonly Diagnostic[], reversed: readonly FilePatch[]): Diagnostic[] {
  const deleted = new Set(reversed.filter((file) => file.op === 'delete').map((file) => file.path));
  return diagnostics.flatMap((diagnostic) => {
    if (diagnostic.code !== 'mode_not_applied' || diagnostic.path === undefined) return [diagnostic];
    if (deleted.has(diagnostic.path)) return [];
    return [{ ...diagnostic, message: `patchd does not apply modes: ${diagnostic.path} keeps its mode (the patch, reversed, asks for its old one).` }];
  });
}

function reverseFile(file: FilePatch): Result<FilePatch> {
  switch (file.op) {
    case 'update': return ok({ op: 'update', path: file.path, hunks: reverseHunks(file.hunks), ...swappedBlobs(file) });
    case 'rename': return ok({ op: 'rename', fromPath: file.path, path: file.fromPath, hunks: reverseHunks(file.hunks), ...swappedBlobs(file) });
    case 'add': return ok(deletionOf(file.path, file.content));
    case 'delete': return additionOf(file);
    case 'edit': return reverseEdits(file.path, file.edits);
    case 'write': return notReversible(file.path, 'a whole-file write does not say what the file held before');
  }
}

/** Hunks with their sides swapped; each line hint moves to where the hunk starts in the patched file. */
export function reverseHunks(hunks: readonly Hunk[]): Hunk[] {
  let shift = 0;
  return hunks.map((hunk) => {
    const reversed = reverseHunk(hunk, shift);
    shift += hunk.lines.filter((line) => line.kind === 'add').length - hunk.lines.filter((line) => line.kind === 'remove').length;
    return reversed;
  });
}

function reverseHunk(hunk: Hunk, shift: number): Hunk {
  const swapped = swappedHunk(hunk);
  return hunk.oldStart === undefined ? swapped : { ...swapped, oldStart: Math.max(1, hunk.oldStart + shift) };
}

/** The hunk with its old and new sides swapped (its line hint kept as it was). */
function swappedHunk(hunk: Hunk): Hunk {
  const lines = hunk.lines.map((line): HunkLine => (line.kind === 'context' ? line : { kind: line.kind === 'add' ? 'remove' : 'add', text: line.text }));
  const finalNewline = hunk.finalNewline && { old: hunk.finalNewline.new, new: hunk.finalNewline.old };
  return { ...hunk, lines, finalNewline };
}

/** The blob ids of a file patch, old and new swapped (nothing when it has none). */
export function swappedBlobs({ blobs }: { readonly blobs?: BlobIds | undefined }): { blobs?: BlobIds } {
  return blobs === undefined ? {} : { blobs: { old: blobs.new, new: blobs.old } };
}

/** Undoing an addition deletes the file, checking it still holds what was added. */
function deletionOf(path: string, content: string): FilePatch {
  if (content === '') return { op: 'delete', path, hunks: [], mustBeEmpty: true };
  const lacksNewline = !content.endsWith('\n');
  const texts = (lacksNewline ? content : content.slice(0, -1)).split('\n');
  const hunk: Hunk = {
    oldStart: 1, anchors: [], atEndOfFile: true,
    lines: texts.map((text) => ({ kind: 'remove', text })),
    ...(lacksNewline ? { finalNewline: { old: false, new: true } } : {}),
  };
  return { op: 'delete', path, hunks: [hunk] };
}

/** Undoing a deletion adds the file back, when the patch listed every line it deleted. */
function additionOf(file: Extract<FilePatch, { op: 'delete' }>): Result<FilePatch> {
  if (file.hunks.length === 0) {
    // `git diff -D` leaves out a deleted file's lines: its index line then names a blob with content.
    const empty = file.mustBeEmpty === true && (file.blobs === undefined || isEmptyBlob(file.blobs.old));
    return empty ? ok({ op: 'add', path: file.path, content: '' }) : notReversible(file.path, 'the patch deletes the file without listing its lines');
  }
  const [hunk, ...more] = file.hunks;
  if (more.length > 0 || hunk === undefined || hunk.lines.some((line) => line.kind === 'add')) return notReversible(file.path, 'the deletion does not list the whole file');
  const text = hunk.lines.map((line) => line.text).join('\n');
  return ok({ op: 'add', path: file.path, content: hunk.finalNewline?.old === false ? text : `${text}\n` });
}

/** Edits apply in order on the running content, so their inverses apply in the opposite order. */
function reverseEdits(path: string, edits: readonly TextEdit[]): Result<FilePatch> {
  const reversed: TextEdit[] = [];
  for (const edit of [...edits].reverse()) {
    if (edit.kind === 'insert') return notReversible(path, 'an insertion does not say where its text ends');
    if (edit.replace === '') return notReversible(path, 'a replacement by nothing leaves no text to find');
    reversed.push({ ...edit, search: edit.replace, replace: edit.search });
  }
  return ok({ op: 'edit', path, edits: reversed });
}

function notReversible(path: string, why: string): Result<FilePatch> {
  return fail(engineError('not_reversible', `${path} cannot be changed back: ${why}.`, { path }));
}
