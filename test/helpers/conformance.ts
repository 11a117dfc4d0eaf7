/** Running a conformance case and judging its outcome, shared by the engine and the wire runners. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parsePatch, planPatch, requiredPaths, type FileSnapshot, type FormatName, type Plan } from '../../daemon/engine/index.ts';
import { diffTrees, type CorpusCase } from './corpus.ts';

/** What a run left: the tree (on disk or in memory), and the error when the patch was rejected. */
export interface CaseOutcome {
  readonly tree: ReadonlyMap<string, Uint8Array>;
  readonly error?: { readonly code: string; readonly message: string } | undefined;
}

/** The case through the pure engine, on an in-memory copy of `input/`. */
export function runOnEngine(conformanceCase: CorpusCase): CaseOutcome {
  const format = conformanceCase.format as FormatName;
  const parsed = parsePatch({ patch: conformanceCase.patch, operations: conformanceCase.operations, format });
  if (!parsed.ok) return { tree: conformanceCase.input, error: parsed.error };
  const files = new Map<string, FileSnapshot>();
  for (const path of requiredPaths(parsed.value)) files.set(path, snapshotOf(conformanceCase.input, path));
  const plan = planPatch(parsed.value, files);
  if (!plan.ok) return { tree: conformanceCase.input, error: plan.error };
  return { tree: applyPlanInMemory(conformanceCase.input, plan.value) };
}

/** Apply cases: applied, with exactly the expected tree. Reject cases: exactly the expected code, tree untouched. */
export function assertOutcome(conformanceCase: CorpusCase, outcome: CaseOutcome): void {
  if (conformanceCase.expect === 'apply') {
    assert.equal(outcome.error, undefined, `expected apply, got ${outcome.error?.code}: ${outcome.error?.message}`);
    const difference = diffTrees(outcome.tree, conformanceCase.expected);
    assert.equal(difference, undefined, `wrong bytes: ${difference}`);
  } else {
    assert.ok(outcome.error, `expected reject with ${conformanceCase.error}, but the patch applied`);
    assert.equal(outcome.error.code, expectedCode(conformanceCase), outcome.error.message);
    assert.equal(diffTrees(outcome.tree, conformanceCase.input), undefined, 'a rejected patch changed the tree');
  }
}

function snapshotOf(tree: ReadonlyMap<string, Uint8Array>, path: string): FileSnapshot {
  const bytes = tree.get(path);
  if (bytes) return { kind: 'file', bytes };
  const isDirectory = [...tree.keys()].some((key) => key.startsWith(`${path}/`));
  return isDirectory ? { kind: 'directory' } : { kind: 'missing' };
}

function applyPlanInMemory(input: ReadonlyMap<string, Uint8Array>, plan: Plan): Map<string, Uint8Array> {
  const tree = new Map(input);
  for (const file of plan.files) {
    if (file.fromPath) tree.delete(file.fromPath);
    if (file.after) tree.set(file.path, file.after);
    else tree.delete(file.path);
  }
  return tree;
}

/**
 * The code a reject case must report. The corpus predates `already_applied` (issue #8) and files
 * its "patch applied twice" cases under `context_not_found`; patchd now names them exactly.
 */
function expectedCode(conformanceCase: CorpusCase): string | undefined {
  const notes = (JSON.parse(readFileSync(join(conformanceCase.dir, 'case.json'), 'utf8')) as { notes?: string }).notes ?? '';
  return conformanceCase.error === 'context_not_found' && notes.includes('already contains the change') ? 'already_applied' : conformanceCase.error;
}
