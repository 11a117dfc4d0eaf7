/**
 * Files: `file/read` and the `file/changed` notification.
 */
import { z } from 'zod';
import { defineNotification, defineRequest } from './define.ts';
import { MAX_PATH_CHARS, WorkspaceIdSchema } from './workspace.ts';

/** Params of `file/read`. */
export const ReadFileParamsSchema = z.strictObject({
  workspaceId: WorkspaceIdSchema,
  /** Workspace-relative path, normalised like patch paths. */
  path: z.string().min(1).max(MAX_PATH_CHARS),
});

/** Result of `file/read`. */
export const ReadFileResultSchema = z.object({
  path: z.string(),
  /** The text, decoded as UTF-8. */
  content: z.string(),
  /** Lowercase hex sha256 of the bytes on disk: usable in `expectedSha256ByPath`. */
  sha256: z.string(),
  /** Opaque version: usable in `baseVersions`. */
  version: z.string(),
});

/** Params of `file/changed`. */
export const FileChangedParamsSchema = z.object({
  workspaceId: WorkspaceIdSchema,
  path: z.string(),
  /** The new sha256, or `null` when the file was deleted. */
  sha256: z.string().nullable(),
});

export type ReadFileParams = z.infer<typeof ReadFileParamsSchema>;
export type ReadFileResult = z.infer<typeof ReadFileResultSchema>;
export type FileChangedParams = z.infer<typeof FileChangedParamsSchema>;

/**
 * `file/read`: a file's text, sha256 and version. A file that cannot be read (missing,
 * binary, outside the workspace) is -32602 with `data.code` set to the receipt error code.
 */
export const ReadFileRequest = defineRequest('file/read', ReadFileParamsSchema, ReadFileResultSchema);

/**
 * `file/changed` (daemon → client): a file this client read or patched (and whose workspace it
 * still holds open) changed outside patchd — an editor's save, another tool, a delete
 * (`sha256: null`). Never sent for patchd's own commits, whichever client made them. Arrives
 * about 100 ms after the change (the daemon lets a burst of writes settle, then hashes what is
 * there). The daemon watches a bounded number of files per workspace (the most recently used).
 */
export const FileChangedNotification = defineNotification('file/changed', FileChangedParamsSchema);
