/** The conformance corpus run against the pure engine, with an in-memory workspace. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { assertOutcome, runOnEngine } from '../helpers/conformance.ts';
import { findCorpus, loadSuite, restoreLostDeleteTargets, SUITES } from '../helpers/corpus.ts';

const corpus = findCorpus();

if (!corpus) {
  // Under CI the corpus must be there: the test runs and fails. On a user's clone it is reported as skipped.
  const inCi = process.env.CI === 'true';
  const skip = inCi ? false : 'no conformance corpus beside this checkout (../shared/conformance or $PATCHD_CONFORMANCE_DIR): skipped';
  test('conformance corpus', { skip }, () => {
    assert.fail('CI=true but no conformance corpus at ../shared/conformance or $PATCHD_CONFORMANCE_DIR');
  });
} else {
  for (const suite of SUITES) {
    describe(`engine conformance: ${suite}`, () => {
      for (const conformanceCase of loadSuite(corpus, suite)) {
        test(conformanceCase.id, (t) => {
          const repaired = restoreLostDeleteTargets(conformanceCase);
          if (repaired.length > 0) t.diagnostic(`corpus defect: input/ lacks ${repaired.join(', ')} that the case deletes; ran with a placeholder`);
          assertOutcome(conformanceCase, runOnEngine(conformanceCase));
        });
      }
    });
  }
}
