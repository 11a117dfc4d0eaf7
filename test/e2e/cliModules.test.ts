/**
 * A one-shot `patchd apply` loads only what one patch needs: the engine runs in-process, and
 * nothing of the daemon's wire, worker pool, watcher, schemas or MCP server is loaded. This is
 * what keeps the command fast; it is asserted on the list of loaded modules, never on a time.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { BIN } from '../helpers/cli.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const MODULE_LOG = fileURLToPath(new URL('../helpers/moduleLog.mjs', import.meta.url));
const PATCH = '--- a/greet.txt\n+++ b/greet.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n';

/** What a one-shot apply must never load (URL fragments). */
const NOT_NEEDED = {
  'zod (schemas are for the wire and for reading records back)': '/node_modules/zod/',
  chokidar: '/node_modules/chokidar/',
  'vscode-jsonrpc': '/node_modules/vscode-jsonrpc/',
  piscina: '/node_modules/piscina/',
  'the MCP SDK': '/node_modules/@modelcontextprotocol/',
  "jsdiff's index (every diff and parser it has; receipts need only its patch writer)": '/node_modules/diff/libesm/index.',
  'the worker pool': '/daemon/pool/',
  'the MCP server': '/daemon/mcp/',
  'the client': '/client/',
  'the JSON-RPC connection': '/daemon/server/connection.',
  'the protocol schemas': '/protocol/index.',
};

/** Runs `patchd apply ARGS -C <workspace>` on PATCH from stdin; returns the run and every module URL it loaded. */
function applyLoggingModules(args: readonly string[]) {
  const tree = createTempTree({ 'greet.txt': 'hello\nworld\n' });
  const log = join(tree.base, 'modules.txt');
  writeFileSync(log, '');
  const run = spawnSync(process.execPath, ['--import', MODULE_LOG, BIN, 'apply', ...args, '-C', tree.root], {
    input: PATCH, encoding: 'utf8', timeout: 60_000, env: { ...process.env, PATCHD_TEST_MODULE_LOG: log },
  });
  const loaded = readFileSync(log, 'utf8').trim().split('\n');
  return { tree, run, loaded };
}

function assertOnlyWhatApplyNeeds(loaded: readonly string[]): void {
  assert.ok(loaded.some((url) => url.includes('/daemon/engine/plan.')), 'the engine ran in this process');
  for (const [name, fragment] of Object.entries(NOT_NEEDED)) {
    assert.deepEqual(loaded.filter((url) => url.includes(fragment)), [], `${name} was loaded`);
  }
}

describe('patchd apply loads only what one patch needs', () => {
  test('a real apply writes the file with the engine in-process', () => {
    const { tree, run, loaded } = applyLoggingModules([]);
    using _ = tree;
    assert.equal(run.status, 0, run.stderr);
    assert.equal(tree.text('greet.txt'), 'hello\nthere\n');
    assertOnlyWhatApplyNeeds(loaded);
  });

  test('a dry run reports the change and leaves the file', () => {
    const { tree, run, loaded } = applyLoggingModules(['--dry-run']);
    using _ = tree;
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stdout, /would change 1 file/);
    assert.equal(tree.text('greet.txt'), 'hello\nworld\n');
    assertOnlyWhatApplyNeeds(loaded);
  });

  test('--check is silent when the patch applies', () => {
    const { tree, run, loaded } = applyLoggingModules(['--check']);
    using _ = tree;
    assert.deepEqual([run.status, run.stdout, run.stderr], [0, '', '']);
    assert.equal(tree.text('greet.txt'), 'hello\nworld\n');
    assertOnlyWhatApplyNeeds(loaded);
  });

  test('--json prints the whole receipt, diff included, still without the schemas', () => {
    const { tree, run, loaded } = applyLoggingModules(['--dry-run', '--json']);
    using _ = tree;
    assert.equal(run.status, 0, run.stderr);
    const receipt = JSON.parse(run.stdout) as { status: string; files: { diff: string }[] };
    assert.equal(receipt.status, 'dry_run');
    assert.match(receipt.files[0]!.diff, /^-world\n\+there$/m);
    assertOnlyWhatApplyNeeds(loaded);
  });
});
