/** Parsing and planning a patch in memory, every file it names holding one text: what the engine's property tests need. */
import { parsePatch, planPatch, requiredPaths, type FileSnapshot, type PatchInput, type Plan, type Result } from '../../daemon/engine/index.ts';

export function planOnText(input: PatchInput, text: string): Result<Plan> {
  const parsed = parsePatch(input);
  if (!parsed.ok) return parsed;
  const bytes = new TextEncoder().encode(text);
  const files = new Map<string, FileSnapshot>();
  for (const path of requiredPaths(parsed.value)) files.set(path, { kind: 'file', bytes });
  return planPatch(parsed.value, files);
}
