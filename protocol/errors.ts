/**
 * Error vocabulary of the wire contract: the codes a rejected patch carries in its receipt,
 * each with a one-line recovery hint written for a model, and the JSON-RPC error codes used
 * for malformed requests.
 *
 * This table is the single source for clients. The engine keeps its own copy
 * (`daemon/engine/errors.ts`, because `protocol/` must not import the daemon); a type-level
 * test (`test/server/errorHints.test.ts`) keeps the two identical.
 */
import { z } from 'zod';

/** Every receipt error code with its hint. */
export const ERROR_HINTS = {
  parse_error: 'The patch is malformed. Resend it as a complete unified diff or a complete *** Begin Patch … *** End Patch envelope.',
  missing_file_header: 'Every hunk needs a file header first: `--- a/path` then `+++ b/path` (or a `diff --git` line).',
  invalid_hunk_header: 'Hunk headers look like `@@ -old_start,old_count +new_start,new_count @@`; fix or drop the numbers.',
  unsupported_git_patch_feature: 'Binary, copy and submodule patches are not supported; send text changes only.',
  path_escape: 'Use a relative path inside the workspace, without `..` segments that leave it or an absolute path.',
  rename_path_mismatch: 'The `diff --git`, `rename from/to` and `---`/`+++` paths must name the same two files.',
  duplicate_file_patch: 'Each file may appear in one file section only; merge its hunks into a single section.',
  context_not_found: 'The context or removed lines are not in the file. Re-read the file and resend the hunk with its current text.',
  ambiguous_context: 'The context matches in several places. Add more surrounding lines (or an @@ anchor) so it matches once.',
  overlapping_edits: 'Two hunks change the same lines. Merge them into one hunk.',
  already_exists: 'The file already exists. Update it instead of adding it, or move it to a path that is free.',
  not_found: 'The file does not exist. Check the path, or add the file instead of updating it.',
  stale_file: 'The file changed since you read it. Re-read it and rebuild the patch against its current content.',
  binary_file: 'The file is binary or not UTF-8 text; patchd does not edit it.',
  precondition_required: 'Replacing a whole file needs expectedSha256 of its current content (from file/read); otherwise edit it.',
  unsupported_command: 'Only `apply_patch <<EOF … EOF`, optionally after `cd <dir> &&`, is accepted; send the patch itself.',
  limit_exceeded: 'The patch is larger than patchd accepts. Split it into smaller patches.',
  permission_denied: 'That path may not be written (for example inside .git/). Choose a path in the working tree.',
  timeout: 'Applying the patch took too long and was stopped. Send a smaller patch or more specific context.',
  busy: 'The workspace is busy. Retry shortly.',
  io_error: 'The filesystem refused the change. Nothing was written; check the path and retry.',
} as const;

/** A code carried by `Receipt.error.code`. */
export type ErrorCode = keyof typeof ERROR_HINTS;

/** Every receipt error code, in table order. */
export const ERROR_CODES = Object.keys(ERROR_HINTS) as [ErrorCode, ...ErrorCode[]];

/** Validates a receipt error code. */
export const ErrorCodeSchema = z.enum(ERROR_CODES);

/**
 * JSON-RPC error codes patchd answers with. These are for malformed requests only: a patch
 * that cannot be applied is a normal result (`Receipt.status === 'rejected'`).
 */
export const RpcErrorCodes = {
  /** The frame body is not JSON. */
  ParseError: -32700,
  /** The frame is JSON but not a JSON-RPC request, notification or response. */
  InvalidRequest: -32600,
  /** No such method. */
  MethodNotFound: -32601,
  /** The params do not match the method's schema, name an unknown workspace, or a bad root. */
  InvalidParams: -32602,
  /** A fault inside patchd; the message never carries a stack trace. */
  InternalError: -32603,
  /** The client cancelled the request (`$/cancelRequest`) before it finished. */
  RequestCancelled: -32800,
} as const;

/** Values of `error.data.code` on a JSON-RPC error, telling apart the causes of one numeric code. */
export const RPC_ERROR_DATA_CODES = [
  /** -32602: params failed validation; `data.issues` lists where. */
  'invalid_params',
  /** -32602: the `workspaceId` is not open. */
  'unknown_workspace',
  /** -32602: the root passed to `workspace/open` is not an existing directory. */
  'bad_root',
  /** -32600: a request arrived after `shutdown`. */
  'shutting_down',
] as const;

/** A value of `error.data.code`. */
export type RpcErrorDataCode = (typeof RPC_ERROR_DATA_CODES)[number];

/** One validation problem reported in `error.data.issues`. */
export const ParamsIssueSchema = z.object({
  /** Dotted path to the offending field (`""` for the params object itself). */
  path: z.string(),
  message: z.string(),
});

/**
 * The `data` member of patchd's JSON-RPC errors (absent on some errors). `file/read` failures
 * are -32602 with `code` set to a receipt error code (`not_found`, `binary_file`, …) and its
 * `hint`.
 */
export const RpcErrorDataSchema = z.object({
  code: z.union([z.enum(RPC_ERROR_DATA_CODES), ErrorCodeSchema]),
  hint: z.string().optional(),
  path: z.string().optional(),
  issues: z.array(ParamsIssueSchema).max(100).optional(),
});

/** The `data` member of patchd's JSON-RPC errors. */
export type RpcErrorData = z.infer<typeof RpcErrorDataSchema>;
