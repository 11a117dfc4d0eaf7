/**
 * Planning a series of patches (a mailbox of `git format-patch` mails) as one transaction:
 * patch N is planned against the files as patch N-1 left them, and the receipt gets one entry
 * per path with its net change from the files on disk to the files after the last patch. Its
 * hunk reports are those of every patch that touched the path, in order (each `line` counts in
 * the file as the patches before it left it).
 */
import { REFINED_CODES, reversedFilePatch } from './alreadyApplied.ts';
import { engineError, type EngineError } from './errors.ts';
import { missesLoneCarriageReturns } from './loneCarriageReturns.ts';
import { diffWhole } from './receiptDiff.ts';
import { sameBytes, type Files } from './snapshots.ts';
import { fail, ok, type Diagnostic, type FilePatch, type FileSnapshot, type HunkReport, type ParsedPatch, type PlannedFile, type Result, type SeriesPart } from './types.ts';

type PlanOne = (filePatch: FilePatch, files: Files) => Result<PlannedFile>;

/** What the series did along the way, keyed by the paths it touched. */
interface Running {
  readonly files: Map<string, FileSnapshot>;
  /** Current path → the original path its content was renamed from. */
  readonly movedFrom: Map<string, string>;
  /** Every path touched, in first-touch order. */
  readonly touched: Set<string>;
  /** Hunk reports and diagnostics of the planned files, by the path they were planned on. */
  readonly reports: Map<string, HunkReport[]>;
  readonly diagnostics: Map<string, Diagnostic[]>;
}

/**
 * Plans the series. `planOne` plans a file patch (explaining an already-applied one);
 * `planPlain` plans without that, for checking whether the first mails are already applied.
 */
export function planSeries(parsed: ParsedPatch, series: readonly SeriesPart[], files: Files, planOne: PlanOne, planPlain: PlanOne): Result<PlannedFile[]> {
  const running: Running = { files: new Map(files), movedFrom: new Map(), touched: new Set(), reports: new Map(), diagnostics: new Map() };
  const parts = partsOf(parsed.files, series);
  for (const [number, part] of parts.entries()) {
    for (const filePatch of part) {
      const planned = planOne(filePatch, running.files);
      if (!planned.ok) return fail(explainFailure(planned.error, number, series, parts, files, planPlain));
      record(running, planned.value);
    }
  }
  return ok(netChanges(running, files));
}

function partsOf(files: readonly FilePatch[], series: readonly SeriesPart[]): FilePatch[][] {
  let offset = 0;
  return series.map((part) => files.slice(offset, (offset += part.fileCount)));
}

/** Most mails checked for "the first N are already applied" (each check plans N mails). */
const MAX_APPLIED_CHECK = 64;

/**
 * A failure in the first mail may mean the first mails (or all of them) were applied before:
 * then undoing them, last first, works on the files as they are. Else the error, naming its mail.
 */
function explainFailure(error: EngineError, number: number, series: readonly SeriesPart[], parts: readonly FilePatch[][], files: Files, planPlain: PlanOne): EngineError {
  if (number === 0 && REFINED_CODES.has(error.code) && parts.length <= MAX_APPLIED_CHECK) {
    for (let count = parts.length; count >= 1; count--) {
      if (!undoes(parts.slice(0, count), files, planPlain)) continue;
      const which = count === parts.length ? `All ${count} patches of the series are` : `The first ${count} of the ${parts.length} patches are`;
      const rest = count === parts.length ? '' : ` Send the series from patch ${count + 1} (${JSON.stringify(series[count]?.title ?? '')}) on.`;
      return engineError('already_applied', `${which} already in the files (or the series is reversed); nothing was written.${rest}`, { path: error.path });
    }
  }
  return inPart(error, number, series);
}

/** Do the parts, undone last first, plan cleanly on `files`? */
function undoes(parts: readonly FilePatch[][], files: Files, planPlain: PlanOne): boolean {
  const state = new Map(files);
  for (const part of [...parts].reverse()) {
    for (const filePatch of [...part].reverse()) {
      // Lone CRs the patch lacks can let its reverse match where the patch never applied (see loneCarriageReturns.ts).
      if (missesLoneCarriageReturns(filePatch, state)) return false;
      const reversed = reversedFilePatch(filePatch);
      const planned = reversed === undefined ? undefined : planPlain(reversed, state);
      if (!planned?.ok) return false;
      if (planned.value.fromPath !== undefined) state.set(planned.value.fromPath, { kind: 'missing' });
      state.set(planned.value.path, planned.value.after === null ? { kind: 'missing' } : { kind: 'file', bytes: planned.value.after });
    }
  }
  return true;
}

function inPart(error: EngineError, number: number, series: readonly SeriesPart[]): EngineError {
  const where = `Patch ${number + 1} of ${series.length} (${JSON.stringify(series[number]?.title ?? '')})`;
  return { ...error, message: `${where}: ${error.message}` };
}

function record(running: Running, file: PlannedFile): void {
  const { files, movedFrom, touched } = running;
  if (file.fromPath !== undefined) {
    touched.add(file.fromPath);
    const origin = movedFrom.get(file.fromPath) ?? file.fromPath;
    movedFrom.delete(file.fromPath);
    movedFrom.set(file.path, origin);
    files.set(file.fromPath, { kind: 'missing' });
  } else if (file.op !== 'update') {
    movedFrom.delete(file.path);
  }
  touched.add(file.path);
  files.set(file.path, file.after === null ? { kind: 'missing' } : { kind: 'file', bytes: file.after });
  append(running.reports, file.path, file.hunks);
  append(running.diagnostics, file.path, file.diagnostics);
}

function append<T>(map: Map<string, T[]>, key: string, values: readonly T[]): void {
  map.set(key, [...(map.get(key) ?? []), ...values]);
}

/** One entry per path whose state differs from the original: a rename where content moved to a free path, else add, update or delete. */
function netChanges(running: Running, original: Files): PlannedFile[] {
  const planned: PlannedFile[] = [];
  const renamed = new Set<string>();
  for (const [path, from] of running.movedFrom) {
    if (from !== path && isFile(running.files.get(path)) && isFile(original.get(from)) && !isFile(running.files.get(from)) && !isFile(original.get(path))) {
      renamed.add(path).add(from);
    }
  }
  for (const path of running.touched) {
    const before = fileBytes(original.get(path));
    const after = fileBytes(running.files.get(path));
    const from = running.movedFrom.get(path);
    if (renamed.has(path) && from !== undefined && from !== path) {
      planned.push(entry(running, 'rename', path, from, fileBytes(original.get(from)), after));
    } else if (renamed.has(path)) {
      continue;
    } else if (before === undefined && after !== undefined) {
      planned.push(entry(running, 'add', path, undefined, undefined, after));
    } else if (before !== undefined && after === undefined) {
      planned.push(entry(running, 'delete', path, undefined, before, undefined));
    } else if (before !== undefined && after !== undefined && !sameBytes(before, after)) {
      planned.push(entry(running, 'update', path, undefined, before, after));
    }
  }
  return planned;
}

function entry(running: Running, op: PlannedFile['op'], path: string, fromPath: string | undefined, before: Uint8Array | undefined, after: Uint8Array | undefined): PlannedFile {
  const paths = fromPath === undefined ? [path] : [fromPath, path];
  const hunks = paths.flatMap((key) => running.reports.get(key) ?? []).map((report, index) => ({ ...report, index }));
  const diagnostics = paths.flatMap((key) => running.diagnostics.get(key) ?? []);
  const oldName = before === undefined ? '/dev/null' : `a/${fromPath ?? path}`;
  const newName = after === undefined ? '/dev/null' : `b/${path}`;
  const diff = diffWhole(oldName, textOf(before), newName, textOf(after));
  return { op, path, fromPath, after: after ?? null, hunks, diff, diagnostics };
}

function isFile(snapshot: FileSnapshot | undefined): boolean {
  return snapshot?.kind === 'file';
}

function fileBytes(snapshot: FileSnapshot | undefined): Uint8Array | undefined {
  return snapshot?.kind === 'file' ? snapshot.bytes : undefined;
}

/** Keeps a BOM as text, so a series that drops or adds one shows it in the diff. */
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true });

function textOf(bytes: Uint8Array | undefined): string {
  return bytes === undefined ? '' : utf8.decode(bytes);
}
