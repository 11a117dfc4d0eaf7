/**
 * Parsing a patch for a workspace (pool). A unified diff without `diff --git` headers names its
 * files at a strip level that depends on which files exist: the engine then asks (`pathProbe`)
 * and the workspace answers. When the files the engine guessed exist, its parse stands;
 * otherwise the patch is parsed again with the answer.
 */
import type { PatchInput, Result } from '../engine/index.ts';
import type { EnginePool } from '../pool/pool.ts';
import type { ParseOutput } from '../pool/tasks.ts';
import type { Workspace } from '../workspace/workspace.ts';

/** What runs the engine: the workspace's pool, or the engine in-process (the one-shot CLI). */
export type EngineRunner = Pick<EnginePool, 'parse' | 'plan'>;

export interface ParseContext {
  readonly workspace: Workspace;
  readonly pool: EngineRunner;
  readonly signal: AbortSignal;
}

export async function parseForWorkspace(input: PatchInput, context: ParseContext): Promise<Result<ParseOutput>> {
  const first = await context.pool.parse({ ...input, probe: true }, context.signal);
  const parsed = first.ok ? first.value.parsed : undefined;
  if (parsed?.pathProbe === undefined) return first;
  const expects = parsed.probeExpects;
  if (expects !== undefined && context.workspace.probePaths(expects).existingPaths.length === expects.length) return first;
  return context.pool.parse({ ...input, ...context.workspace.probePaths(parsed.pathProbe) }, context.signal);
}
