/**
 * Commit-time truth, through the `patch/apply` flow with a real workspace and pool: a change
 * made outside patchd between plan and commit is re-planned on (once) or reported
 * `stale_file` — never written over — including a file swapped for a directory or a symlink.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { ApplyParams } from '../../protocol/index.ts';
import { EnginePool } from '../../daemon/pool/pool.ts';
import { applyPatch } from '../../daemon/server/applyPatch.ts';
import { RequestCancelledError } from '../../daemon/server/failures.ts';
import type { CommitHooks } from '../../daemon/workspace/workspace.ts';
import { sha256Hex } from '../../daemon/workspace/workspace.ts';
import { encode, withSandbox, type Sandbox } from '../workspace/fixtures.ts';

let pool: EnginePool;
before(() => {
  pool = new EnginePool({ taskTimeoutMs: 10_000, onError: (error) => assert.fail(String(error)) });
});
after(async () => {
  await pool.close();
});

const ORIGINAL = 'alpha\nbeta\ngamma\n';
const PATCH = '--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n';
const sha = (text: string) => sha256Hex(encode(text));

/** Applies `PATCH` (or `params`) with `hooks` in a fresh sandbox holding f.txt; `check` sees the receipt and the sandbox. */
async function applyWith(hooks: (sandbox: Sandbox) => CommitHooks, params: Partial<ApplyParams>, check: (receipt: Awaited<ReturnType<typeof applyPatch>>, sandbox: Sandbox) => void) {
  await withSandbox({ 'f.txt': ORIGINAL }, async (sandbox) => {
    const workspace = await sandbox.open({ hooks: hooks(sandbox) });
    try {
      const receipt = await applyPatch({ workspaceId: 'w', patch: PATCH, ...params }, { workspace, pool, signal: new AbortController().signal });
      check(receipt, sandbox);
    } finally {
      await workspace.close();
    }
  });
}

/** A hook that runs `change` the first `times` times it is called. */
function times(count: number, change: () => void): () => void {
  let left = count;
  return () => {
    if (left-- > 0) change();
  };
}

const write = (sandbox: Sandbox, text: string) => () => writeFileSync(path.join(sandbox.root, 'f.txt'), text);
const read = (sandbox: Sandbox) => readFileSync(path.join(sandbox.root, 'f.txt'), 'utf8');

test('without preconditions, a file changed after planning is planned again on its new bytes, once', async () => {
  const theirs = `${ORIGINAL}delta\n`;
  await applyWith((sandbox) => ({ beforeVerify: times(1, write(sandbox, theirs)) }), {}, (receipt, sandbox) => {
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(receipt.replanned, true);
    assert.deepEqual(receipt.diagnostics.filter((d) => d.code === 'replanned').map((d) => d.path), ['f.txt']);
    assert.equal(receipt.files[0]?.sha256Before, sha(theirs), 'the receipt is based on their bytes');
    assert.equal(read(sandbox), 'alpha\nBETA\ngamma\ndelta\n');
  });
});

test('with a pinned sha256 the same race is stale_file naming the path and its current sha256; their bytes stay', async () => {
  const theirs = `${ORIGINAL}delta\n`;
  const pinned = { expectedSha256ByPath: { 'f.txt': sha(ORIGINAL) } };
  await applyWith((sandbox) => ({ beforeVerify: times(1, write(sandbox, theirs)) }), pinned, (receipt, sandbox) => {
    assert.equal(receipt.status, 'rejected');
    assert.equal(receipt.error?.code, 'stale_file');
    assert.equal(receipt.error?.path, 'f.txt');
    assert.equal(receipt.error?.currentSha256, sha(theirs));
    assert.equal(receipt.replanned, undefined);
    assert.equal(read(sandbox), theirs);
  });
});

test('a version pin from file/read holds under the locks the same way', async () => {
  const theirs = 'alpha\nbeta\ngamma\nepsilon\n';
  const pinned = { baseVersions: { 'f.txt': `sha256:${sha(ORIGINAL).slice(0, 16)}` } };
  await applyWith((sandbox) => ({ beforeVerify: times(1, write(sandbox, theirs)) }), pinned, (receipt, sandbox) => {
    assert.equal(receipt.error?.code, 'stale_file');
    assert.equal(receipt.error?.currentSha256, sha(theirs));
    assert.equal(read(sandbox), theirs);
  });
});

test('a file that keeps changing is re-planned only once, then stale_file; the last outside write stays', async () => {
  let round = 0;
  await applyWith((sandbox) => ({ beforeVerify: () => write(sandbox, `${ORIGINAL}round ${++round}\n`)() }), {}, (receipt, sandbox) => {
    assert.equal(receipt.error?.code, 'stale_file');
    assert.equal(round, 2);
    assert.equal(receipt.error?.currentSha256, sha(`${ORIGINAL}round 2\n`));
    assert.equal(read(sandbox), `${ORIGINAL}round 2\n`);
  });
});

test('a re-plan on bytes the patch no longer fits is a normal rejection, and nothing is written', async () => {
  await applyWith((sandbox) => ({ beforeVerify: times(1, write(sandbox, 'rewritten\n')) }), {}, (receipt, sandbox) => {
    assert.equal(receipt.error?.code, 'context_not_found');
    assert.equal(read(sandbox), 'rewritten\n');
  });
});

test('an outside write between the commit\'s verification and its rename is caught by the last look, and re-planned', async () => {
  const theirs = `${ORIGINAL}late\n`;
  await applyWith((sandbox) => ({ beforeRename: times(1, write(sandbox, theirs)) }), {}, (receipt, sandbox) => {
    assert.equal(receipt.status, 'applied', JSON.stringify(receipt.error));
    assert.equal(receipt.replanned, true);
    assert.equal(read(sandbox), 'alpha\nBETA\ngamma\nlate\n');
  });
});

test('a file replaced by a directory between plan and commit: a typed rejection, the directory untouched', async () => {
  const swap = (sandbox: Sandbox) => () => {
    rmSync(path.join(sandbox.root, 'f.txt'));
    mkdirSync(path.join(sandbox.root, 'f.txt'));
  };
  await applyWith((sandbox) => ({ beforeVerify: times(1, swap(sandbox)) }), {}, (receipt, sandbox) => {
    assert.equal(receipt.error?.code, 'not_found');
    assert.match(receipt.error?.message ?? '', /directory/);
    assert.ok(statSync(path.join(sandbox.root, 'f.txt')).isDirectory());
  });
});

test('a file replaced by a symlink between plan and commit is refused; the link and its target are untouched', async () => {
  for (const [target, code] of [['inside.txt', 'permission_denied'], ['../outside/secret.txt', 'path_escape']] as const) {
    const swap = (sandbox: Sandbox) => () => {
      writeFileSync(path.join(sandbox.root, 'inside.txt'), ORIGINAL);
      rmSync(path.join(sandbox.root, 'f.txt'));
      symlinkSync(target, path.join(sandbox.root, 'f.txt'));
    };
    await applyWith((sandbox) => ({ beforeVerify: times(1, swap(sandbox)) }), {}, (receipt, sandbox) => {
      assert.equal(receipt.error?.code, code);
      assert.equal(readFileSync(path.join(sandbox.root, 'inside.txt'), 'utf8'), ORIGINAL);
      assert.equal(readFileSync(path.join(sandbox.outside, 'secret.txt'), 'utf8'), 'outside bytes\n');
    });
  }
});

test('patches on one file wait for each other in arrival order: none is lost, none needs a re-plan', async () => {
  await withSandbox({ 'list.md': '# list\nend\n' }, async (sandbox) => {
    const workspace = await sandbox.open();
    try {
      const patches = Array.from({ length: 20 }, (_, n) => `--- a/list.md\n+++ b/list.md\n@@ -1,1 +1,2 @@\n # list\n+item ${n}\n`);
      // Each its own signal, as each request has one (one shared by twenty waiters passes Node's listener limit).
      const receipts = await Promise.all(patches.map((patch) => applyPatch({ workspaceId: 'w', patch }, { workspace, pool, signal: new AbortController().signal })));
      assert.deepEqual(receipts.map((receipt) => receipt.status), patches.map(() => 'applied'));
      assert.ok(receipts.every((receipt) => receipt.replanned === undefined));
      const lines = readFileSync(path.join(sandbox.root, 'list.md'), 'utf8').split('\n');
      assert.deepEqual(lines.filter((line) => line.startsWith('item')).sort(), patches.map((_, n) => `item ${n}`).sort());
    } finally {
      await workspace.close();
    }
  });
});

test('a patch cancelled while it waits for a lock throws RequestCancelledError and leaves the lock to the next', async () => {
  await withSandbox({ 'f.txt': ORIGINAL }, async (sandbox) => {
    const workspace = await sandbox.open();
    try {
      const holder = await workspace.lock(['f.txt']);
      const cancel = new AbortController();
      let queued!: () => void;
      const isQueued = new Promise<void>((resolve) => (queued = resolve));
      const turn = { ready: Promise.resolve(), done: () => queued() };
      const cancelled = applyPatch({ workspaceId: 'w', patch: PATCH }, { workspace, pool, signal: cancel.signal, turn });
      await isQueued;
      const next = applyPatch({ workspaceId: 'w', patch: PATCH }, { workspace, pool, signal: new AbortController().signal });
      cancel.abort();
      await assert.rejects(cancelled, RequestCancelledError);
      holder.release();
      assert.equal((await next).status, 'applied');
    } finally {
      await workspace.close();
    }
  });
});
