/**
 * The engine's entry points. Pure: strings and bytes in, data out; nothing thrown.
 *
 *   parsePatch(input)                  → ParsedPatch (paths normalised, escapes refused) from patch
 *                                        text (unified, codex envelope, SEARCH/REPLACE blocks, an
 *                                        apply_patch shell heredoc), V4A operations or structured edits
 *   requiredPaths(parsed)              → the paths whose current state the plan needs
 *   planPatch(parsed, files, options)  → Plan (new bytes per file, hunk reports, diffs)
 */
export { parsePatch, requiredPaths } from './parse.ts';
export { planPatch } from './plan.ts';
export * from './types.ts';
export * from './errors.ts';
export { LIMITS } from './limits.ts';
