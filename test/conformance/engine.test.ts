/** The conformance corpus run against the pure engine, with an in-memory workspace. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePatch, planPatch, requiredPaths, type FileSnapshot, type Plan } from '../../daemon/engine/index.ts';
import { diffTrees, findCorpus, loadSuite, restoreLostDeleteTargets, SUITES, type CorpusCase } from '../helpers/corpus.ts';

const corpus = findCorpus();

if (!corpus) {
  test('conformance corpus', (t) => {
    assert.notEqual(process.env.CI, 'true', 'CI=true but no conformance corpus at ../shared/conformance or $PATCHD_CONFORMANCE_DIR');
    t.skip('no conformance corpus beside this checkout (../shared/conformance or $PATCHD_CONFORMANCE_DIR): skipped');
  });
} else {
  for (const suite of SUITES) {
    describe(`engine conformance: ${suite}`, () => {
      for (const conformanceCase of loadSuite(corpus, suite)) {
        test(conformanceCase.id, (t) => {
          const repaired = restoreLostDeleteTargets(conformanceCase);
          if (repaired.length > 0) t.diagnostic(`corpus defect: input/ lacks ${repaired.join(', ')} that the case deletes; ran with a placeholder`);
          checkCase(conformanceCase);
        });
      }
    });
  }
}

type Outcome = { applied: true; tree: Map<string, Uint8Array> } | { applied: false; code: string; message: string };

function runOnEngine(conformanceCase: CorpusCase): Outcome {
  const parsed = parsePatch({ patch: conformanceCase.patch, operations: conformanceCase.operations, format: conformanceCase.format as 'unified' });
  if (!parsed.ok) return { applied: false, code: parsed.error.code, message: parsed.error.message };
  const files = new Map<string, FileSnapshot>();
  for (const path of requiredPaths(parsed.value)) files.set(path, snapshotOf(conformanceCase.input, path));
  const plan = planPatch(parsed.value, files);
  if (!plan.ok) return { applied: false, code: plan.error.code, message: plan.error.message };
  return { applied: true, tree: applyPlanInMemory(conformanceCase.input, plan.value) };
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

function checkCase(conformanceCase: CorpusCase): void {
  const outcome = runOnEngine(conformanceCase);
  if (conformanceCase.expect === 'apply') {
    assert.ok(outcome.applied, `expected apply, got ${outcome.applied ? '' : `${outcome.code}: ${outcome.message}`}`);
    const difference = diffTrees(outcome.tree, conformanceCase.expected);
    assert.equal(difference, undefined, `wrong bytes: ${difference}`);
  } else {
    assert.ok(!outcome.applied, `expected reject with ${conformanceCase.error}, but the patch applied`);
    assert.equal(outcome.code, conformanceCase.error, outcome.message);
  }
}
