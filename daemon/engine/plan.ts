/** Turning a parsed patch plus the current files into a plan: new bytes, hunk reports, diffs. */
import { alreadyAppliedError } from './alreadyApplied.ts';
import { planEdit } from './edits.ts';
import { deletedAsSaid, emptinessAsSaid, isNewSide, newSideAsSaid, sideHeld } from './blobs.ts';
import { withoutFileEdges } from './fileEdges.ts';
import { alreadyThere, engineError } from './errors.ts';
import { applyHunks, carriesEndings, type AppliedHunks } from './hunks.ts';
import { loneCarriageReturnError, missesLoneCarriageReturns } from './loneCarriageReturns.ts';
import { nestPaths } from './pathConflicts.ts';
import { diffPieces, diffWhole } from './receiptDiff.ts';
import { planSeries } from './series.ts';
import { requireAbsent, requireDirectory, requireFile, requireText, sameBytes, withDirectoriesFreed, type Files } from './snapshots.ts';
import { assemble, decodeText, encodeText, textWithBom, type TextFile } from './text.ts';
import { ALL_TIERS, EXACT_ONLY, type LineTier } from './tiers.ts';
import { fail, ok, type BlobIds, type FilePatch, type Hunk, type ParsedPatch, type Plan, type PlannedFile, type PlanOptions, type Result } from './types.ts';

export function planPatch(parsed: ParsedPatch, files: Files, options: PlanOptions = {}): Result<Plan> {
  const tiers = options.fuzz === 'exact' ? EXACT_ONLY : ALL_TIERS;
  if (parsed.workingDirectory !== undefined) {
    const directory = requireDirectory(parsed.workingDirectory, files);
    if (!directory.ok) return directory;
  }
  const nesting = nestPaths(parsed.files);
  // A directory the patch replaces by a file is free for that file (the workspace checks at commit that the patch empties it).
  const view = withDirectoriesFreed(files, nesting.replacedDirectories);
  if (parsed.series !== undefined) {
    const net = planSeries(parsed, parsed.series, view, (filePatch, state) => planFileOrExplain(filePatch, state, tiers), (filePatch, state) => planFile(filePatch, state, tiers));
    if (!net.ok) return net;
    const { conflict } = nestPaths(net.value);
    return conflict ? fail(conflict) : ok({ dialect: parsed.dialect, files: net.value, diagnostics: parsed.diagnostics, ignoredMetadata: parsed.ignoredMetadata });
  }
  // Before any file is planned, so the patch's own contradiction is what is reported. (A series
  // may take a path away in one part and reuse it in another: its net effect is checked above.)
  if (nesting.conflict) return fail(nesting.conflict);
  const planned: PlannedFile[] = [];
  for (const filePatch of parsed.files) {
    const result = planFileOrExplain(filePatch, view, tiers);
    if (!result.ok) return result;
    planned.push(result.value);
  }
  return ok({ dialect: parsed.dialect, files: planned, diagnostics: parsed.diagnostics, ignoredMetadata: parsed.ignoredMetadata });
}

/** Plans one file patch; when that fails because its change is already there, says so (`already_applied`), or why context is not found when lone CRs are. */
function planFileOrExplain(filePatch: FilePatch, files: Files, tiers: readonly LineTier[]): Result<PlannedFile> {
  const result = planFile(filePatch, files, tiers);
  if (result.ok) return result;
  const plan = (patch: FilePatch, state: Files) => planFile(patch, state, tiers);
  const explained = missesLoneCarriageReturns(filePatch, files)
    ? loneCarriageReturnError(filePatch, files, result.error, plan)
    : alreadyAppliedError(filePatch, files, tiers, result.error, plan);
  return explained ? fail(explained) : result;
}

function planFile(filePatch: FilePatch, files: Files, tiers: readonly LineTier[]): Result<PlannedFile> {
  switch (filePatch.op) {
    case 'add': return planAdd(filePatch.path, filePatch.content, files);
    case 'update': return planUpdate({ fromPath: filePatch.path, path: filePatch.path, hunks: filePatch.hunks, blobs: filePatch.blobs }, files, tiers);
    case 'rename': return planRename(filePatch, files, tiers);
    case 'delete': return planDelete(filePatch, files, tiers);
    case 'write': return planWrite(filePatch.path, filePatch.content, filePatch.mayReplace, files);
    case 'edit': return planEdit(filePatch.path, filePatch.edits, files, tiers);
  }
}

function planAdd(path: string, content: string, files: Files): Result<PlannedFile> {
  const free = requireAbsent(path, files);
  if (!free.ok) return free;
  const diff = diffWhole('/dev/null', '', `b/${path}`, content);
  return ok({ op: 'add', path, after: encodeText(content), hunks: [], diff, diagnostics: [] });
}

function planWrite(path: string, content: string, mayReplace: boolean, files: Files): Result<PlannedFile> {
  const snapshot = files.get(path);
  if (!snapshot || snapshot.kind === 'missing') return planAdd(path, content, files);
  if (snapshot.kind === 'directory') return fail(engineError('already_exists', `${path} is a directory.`, { path }));
  const after = encodeText(content);
  // As an add onto a file holding exactly its content (alreadyApplied.ts): nothing to write, never an "applied" receipt.
  if (sameBytes(after, snapshot.bytes)) return fail(alreadyThere(path, `${path} already holds exactly the content the write gives.`));
  if (!mayReplace) {
    return fail(engineError('precondition_required', `${path} exists; a whole-file write replaces it only with expectedSha256 of its current content.`, { path }));
  }
  const before = decodeText(snapshot.bytes, path);
  const diff = before.ok ? diffWhole(`a/${path}`, textWithBom(before.value), `b/${path}`, content) : '';
  return ok({ op: 'update', path, after, hunks: [], diff, diagnostics: [] });
}

interface HunksOfFile {
  readonly fromPath: string;
  readonly path: string;
  readonly hunks: readonly Hunk[];
  readonly blobs?: BlobIds | undefined;
}

function planUpdate({ fromPath, path, hunks, blobs }: HunksOfFile, files: Files, tiers: readonly LineTier[]): Result<PlannedFile> {
  const bytes = requireFile(fromPath, files);
  if (!bytes.ok) return bytes;
  const source = decodeText(bytes.value, fromPath);
  if (!source.ok) return source;
  const held = sideHeld(bytes.value, blobs);
  const unfit = newSideAsSaid(fromPath, path, held, blobs) ?? emptinessAsSaid(fromPath, bytes.value, blobs);
  if (unfit) return fail(unfit);
  // The very file the diff was made from: its numbers are exact, and edges inferred from its context add nothing (see fileEdges.ts).
  const usable = held === 'old' ? withoutFileEdges(hunks) : hunks;
  const literal = held === 'old' ? asGitWrote(source.value, usable, fromPath, tiers, blobs) : undefined;
  const applied = literal === undefined ? applyHunks(source.value, usable, fromPath, tiers) : ok(literal.applied);
  if (!applied.ok) return applied;
  const { file, pieces, reports } = applied.value;
  const op = fromPath === path ? 'update' : 'rename';
  const after = literal?.after ?? assemble(file, pieces);
  if (op === 'update' && hunks.some(changesLines) && sameBytes(after, bytes.value)) {
    return fail(alreadyThere(path, `Applying the patch would leave every byte of ${path} as it is: the file already reads as its new side.`));
  }
  const diff = diffPieces(`a/${fromPath}`, `b/${path}`, file, pieces);
  return ok({ op, path, fromPath: op === 'rename' ? fromPath : undefined, after, hunks: reports, diff, diagnostics: [] });
}

/**
 * A git diff of this very file (its bytes are the index line's old blob) spells every line's
 * ending, CR or not: an added line without a CR ends in LF beside CRLF lines too, as `git apply`
 * writes it (DESIGN, Line endings: git's semantics where the patch carries them). Taken only
 * when that gives the index line's new blob; a diff whose CRs were lost on the way gives other
 * bytes, and its added lines take the file's own endings (rule 4). The bytes hashed for that
 * check are the file's new content, so they come back with the hunks. Hunks whose lines carry
 * CRs are read literally anyway (`applyHunks`): nothing to check, nor to apply twice.
 */
function asGitWrote(file: TextFile, hunks: readonly Hunk[], path: string, tiers: readonly LineTier[], blobs: BlobIds | undefined): { applied: AppliedHunks; after: Uint8Array } | undefined {
  if (blobs === undefined || file.crlfCount === 0 || carriesEndings(hunks)) return undefined;
  const applied = applyHunks(file, hunks, path, tiers, true);
  if (!applied.ok) return undefined;
  const after = assemble(applied.value.file, applied.value.pieces);
  return isNewSide(after, blobs) ? { applied: applied.value, after } : undefined;
}

/**
 * A hunk that removes or adds lines says the file changes. When the file comes out of it byte
 * for byte as it was (what it adds is what it removes there, at a tolerance tier or through the
 * BOM the file keeps), that change is already there: `already_applied`, never a receipt claiming
 * lines changed. Hunks of context only ask for nothing and apply as the no-op they are.
 */
function changesLines(hunk: Hunk): boolean {
  return hunk.lines.some((line) => line.kind !== 'context');
}

function planRename(filePatch: Extract<FilePatch, { op: 'rename' }>, files: Files, tiers: readonly LineTier[]): Result<PlannedFile> {
  const { fromPath, path, hunks } = filePatch;
  const free = requireAbsent(path, files);
  if (!free.ok) return free;
  if (hunks.length > 0) return planUpdate(filePatch, files, tiers);
  const source = requireFile(fromPath, files);
  if (!source.ok) return source;
  return ok({ op: 'rename', path, fromPath, after: source.value, hunks: [], diff: '', diagnostics: [] });
}

function planDelete({ path, hunks, mustBeEmpty, blobs }: Extract<FilePatch, { op: 'delete' }>, files: Files, tiers: readonly LineTier[]): Result<PlannedFile> {
  const existing = requireFile(path, files);
  if (!existing.ok) return existing;
  if (hunks.length === 0) {
    const unfit = mustBeEmpty === true ? deletedAsSaid(path, existing.value, blobs) : undefined;
    if (unfit) return fail(unfit);
    const text = decodeText(existing.value, path);
    const diff = text.ok ? diffWhole(`a/${path}`, textWithBom(text.value), '/dev/null', '') : '';
    return ok({ op: 'delete', path, after: null, hunks: [], diff, diagnostics: [] });
  }
  const source = requireText(path, files);
  if (!source.ok) return source;
  const applied = applyHunks(source.value, hunks, path, tiers);
  if (!applied.ok) return applied;
  if (applied.value.lineCount > 0) {
    return fail(engineError('context_not_found', `The patch deletes ${path} but its removed lines do not cover the whole file.`, { path }));
  }
  const diff = diffWhole(`a/${path}`, textWithBom(source.value), '/dev/null', '');
  return ok({ op: 'delete', path, after: null, hunks: applied.value.reports, diff, diagnostics: [] });
}
