/**
 * The MCP tools over one open workspace, through the same typed client every other caller uses:
 * `apply_patch`, `read_file`, `undo` and `session_diff`. Each result carries text for a model and, as
 * `structuredContent`, the wire result (the Receipt, the file); a result that did not do what
 * was asked has `isError: true`.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { RpcError, type Change, type Workspace } from '../../client/index.ts';
import { isUnreadable, patchSourceOf } from '../cli/input.ts';
import {
  ERROR_HINTS, ErrorCodeSchema, ReadFileParamsSchema, ReadFileResultSchema, ReceiptSchema, SessionDiffResultSchema, TransactionIdSchema,
  type Receipt,
} from '../../protocol/index.ts';
import { ApplyPatchToolInput } from '../../protocol/tools/index.ts';
import { errorLines, receiptText } from './text.ts';
import { openObject } from './openSchema.ts';

const APPLY_PATCH_DESCRIPTION = [
  'Apply a patch to files in the workspace, atomically: every file changes or none does.',
  'Prefer a unified diff (`--- a/path`, `+++ b/path`, `@@ -l,n +l,n @@` hunks with about three lines of context);',
  'the `*** Begin Patch` envelope, SEARCH/REPLACE blocks, `apply_patch <<EOF` commands and JSON (an array of V4A operations, or {"edits": [...]}) are accepted too.',
  'Line numbers are hints: context decides where a hunk goes. On rejection nothing is written and the result gives',
  'the error code, a hint and the nearest text in the file: re-read it and send a corrected patch.',
].join(' ');

const ApplyPatchInput = z.object({
  ...ApplyPatchToolInput.shape,
  dry_run: z.boolean().optional().describe('Check the patch and show what it would change, writing nothing.'),
});

const ReadFileInput = ReadFileParamsSchema.pick({ path: true });

const UndoInput = z.object({
  transaction_id: TransactionIdSchema.describe('The transaction_id an apply_patch (or undo) result gave; undoing an undo redoes.'),
});

export interface McpServerInfo {
  readonly name: string;
  readonly version: string;
}

export function createMcpServer(workspace: Workspace, info: McpServerInfo): McpServer {
  const server = new McpServer(info, {
    instructions: `Edits files under ${workspace.root}: apply_patch (a unified diff), read_file, undo (a transaction_id), session_diff (everything changed so far).`,
  });

  server.registerTool('apply_patch', {
    title: 'Apply a patch',
    description: APPLY_PATCH_DESCRIPTION,
    inputSchema: ApplyPatchInput.shape,
    outputSchema: openObject(ReceiptSchema),
    annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: false },
  }, async ({ patch, dry_run: dryRun }, { signal }) => receiptResult(await workspace.apply(changeOf(patch), { dryRun: dryRun === true, signal })));

  server.registerTool('read_file', {
    title: 'Read a file',
    description: 'Read a text file of the workspace (a path relative to its root): its content and sha256.',
    inputSchema: ReadFileInput.shape,
    outputSchema: openObject(ReadFileResultSchema),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async ({ path }) => {
    try {
      const file = await workspace.read(path);
      return { content: [{ type: 'text', text: file.content }], structuredContent: file };
    } catch (error) {
      return rpcErrorResult(error);
    }
  });

  server.registerTool('undo', {
    title: 'Undo a patch',
    description: 'Undo a patch applied earlier, by the transaction_id its result gave: every file it changed goes back as it was. Refused, writing nothing, when one of those files changed since.',
    inputSchema: UndoInput.shape,
    outputSchema: openObject(ReceiptSchema),
    annotations: { destructiveHint: true, idempotentHint: false, openWorldHint: false },
  }, async ({ transaction_id: transactionId }, { signal }) => receiptResult(await workspace.undo(transactionId, { signal })));

  server.registerTool('session_diff', {
    title: 'Session diff',
    description: 'The net change of every patch applied to the workspace since this server started, as one git diff.',
    inputSchema: {},
    outputSchema: openObject(SessionDiffResultSchema),
    annotations: { readOnlyHint: true, openWorldHint: false },
  }, async () => {
    try {
      const session = await workspace.sessionDiff();
      return { content: [{ type: 'text', text: session.diff === '' ? 'No file has changed since the session started.\n' : session.diff }], structuredContent: session };
    } catch (error) {
      // A session longer than retention keeps: its start was pruned (unknown_transaction).
      return rpcErrorResult(error);
    }
  });

  return server;
}

/** The patch text, or the V4A operations or edits it holds as JSON (read as `patchd apply` reads a file); JSON of no known shape goes as text, to be told so. */
function changeOf(patch: string): Change {
  const source = patchSourceOf(patch, 'auto', 'the patch');
  if (isUnreadable(source) || 'patch' in source) return patch;
  return 'operations' in source ? source.operations : { edits: source.edits };
}

function receiptResult(receipt: Receipt): CallToolResult {
  return {
    content: [{ type: 'text', text: receiptText(receipt) }],
    structuredContent: receipt,
    ...(receipt.status === 'rejected' || receipt.status === 'partial' ? { isError: true } : {}),
  };
}

/** A refusal with an error code (`not_found`, `path_escape`, `unknown_transaction`, …) as a model-readable error; anything else is the SDK's to report. */
function rpcErrorResult(error: unknown): CallToolResult {
  const code = ErrorCodeSchema.safeParse(error instanceof RpcError ? error.data?.code : undefined);
  if (!(error instanceof RpcError) || !code.success) throw error;
  const text = errorLines({ code: code.data, message: error.message, hint: error.data?.hint ?? ERROR_HINTS[code.data] }).join('\n');
  return { content: [{ type: 'text', text: `${text}\n` }], isError: true };
}
