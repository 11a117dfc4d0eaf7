/**
 * The conformance corpus over the wire: every case the engine passes in memory must also pass
 * through a spawned daemon, its worker pool and the real workspace (one workspace, reset
 * between cases).
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { FormatName, Receipt, Workspace } from '../../client/index.ts';
import { assertOutcome } from '../helpers/conformance.ts';
import { corpusForRunner, loadSuite, readTree, SUITES, type CorpusCase } from '../helpers/corpus.ts';
import { suiteWorkspace } from '../helpers/suiteDaemon.ts';
import { writeFiles } from '../helpers/tempTree.ts';

const corpus = corpusForRunner();
if (corpus !== undefined) describeOverTheWire(corpus);

function describeOverTheWire(corpus: string): void {
  describe('conformance over the wire', () => {
    const shared = suiteWorkspace();

    for (const suite of SUITES) {
      for (const conformanceCase of loadSuite(corpus, suite)) {
        test(`${suite}/${conformanceCase.id}`, async () => {
          const { root } = shared.tree();
          resetTree(root, conformanceCase.input);
          const receipt = await applyCase(shared.workspace(), conformanceCase);
          assertOutcome(conformanceCase, { tree: readTree(root), error: receipt.status === 'rejected' ? receipt.error : undefined });
          if (receipt.status !== 'rejected') assert.equal(receipt.status, 'applied');
        });
      }
    }
  });
}

function applyCase(workspace: Workspace, conformanceCase: CorpusCase): Promise<Receipt> {
  const format = conformanceCase.format as FormatName;
  return workspace.apply(conformanceCase.operations ?? conformanceCase.patch ?? '', { format });
}

function resetTree(root: string, files: ReadonlyMap<string, Uint8Array>): void {
  for (const name of readdirSync(root)) rmSync(join(root, name), { recursive: true, force: true });
  writeFiles(root, Object.fromEntries(files));
}
