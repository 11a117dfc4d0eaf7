/**
 * Time travel over the conformance corpus, through one spawned daemon: every case that applies
 * is undone to its exact input tree (bytes and executable bits) and redone to its exact
 * post-image; and its `session/diff`, given to real `git apply` on a copy of the input,
 * produces the same tree.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { FormatName } from '../../client/index.ts';
import { findCorpus, loadSuite, SUITES } from '../helpers/corpus.ts';
import { resetTreeWithModes, treeWithModes } from '../helpers/modeTree.ts';
import { suiteWorkspace } from '../helpers/suiteDaemon.ts';

const corpus = findCorpus();

describe('undo, redo and session/diff of every applying conformance case', { skip: corpus === undefined ? 'no conformance corpus beside this checkout' : false }, () => {
  const shared = suiteWorkspace();

  for (const suite of corpus === undefined ? [] : SUITES) {
    for (const conformanceCase of loadSuite(corpus!, suite).filter((candidate) => candidate.expect === 'apply')) {
      test(`${suite}/${conformanceCase.id}`, async () => {
        const workspace = shared.workspace();
        const { root } = shared.tree();
        resetTreeWithModes(root, conformanceCase.input, join(conformanceCase.dir, 'input'));
        const input = treeWithModes(root);
        const [previous] = await workspace.transactions({ limit: 1 });
        const patch = conformanceCase.operations ?? conformanceCase.patch ?? '';
        const applied = await workspace.apply(patch, { format: conformanceCase.format as FormatName });
        assert.equal(applied.status, 'applied', JSON.stringify(applied.error));
        const post = treeWithModes(root);

        const { diff } = await workspace.sessionDiff({ since: previous?.transactionId });
        assert.deepEqual(gitApplied(conformanceCase.input, join(conformanceCase.dir, 'input'), diff), post, diff);

        if (applied.files.length === 0) {
          // A patch that changes nothing (a mode-only git diff: modes are never executed) commits no transaction.
          assert.equal((await workspace.undo(applied.transactionId)).error?.code, 'unknown_transaction');
          return;
        }
        const undone = await workspace.undo(applied.transactionId);
        assert.equal(undone.status, 'applied', JSON.stringify(undone.error));
        assert.equal(undone.format, 'undo');
        assert.deepEqual(treeWithModes(root), input);
        const redone = await workspace.undo(undone.transactionId);
        assert.equal(redone.status, 'applied', JSON.stringify(redone.error));
        assert.deepEqual(treeWithModes(root), post);
      });
    }
  }
});

/** The tree `git apply` makes of `diff` on a copy of the input. */
function gitApplied(input: ReadonlyMap<string, Uint8Array>, inputDir: string, diff: string): Record<string, string> {
  const scratch = mkdtempSync(join(tmpdir(), 'patchd-git-apply-'));
  try {
    const copy = join(scratch, 'tree');
    mkdirSync(copy);
    resetTreeWithModes(copy, input, inputDir);
    const patchFile = join(scratch, 'session.diff');
    writeFileSync(patchFile, diff);
    if (diff !== '') execFileSync('git', ['apply', '--whitespace=nowarn', patchFile], { cwd: copy, stdio: ['ignore', 'ignore', 'pipe'] });
    return treeWithModes(copy);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
