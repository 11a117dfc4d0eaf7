/**
 * Patches: `patch/apply` and the `$/progress` stream of per-file receipts.
 */
import { ProgressType } from 'vscode-jsonrpc';
import { z } from 'zod';
import { MAX_STRIP } from './constants.ts';
import { defineRequest } from './define.ts';
import { FormatNameSchema } from './formats.ts';
import { ReceiptSchema, type FileReceipt } from './receipt.ts';
import { MAX_PATH_CHARS, WorkspaceIdSchema } from './workspace.ts';

/** Most V4A operations one call may carry. */
export const MAX_OPERATIONS = 2000;
/** Most entries in `expectedSha256ByPath` or `baseVersions`. */
export const MAX_PRECONDITIONS = 2000;
export { MAX_STRIP } from './constants.ts';

const PathSchema = z.string().max(MAX_PATH_CHARS);

/** One OpenAI V4A operation; `diff` is omitted for `delete_file`. */
export const V4AOperationSchema = z.strictObject({
  type: z.enum(['create_file', 'update_file', 'delete_file']),
  path: PathSchema,
  diff: z.string().optional(),
});

/** A str_replace-style edit: replace `oldText` (once, or everywhere with `replaceAll`) by `newText`. */
export const ReplaceEditSchema = z.strictObject({
  path: PathSchema,
  oldText: z.string(),
  newText: z.string(),
  replaceAll: z.boolean().optional(),
});

/** Insert `text` after 1-based line `insertLine` (0 = at the top). */
export const InsertEditSchema = z.strictObject({
  path: PathSchema,
  insertLine: z.number().int().min(0),
  text: z.string(),
});

/**
 * A whole-file write: creates the file, or replaces it when `expectedSha256` (its current
 * content's hash) is given — so a stale write can never clobber newer bytes.
 */
export const WriteFileSchema = z.strictObject({
  path: PathSchema,
  content: z.string(),
  expectedSha256: z.string().regex(/^[0-9a-f]{64}$/, 'expected 64 lowercase hex digits').optional(),
});

/** One structured edit (format `edits`). */
export const StructuredEditSchema = z.union([ReplaceEditSchema, InsertEditSchema, WriteFileSchema]);

/** `$/progress` token: any string or number the client picks. */
export const ProgressTokenSchema = z.union([z.string().max(200), z.number()]);

const capped = <T extends z.ZodType>(values: T) =>
  z.record(PathSchema, values).refine((record) => Object.keys(record).length <= MAX_PRECONDITIONS, {
    message: `at most ${MAX_PRECONDITIONS} entries`,
  });

/** What to apply: exactly one of `patch`, `operations` and `edits` (see {@link hasOnePatchInput}). */
export const PatchInputSchema = z.object({
  /**
   * Patch text in any accepted dialect: unified / git diff, `*** Begin Patch` envelope, Aider
   * SEARCH/REPLACE blocks, or an `apply_patch <<'EOF'` shell command.
   */
  patch: z.string().optional(),
  /** V4A operations, instead of `patch`. */
  operations: z.array(V4AOperationSchema).max(MAX_OPERATIONS).optional(),
  /** Structured edits and whole-file writes, instead of `patch`. */
  edits: z.array(StructuredEditSchema).max(MAX_OPERATIONS).optional(),
});

/** How to apply one patch; shared by `patch/apply` and each patch of `patch/applyBatch`. */
export const PatchOptionsSchema = z.object({
  /** Dialect of the patch; `auto` (the default) detects it. */
  format: FormatNameSchema.optional(),
  /** Compute everything, write nothing (`status: "dry_run"`). */
  dryRun: z.boolean().optional(),
  /** All files or none (the default, `true`); `false` applies in order and may end `partial`. */
  atomic: z.boolean().optional(),
  /** `exact` turns off the whitespace and punctuation tolerance tiers. */
  fuzz: z.enum(['default', 'exact']).optional(),
  /**
   * Leading path components to remove from unified diff paths, as `patch -pN` / `git apply -pN`
   * do. Without it patchd works the level out (`a/`/`b/` prefixes, or the level at which the
   * paths exist in the workspace) and reports it in a `strip_level` diagnostic.
   */
  strip: z.number().int().min(0).max(MAX_STRIP).optional(),
  /**
   * Apply the inverse of the patch (`git apply -R`): added and removed lines, a rename's paths
   * and a replacement's texts swap sides. `not_reversible` when the patch does not show what
   * it replaced (a whole-file write, an insertion, a delete that does not list the lines).
   */
  reverse: z.boolean().optional(),
  /** Pre-images the caller asserts: path → lowercase sha256, or `""` for "must not exist". */
  expectedSha256ByPath: capped(z.string().regex(/^([0-9a-f]{64})?$/, 'expected 64 lowercase hex digits or ""')).optional(),
  /** Pre-images as `file/read` versions: path → version. */
  baseVersions: capped(z.string().max(200)).optional(),
});

/** True when exactly one of `patch`, `operations` and `edits` is given. */
export function hasOnePatchInput(input: { readonly patch?: unknown; readonly operations?: unknown; readonly edits?: unknown }): boolean {
  return [input.patch, input.operations, input.edits].filter((given) => given !== undefined).length === 1;
}

/** The refinement message of {@link hasOnePatchInput}. */
export const ONE_PATCH_INPUT = { message: 'send exactly one of `patch`, `operations` and `edits`', path: ['patch'] };

/** Params of `patch/apply`. Exactly one of `patch`, `operations` and `edits` is required. */
export const ApplyParamsSchema = z
  .strictObject({
    workspaceId: WorkspaceIdSchema,
    ...PatchInputSchema.shape,
    ...PatchOptionsSchema.shape,
    /** When given, each file receipt is also sent as `$/progress {token, value}` before the response. */
    partialResultToken: ProgressTokenSchema.optional(),
  })
  .refine(hasOnePatchInput, ONE_PATCH_INPUT);

export type V4AOperation = z.infer<typeof V4AOperationSchema>;
export type StructuredEdit = z.infer<typeof StructuredEditSchema>;
export type ProgressToken = z.infer<typeof ProgressTokenSchema>;
export type PatchOptions = z.infer<typeof PatchOptionsSchema>;
export type ApplyParams = z.infer<typeof ApplyParamsSchema>;

/**
 * `patch/apply`: parse, match and (unless `dryRun`) commit a patch; the result is a
 * {@link ReceiptSchema Receipt}. A patch that cannot be applied is a receipt with
 * `status: "rejected"`, never a JSON-RPC error.
 */
export const ApplyPatchRequest = defineRequest('patch/apply', ApplyParamsSchema, ReceiptSchema);

/** The per-file progress stream of `patch/apply`, for `connection.sendProgress` / `onProgress`. */
export const FileReceiptProgress = new ProgressType<FileReceipt>();

