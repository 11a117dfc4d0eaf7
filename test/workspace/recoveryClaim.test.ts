/**
 * Two opens of one workspace at once after a crash (two processes on one state root, or two opens
 * in one process): recovery runs once, under the state dir's claim (`recoveryClaim.ts`).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { StateDirError } from '../../daemon/workspace/stateDir.ts';
import { commitAndDie, CRASH_TREE, listTree, withSandbox, type Sandbox } from './fixtures.ts';

const claimDir = (sandbox: Sandbox) => path.join(sandbox.state, 'recovery');
/** A pid that belonged to a process which has exited. */
const deadPid = (): number => spawnSync('true').pid ?? 999_999;

/** Everything recovery leaves once done: no segment, journal or claim. */
async function assertNothingLeft(sandbox: Sandbox): Promise<void> {
  assert.deepEqual(await readdir(path.join(sandbox.state, 'log')), []);
  assert.deepEqual(await readdir(path.join(sandbox.state, 'journal')), []);
  assert.deepEqual(await readdir(claimDir(sandbox)), []);
}

for (const killAt of [0, 2, 4]) {
  test(`two opens at once after a commit killed before rename ${killAt}: both open, the commit is rolled back and reported once`, async () => {
    await withSandbox(CRASH_TREE, async (sandbox) => {
      const before = await listTree(sandbox.root);
      commitAndDie(sandbox, killAt);
      const workspaces = await Promise.all([sandbox.open(), sandbox.open()]);
      const reports = workspaces.flatMap((workspace) => workspace.recovered);
      assert.equal(reports.length, 1, JSON.stringify(reports));
      assert.equal(reports[0]?.outcome, 'rolled_back');
      assert.equal(reports[0]?.paths.length, killAt);
      assert.deepEqual(await listTree(sandbox.root), before);
      await assertNothingLeft(sandbox);
      for (const workspace of workspaces) await workspace.close();
    });
  });
}

test('two processes opening at once after a crash: both open, one reports the recovered commit', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    const before = await listTree(sandbox.root);
    commitAndDie(sandbox, 3);
    const script = `const { Workspace } = await import(${JSON.stringify(new URL('../../daemon/workspace/workspace.ts', import.meta.url).href)});
      const workspace = await Workspace.open(process.argv[1], { stateDir: process.argv[2] });
      process.stdout.write(JSON.stringify(workspace.recovered)); await workspace.close();`;
    const run = () => new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, sandbox.root, sandbox.state], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`open exited ${code}: ${stderr}`))));
    });
    const recovered = (await Promise.all([run(), run()])).flatMap((stdout) => JSON.parse(stdout) as { outcome: string; paths: string[] }[]);
    assert.deepEqual(recovered.map(({ outcome, paths }) => ({ outcome, count: paths.length })), [{ outcome: 'rolled_back', count: 3 }]);
    assert.deepEqual(await listTree(sandbox.root), before);
    await assertNothingLeft(sandbox);
  });
});

test('an open with nothing to recover takes no claim', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    const workspace = await sandbox.open();
    assert.equal(existsSync(claimDir(sandbox)), false);
    await workspace.close();
  });
});

test('a claim its dead holder left is ignored and removed', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    const before = await listTree(sandbox.root);
    commitAndDie(sandbox, 2);
    await mkdir(claimDir(sandbox), { recursive: true });
    await writeFile(path.join(claimDir(sandbox), `${deadPid()}-0badc0de-1.claim`), '');
    const workspace = await sandbox.open({ recoveryWaitMs: 0 });
    assert.equal(workspace.recovered.length, 1);
    assert.deepEqual(await listTree(sandbox.root), before);
    await assertNothingLeft(sandbox);
    await workspace.close();
  });
});

test('a live process that keeps its claim past the wait: the open fails with a typed error and changes nothing', async () => {
  await withSandbox(CRASH_TREE, async (sandbox) => {
    commitAndDie(sandbox, 2);
    const crashed = await listTree(sandbox.root);
    const segments = await readdir(path.join(sandbox.state, 'log'));
    await mkdir(claimDir(sandbox), { recursive: true });
    // The test runner that started this file lives as long as it does.
    const held = `${process.ppid}-0badc0de-1.claim`;
    await writeFile(path.join(claimDir(sandbox), held), '');
    await assert.rejects(sandbox.open({ recoveryWaitMs: 0 }), (error: unknown) => {
      assert.ok(error instanceof StateDirError);
      assert.equal(error.code, 'state_dir_unusable');
      assert.match(error.message, new RegExp(`another patchd process \\(pid ${process.ppid}\\) has been recovering it`));
      return true;
    });
    assert.deepEqual(await listTree(sandbox.root), crashed);
    assert.deepEqual(await readdir(path.join(sandbox.state, 'log')), segments);
    assert.deepEqual(await readdir(claimDir(sandbox)), [held]);
  });
});
