/** Building `Receipt`s and `FileReceipt`s (protocol shapes) from engine and workspace data. */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Diagnostic, FileReceipt, Receipt, ReceiptError, ReceiptFormat, ReceiptStatus, Timings } from '../../protocol/index.ts';
import type { EngineError, FileSnapshot, PlannedFile } from '../engine/index.ts';
import { sha256Hex } from '../workspace/workspace.ts';

type Phase = keyof Omit<Timings, 'totalMs'>;

/** Why a patch stopped: the error, and for `stale_file` the file's current sha256. */
export interface PatchFailure {
  readonly error: EngineError;
  readonly currentSha256?: string | null;
}

/** What the parser and planner said besides the files: carried by every receipt once known. */
export interface PatchNotes {
  readonly format: ReceiptFormat;
  readonly diagnostics: readonly Diagnostic[];
  readonly ignoredMetadata: readonly string[];
}

/** Collects timings and notes while a patch runs, then produces its receipt. */
export class ReceiptDraft {
  /** Also names the commit's trash folder, so an undo can find it from the receipt. */
  readonly transactionId = randomUUID();
  readonly #started = performance.now();
  readonly #timings: Record<Phase, number> = { parseMs: 0, planMs: 0, commitMs: 0 };
  readonly #atomic: boolean;
  #notes: PatchNotes;
  #replanned = false;

  constructor(atomic: boolean, format: ReceiptFormat) {
    this.#atomic = atomic;
    this.#notes = { format, diagnostics: [], ignoredMetadata: [] };
  }

  /** Runs one phase of the patch, adding its duration to that phase's timing. */
  async timed<T>(phase: Phase, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.#timings[phase] += performance.now() - started;
    }
  }

  noteParsed(notes: PatchNotes): void {
    this.#notes = notes;
  }

  /** The disk changed under the plan (at `path`) and the patch (or undo) was planned again on the new bytes. */
  noteReplanned(path: string | undefined, what: 'patch' | 'undo'): void {
    this.#replanned = true;
    const diagnostic: Diagnostic = { code: 'replanned', message: `${path ?? 'A file'} changed on disk after the ${what} was planned; it was planned again on the new content.` };
    if (path !== undefined) diagnostic.path = path;
    this.#notes = { ...this.#notes, diagnostics: [...this.#notes.diagnostics, diagnostic] };
  }

  rejected(failure: PatchFailure): Receipt {
    return this.finish('rejected', [], failure);
  }

  finish(status: ReceiptStatus, files: readonly FileReceipt[], failure?: PatchFailure): Receipt {
    const receipt: Receipt = {
      transactionId: this.transactionId,
      status,
      format: this.#notes.format,
      atomic: this.#atomic,
      files: [...files],
      diagnostics: this.#notes.diagnostics.map((diagnostic) => ({ ...diagnostic })),
      ignoredMetadata: [...this.#notes.ignoredMetadata],
      timings: roundTimings({ ...this.#timings, totalMs: performance.now() - this.#started }),
    };
    if (this.#replanned) receipt.replanned = true;
    if (failure !== undefined) receipt.error = toReceiptError(failure);
    return receipt;
  }
}

function roundTimings(timings: Timings): Timings {
  const round = (ms: number) => Math.round(ms * 100) / 100;
  return { parseMs: round(timings.parseMs), planMs: round(timings.planMs), commitMs: round(timings.commitMs), totalMs: round(timings.totalMs) };
}

/** The wire form of an engine error, plus the current sha256 of a stale file. */
export function toReceiptError({ error, currentSha256 }: PatchFailure): ReceiptError {
  const wire: ReceiptError = { code: error.code, message: error.message, hint: error.hint };
  if (error.path !== undefined) wire.path = error.path;
  if (error.hunkIndex !== undefined) wire.hunkIndex = error.hunkIndex;
  if (error.nearest !== undefined) wire.nearest = { ...error.nearest };
  if (error.limit !== undefined) wire.limit = { ...error.limit };
  if (currentSha256 !== undefined) wire.currentSha256 = currentSha256;
  return wire;
}

export function failureOf(error: EngineError): PatchFailure {
  return { error };
}

/** The receipt of one planned file; `createdDirs` only once committed. */
export function toFileReceipt(file: PlannedFile, snapshots: ReadonlyMap<string, FileSnapshot>, createdDirs: readonly string[] = []): FileReceipt {
  const receipt: FileReceipt = {
    path: file.path,
    op: file.op,
    hunks: file.hunks.map(({ index, line, tier, offset }) => ({ index, line, tier, offset })),
    diff: file.diff,
  };
  if (file.fromPath !== undefined) receipt.fromPath = file.fromPath;
  const before = snapshots.get(file.fromPath ?? file.path);
  if (file.op !== 'add' && before?.kind === 'file') receipt.sha256Before = sha256Hex(before.bytes);
  if (file.after !== null) receipt.sha256After = sha256Hex(file.after);
  if (file.diagnostics.length > 0) receipt.diagnostics = file.diagnostics.map((diagnostic) => ({ ...diagnostic }));
  if (createdDirs.length > 0) receipt.createdDirs = [...createdDirs];
  return receipt;
}

/** Gives each created directory to the first file that lies beneath it. */
export function assignCreatedDirs(files: readonly PlannedFile[], createdDirs: readonly string[]): Map<PlannedFile, string[]> {
  const assigned = new Map<PlannedFile, string[]>();
  for (const dir of createdDirs) {
    const owner = files.find((file) => file.path.startsWith(`${dir}/`));
    if (owner !== undefined) assigned.set(owner, [...(assigned.get(owner) ?? []), dir]);
  }
  return assigned;
}
