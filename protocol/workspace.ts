/**
 * Workspaces: `workspace/open` and `workspace/close`.
 *
 * A workspace is a directory tree patchd may edit, identified by the realpath of its root.
 * Opening a root that is already open (by any client) returns the same `workspaceId`; the
 * workspace stays open until every opener has closed it or disconnected.
 */
import { z } from 'zod';
import { defineRequest } from './define.ts';

/** Longest path string accepted anywhere on the wire. */
export const MAX_PATH_CHARS = 4096;

/** An opaque workspace handle returned by `workspace/open`. */
export const WorkspaceIdSchema = z.string().min(1).max(200);

/** Params of `workspace/open`. */
export const OpenWorkspaceParamsSchema = z.object({
  /** Directory to open; relative paths resolve against the daemon's working directory. */
  root: z.string().min(1).max(MAX_PATH_CHARS),
  /** Reserved for workspace options; no option is defined in protocol version 1. */
  options: z.object({}).optional(),
});

/** Result of `workspace/open`. */
export const OpenWorkspaceResultSchema = z.object({
  workspaceId: WorkspaceIdSchema,
  /** The realpath of the root. */
  root: z.string(),
});

/** Params of `workspace/close`. */
export const CloseWorkspaceParamsSchema = z.object({
  workspaceId: WorkspaceIdSchema,
});

export type WorkspaceId = z.infer<typeof WorkspaceIdSchema>;
export type OpenWorkspaceParams = z.infer<typeof OpenWorkspaceParamsSchema>;
export type OpenWorkspaceResult = z.infer<typeof OpenWorkspaceResultSchema>;
export type CloseWorkspaceParams = z.infer<typeof CloseWorkspaceParamsSchema>;

/**
 * `workspace/open`: opens (or joins) the workspace at `root`. A root that is not an existing
 * directory is JSON-RPC error -32602 with `data.code === "bad_root"`.
 */
export const OpenWorkspaceRequest = defineRequest('workspace/open', OpenWorkspaceParamsSchema, OpenWorkspaceResultSchema);

/**
 * `workspace/close`: drops this client's hold on the workspace; replies `null`. An id this
 * client has not opened is -32602 with `data.code === "unknown_workspace"`.
 */
export const CloseWorkspaceRequest = defineRequest('workspace/close', CloseWorkspaceParamsSchema, z.null());
