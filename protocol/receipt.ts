/**
 * Receipts: the answer to every `patch/apply`, and the per-file entries streamed with
 * `$/progress` while it runs. A rejected patch is a receipt with `status: "rejected"` and an
 * `error`, never a JSON-RPC error.
 */
import { z } from 'zod';
import { ErrorCodeSchema } from './errors.ts';
import { MatchTierSchema, ReceiptFormatSchema } from './formats.ts';
import { MAX_PATH_CHARS } from './workspace.ts';

/** Most files one patch may name (and so most entries in `Receipt.files`). */
export const MAX_FILES = 2000;
/** Most hunks one patch may carry. */
export const MAX_HUNKS = 20_000;

const PathSchema = z.string().max(MAX_PATH_CHARS);
const Sha256Schema = z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits');

/** A remark that did not stop the patch: e.g. `hunk_count_mismatch`, `text_around_patch`. */
export const DiagnosticSchema = z.object({
  code: z.string(),
  message: z.string(),
  path: PathSchema.optional(),
  hunkIndex: z.number().int().nonnegative().optional(),
});

/** Where and how one hunk matched. */
export const HunkReceiptSchema = z.object({
  /** 0-based position of the hunk within its file section. */
  index: z.number().int().nonnegative(),
  /** 1-based line of the original file where the hunk's old side starts. */
  line: z.number().int(),
  /** The tolerance tier the match needed. */
  tier: MatchTierSchema,
  /** `line` minus the line the patch hinted (0 without a hint). */
  offset: z.number().int(),
});

/** What the receipt records for one file of the patch. */
export const FileReceiptSchema = z.object({
  /** Workspace-relative path after the change (the destination of a rename). */
  path: PathSchema,
  /** Source of a rename. */
  fromPath: PathSchema.optional(),
  op: z.enum(['add', 'update', 'delete', 'rename']),
  /** sha256 of the bytes before the change; absent for an added file. */
  sha256Before: Sha256Schema.optional(),
  /** sha256 of the bytes after the change; absent for a deleted file. */
  sha256After: Sha256Schema.optional(),
  hunks: z.array(HunkReceiptSchema).max(MAX_HUNKS),
  /** Unified diff of the change. */
  diff: z.string(),
  diagnostics: z.array(DiagnosticSchema).optional(),
  /** Directories created for this file (applied patches only). */
  createdDirs: z.array(PathSchema).optional(),
});

/** The region of a file closest to context that was not found. */
export const NearestRegionSchema = z.object({
  /** 1-based line where the region starts. */
  line: z.number().int(),
  text: z.string(),
  /** 0..1: the share of the hunk's old lines that matched there. */
  similarity: z.number().min(0).max(1),
});

/** Why a patch was rejected (or why a non-atomic one stopped part way). */
export const ReceiptErrorSchema = z.object({
  code: ErrorCodeSchema,
  message: z.string(),
  /** One line telling a model how to recover. */
  hint: z.string(),
  path: PathSchema.optional(),
  hunkIndex: z.number().int().nonnegative().optional(),
  nearest: NearestRegionSchema.optional(),
  /** For `limit_exceeded`: which limit, its maximum and the actual value. */
  limit: z.object({ name: z.string(), max: z.number(), actual: z.number() }).optional(),
  /** For `stale_file`: the file's current sha256, `null` when it does not exist. */
  currentSha256: Sha256Schema.nullable().optional(),
});

/** Milliseconds spent in each phase. */
export const TimingsSchema = z.object({
  parseMs: z.number().nonnegative(),
  planMs: z.number().nonnegative(),
  commitMs: z.number().nonnegative(),
  totalMs: z.number().nonnegative(),
});

/**
 * The outcome of one patch. `applied`: every file written. `dry_run`: everything computed,
 * nothing written. `rejected`: nothing written, `error` says why. `partial` (only with
 * `atomic: false`): `files` lists the committed prefix, `error` the failure that stopped it.
 */
export const ReceiptSchema = z.object({
  transactionId: z.string(),
  status: z.enum(['applied', 'rejected', 'dry_run', 'partial']),
  /** The dialect the patch was read as (the requested format when parsing failed). */
  format: ReceiptFormatSchema,
  atomic: z.boolean(),
  files: z.array(FileReceiptSchema).max(MAX_FILES),
  diagnostics: z.array(DiagnosticSchema),
  /** Metadata lines accepted but never executed (`index …`, mode lines, …). */
  ignoredMetadata: z.array(z.string()),
  timings: TimingsSchema,
  /**
   * Set when a file changed on disk (outside patchd) between planning and commit, and the
   * patch (or undo) was planned again on the new bytes — once; a `replanned` diagnostic names
   * the file. Never set for a patch with preconditions: that one is rejected `stale_file` instead.
   */
  replanned: z.boolean().optional(),
  error: ReceiptErrorSchema.optional(),
});

export type Diagnostic = z.infer<typeof DiagnosticSchema>;
export type HunkReceipt = z.infer<typeof HunkReceiptSchema>;
export type FileReceipt = z.infer<typeof FileReceiptSchema>;
export type NearestRegion = z.infer<typeof NearestRegionSchema>;
export type ReceiptError = z.infer<typeof ReceiptErrorSchema>;
export type Timings = z.infer<typeof TimingsSchema>;
export type Receipt = z.infer<typeof ReceiptSchema>;
export type ReceiptStatus = Receipt['status'];
