/**
 * Parsing a patch for a workspace (pool). A unified diff without `diff --git` headers names its
 * files at a strip level that depends on which files exist: the engine then asks (`pathProbe`),
 * the workspace answers, and the patch is parsed again with the answer.
 */
import type { PatchInput, Result } from '../engine/index.ts';
import type { EnginePool } from '../pool/pool.ts';
import type { ParseOutput } from '../pool/tasks.ts';
import type { Workspace } from '../workspace/workspace.ts';

export interface ParseContext {
  readonly workspace: Workspace;
  readonly pool: EnginePool;
  readonly signal: AbortSignal;
}

export async function parseForWorkspace(input: PatchInput, context: ParseContext): Promise<Result<ParseOutput>> {
  const first = await context.pool.parse({ ...input, probe: true }, context.signal);
  const probe = first.ok ? first.value.parsed.pathProbe : undefined;
  if (probe === undefined) return first;
  const existingPaths = context.workspace.existingFiles(probe);
  return context.pool.parse({ ...input, existingPaths }, context.signal);
}
