/**
 * Error vocabulary of the wire contract: the codes a rejected patch carries in its receipt,
 * each with a one-line recovery hint written for a model, and the JSON-RPC error codes used
 * for malformed requests.
 *
 * The codes and hints live in `errorHints.ts`, a dependency-free table the engine imports too.
 */
import { z } from 'zod';
import { ERROR_HINTS } from './errorHints.ts';

export { ERROR_HINTS };


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
  /**
   * patchd cannot serve the request because of its own setup or its filesystem — not the
   * request, not a bug: `data.code` says what (`state_dir_unusable`; `io_error` for a system
   * call that failed outside any patch, e.g. out of descriptors), `data.hint` how to fix it.
   */
  ServerSetup: -32000,
} as const;

/** Values of `error.data.code` on a JSON-RPC error, telling apart the causes of one numeric code. */
export const RPC_ERROR_DATA_CODES = [
  /** -32602: params failed validation; `data.issues` lists where. */
  'invalid_params',
  /** -32602: the `workspaceId` is not open. */
  'unknown_workspace',
  /** -32602: the root passed to `workspace/open` is not an existing directory. */
  'bad_root',
  /** -32000: the daemon cannot create or use the workspace's state directory (journals, undo records); see `data.hint`. */
  'state_dir_unusable',
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
