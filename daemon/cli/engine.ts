/**
 * The engine run in-process, for the one-shot CLI: a worker thread would cost more to boot
 * than a patch costs to apply, and the process ends with the patch anyway.
 */
import { ok, parsePatch, planPatch, requiredPaths } from '../engine/index.ts';
import type { EngineRunner } from '../server/parsePatch.ts';

export const inProcessEngine: EngineRunner = {
  async parse(input) {
    const parsed = parsePatch(input);
    return parsed.ok ? ok({ parsed: parsed.value, paths: requiredPaths(parsed.value) }) : parsed;
  },
  async plan(parsed, files, options) {
    return planPatch(parsed, files, options);
  },
};
