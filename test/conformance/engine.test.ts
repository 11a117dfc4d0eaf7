/** The conformance corpus run against the pure engine, with an in-memory workspace. */
import { describe, test } from 'node:test';
import { assertOutcome, runOnEngine } from '../helpers/conformance.ts';
import { corpusForRunner, loadSuite, SUITES } from '../helpers/corpus.ts';

const corpus = corpusForRunner();

for (const suite of corpus === undefined ? [] : SUITES) {
  describe(`engine conformance: ${suite}`, () => {
    for (const conformanceCase of loadSuite(corpus!, suite)) {
      test(conformanceCase.id, () => assertOutcome(conformanceCase, runOnEngine(conformanceCase)));
    }
  });
}
