/**
 * Both conformance runners (engine and wire) without a corpus: under CI a failing test, on a
 * user's clone a declared skip. Each runner is run as its own `node --test` process.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const empty = mkdtempSync(join(tmpdir(), 'patchd-no-corpus-'));
after(() => rmSync(empty, { recursive: true, force: true }));

const RUNNERS = ['test/conformance/engine.test.ts', 'test/e2e/conformance.test.ts'];

function runWithoutCorpus(runner: string, ci: boolean): { status: number | null; output: string } {
  // Without NODE_TEST_CONTEXT the nested `node --test` reports on its own, not to this runner.
  const { NODE_TEST_CONTEXT: _, ...inherited } = process.env;
  const env = { ...inherited, PATCHD_CONFORMANCE_DIR: empty, CI: ci ? 'true' : '' };
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=tap', runner], { cwd: repoRoot, env, encoding: 'utf8' });
  return { status: child.status, output: child.stdout + child.stderr };
}

for (const runner of RUNNERS) {
  test(`${runner} fails under CI=true when the corpus is missing`, () => {
    const { status, output } = runWithoutCorpus(runner, true);
    assert.notEqual(status, 0, output);
    assert.match(output, /# fail 1/);
  });

  test(`${runner} reports a skip on a user's clone when the corpus is missing`, () => {
    const { status, output } = runWithoutCorpus(runner, false);
    assert.equal(status, 0, output);
    assert.match(output, /# skipped 1/);
    assert.match(output, /# pass 0/);
  });
}
