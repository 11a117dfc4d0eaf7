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

/** A glob over workspace-relative paths (`*` within a segment, `**` across segments, `{a,b}`, `?`, `[a-z]`; dot files included). */
export const PathGlobSchema = z.string().min(1).max(1000);

/** When a client is asked to approve its own patches; see `workspace/open`. */
export const ApprovalPolicySchema = z.union([
  z.literal('never'),
  z.literal('always'),
  z.strictObject({ ask: z.array(PathGlobSchema).max(100).optional(), deny: z.array(PathGlobSchema).max(100).optional() }),
]);

/** An opaque workspace handle returned by `workspace/open`. */
export const WorkspaceIdSchema = z.string().min(1).max(200);

/** Params of `workspace/open`. */
export const OpenWorkspaceParamsSchema = z.strictObject({
  /** Directory to open; relative paths resolve against the daemon's working directory. */
  root: z.string().min(1).max(MAX_PATH_CHARS),
  options: z.strictObject({
    /**
     * Which of this client's patches need its consent (`patch/approve`) before they are
     * written: `never` (default), `always`, or those touching a path matching an `ask` glob.
     * A patch touching a path matching a `deny` glob is rejected `permission_denied` unasked.
     * The client's undos and redos (`patch/undo`) are held to the same policy.
     */
    approval: ApprovalPolicySchema.optional(),
    /** How long the daemon waits for an answer before rejecting the patch `declined` (default 300 000). */
    approvalTimeoutMs: z.number().int().min(1).max(86_400_000).optional(),
  }).optional(),
});

/**
 * A commit a killed daemon left unfinished, and how opening the workspace finished it:
 * `rolled_back` to its pre-image (it was never acknowledged), or `rolled_forward` when every
 * post-image was already in place. Either way each path holds the whole pre- or post-image,
 * except those listed in `conflicts` and `damaged`, which hold what they held before the open.
 * `left_as_found`: its journal was damaged while it waited in the state dir (a disk fault, or an
 * edit by hand): its header no longer matches the checksum it was written with, or the journal
 * no longer reads back whole (cut short, not JSON). None of it could be trusted: nothing was
 * written, every path its header names is listed in `damaged` (none when no header can be
 * read; `transactionId` is then what the journal's file name says), and the journal is kept in
 * the state dir.
 */
export const RecoverySchema = z.object({
  transactionId: z.string(),
  outcome: z.enum(['rolled_back', 'rolled_forward', 'left_as_found']),
  /** Paths put back to their pre-image (rolled back), or at their post-image (rolled forward). */
  paths: z.array(z.string()),
  /** Paths left as found: someone changed them after the crash (the journal is kept in the state dir). */
  conflicts: z.array(z.string()),
  /**
   * Paths left as found because the journal's copy of the bytes to write there no longer
   * matches the sha256 it keeps of them (a disk fault, or an edit by hand): writing them would
   * have put wrong bytes in the file; or, with `left_as_found`, every path the damaged journal's
   * header names. The journal is kept in the state dir. Absent when none.
   */
  damaged: z.array(z.string()).optional(),
  /**
   * Where the journal was kept (a `….journal.conflict` file in the state dir, for the age the
   * daemon's retention keeps): the only copy of what was left unwritten. Present whenever some
   * path was left as found, or the journal was damaged.
   */
  keptAside: z.string().optional(),
});

/**
 * A segment of the commit log a killed process left that was found damaged (a disk fault, an
 * edit by hand): what it logged in the lost bytes is gone, and a commit in flight there may stay
 * half-applied — its journal was in them, so nothing could roll it back. The rest of the segment
 * was recovered as usual, and the segment kept aside.
 */
export const DamagedLogSegmentSchema = z.object({
  /** Its name in the state dir's `log/`. */
  segment: z.string(),
  /** Where it was kept (a `….log.damaged` file, for the age the daemon's retention keeps). */
  keptAside: z.string(),
  /** How many of its bytes no frame could be read from. */
  lostBytes: z.number().int(),
});

/** Result of `workspace/open`. */
export const OpenWorkspaceResultSchema = z.object({
  workspaceId: WorkspaceIdSchema,
  /** The realpath of the root. */
  root: z.string(),
  /** Present when this open found unfinished commits and finished them (also logged by the daemon). */
  recovered: z.array(RecoverySchema).optional(),
  /** Present when this open found commit log segments damaged (also logged by the daemon), told to the first opener only as `recovered` is. */
  damagedLog: z.array(DamagedLogSegmentSchema).optional(),
});

/** Params of `workspace/close`. */
export const CloseWorkspaceParamsSchema = z.strictObject({
  workspaceId: WorkspaceIdSchema,
});

export type ApprovalPolicy = z.infer<typeof ApprovalPolicySchema>;
export type WorkspaceId = z.infer<typeof WorkspaceIdSchema>;
export type OpenWorkspaceParams = z.infer<typeof OpenWorkspaceParamsSchema>;
export type Recovery = z.infer<typeof RecoverySchema>;
export type DamagedLogSegment = z.infer<typeof DamagedLogSegmentSchema>;
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
