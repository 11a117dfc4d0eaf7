/** `patchd apply` loads only what one patch needs: no JSON-RPC, no worker pool, no client. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BIN } from '../helpers/cli.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const MODULE_LOG = fileURLToPath(new URL('../helpers/moduleLog.mjs', import.meta.url));

test('a one-shot apply runs the engine in-process and never loads vscode-jsonrpc, piscina or the client', () => {
  using tree = createTempTree({ 'greet.txt': 'hello\nworld\n' });
  const log = join(tree.base, 'modules.txt');
  writeFileSync(log, '');
  const patch = '--- a/greet.txt\n+++ b/greet.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n';
  const run = spawnSync(process.execPath, ['--import', MODULE_LOG, BIN, 'apply', '-C', tree.root], {
    input: patch, encoding: 'utf8', timeout: 60_000, env: { ...process.env, PATCHD_TEST_MODULE_LOG: log },
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(tree.text('greet.txt'), 'hello\nthere\n');
  const loaded = readFileSync(log, 'utf8').trim().split('\n');
  assert.ok(loaded.some((url) => url.includes('/daemon/engine/plan.')), 'the engine ran in this process');
  for (const unneeded of ['/node_modules/vscode-jsonrpc/', '/node_modules/piscina/', '/daemon/pool/', '/client/', '/daemon/server/connection.']) {
    assert.deepEqual(loaded.filter((url) => url.includes(unneeded)), [], `${unneeded} was loaded`);
  }
});
