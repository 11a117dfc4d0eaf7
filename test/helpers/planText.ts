/** Parsing and planning a patch in memory: every file it names holding one text, or each its own (absent: missing). */
import { parsePatch, planPatch, requiredPaths, type FileSnapshot, type PatchInput, type Plan, type Result } from '../../daemon/engine/index.ts';

export function planOnText(input: PatchInput, text: string): Result<Plan> {
  const parsed = parsePatch(input);
  if (!parsed.ok) return parsed;
  const bytes = new TextEncoder().encode(text);
  const files = new Map<string, FileSnapshot>();
  for (const path of requiredPaths(parsed.value)) files.set(path, { kind: 'file', bytes });
  return planPatch(parsed.value, files);
}

/** `files`: path → text; a path the patch names that is not there is missing. */
export function planOnFiles(input: PatchInput, files: Readonly<Record<string, string>>): Result<Plan> {
  const parsed = parsePatch(input);
  if (!parsed.ok) return parsed;
  const snapshots = new Map<string, FileSnapshot>();
  for (const path of requiredPaths(parsed.value)) {
    const text = files[path];
    snapshots.set(path, text === undefined ? { kind: 'missing' } : { kind: 'file', bytes: new TextEncoder().encode(text) });
  }
  return planPatch(parsed.value, snapshots);
}
