/**
 * A dry run of a unified diff whose strip level depends on which files exist says exactly what
 * applying it does: the same paths, hunks, diffs and hashes, or the same error.
 */
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Receipt } from '../../protocol/index.ts';
import { EnginePool } from '../../daemon/pool/pool.ts';
import { applyPatch } from '../../daemon/server/applyPatch.ts';
import { withSandbox } from '../workspace/fixtures.ts';

let pool: EnginePool;
before(() => {
  pool = new EnginePool({ taskTimeoutMs: 10_000, onError: (error) => assert.fail(String(error)) });
});
after(async () => {
  await pool.close();
});

const hunk = '@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n';
const section = (from: string, to: string, body = hunk) => `--- ${from}\n+++ ${to}\n${body}`;
const TEXT = 'one\ntwo\nthree\n';

interface Case {
  readonly name: string;
  readonly files: Record<string, string>;
  readonly links?: Record<string, string>;
  readonly dirs?: readonly string[];
  readonly patch: string;
}

const cases: readonly Case[] = [
  { name: 'the guessed file exists', files: { 'src/x.ts': TEXT }, patch: section('a/src/x.ts', 'b/src/x.ts') },
  { name: 'only the unstripped path exists', files: { 'a/src/x.ts': TEXT }, patch: section('a/src/x.ts', 'b/src/x.ts') },
  { name: 'both levels exist', files: { 'src/x.ts': TEXT, 'a/src/x.ts': TEXT }, patch: section('a/src/x.ts', 'a/src/x.ts') },
  { name: 'names without prefixes', files: { 'src/x.ts': TEXT }, patch: section('src/x.ts', 'src/x.ts') },
  { name: 'one of two files is missing', files: { 'src/x.ts': TEXT }, patch: section('a/src/x.ts', 'b/src/x.ts') + section('a/src/y.ts', 'b/src/y.ts') },
  { name: 'two files at a level only one of them settles', files: { 'src/x.ts': TEXT, 'p/src/y.ts': TEXT }, patch: section('a/src/x.ts', 'b/src/x.ts') + section('p/src/y.ts', 'p/src/y.ts') },
  { name: 'the guessed path is a directory', files: { 'src/x.ts/inner': TEXT }, patch: section('a/src/x.ts', 'b/src/x.ts') },
  { name: 'the guessed path is a symlink', files: { 'src/real.ts': TEXT }, links: { 'src/x.ts': 'real.ts' }, patch: section('a/src/x.ts', 'b/src/x.ts') },
  { name: 'nothing exists', files: {}, dirs: ['src'], patch: section('a/src/x.ts', 'b/src/x.ts') },
  { name: 'the hunk does not match', files: { 'src/x.ts': 'uno\ndos\n' }, patch: section('a/src/x.ts', 'b/src/x.ts') },
];

/** What a dry run and an applied patch must agree on. */
function outcome(receipt: Receipt): unknown {
  const { status, format, files, diagnostics, ignoredMetadata, error } = receipt;
  return {
    status: status === 'dry_run' ? 'applied' : status,
    format, diagnostics, ignoredMetadata, error,
    files: files.map(({ createdDirs: _created, ...file }) => file),
  };
}

for (const { name, files, links = {}, dirs = [], patch } of cases) {
  test(`dry run and apply agree: ${name}`, async () => {
    await withSandbox(files, async (sandbox) => {
      for (const dir of dirs) mkdirSync(path.join(sandbox.root, dir), { recursive: true });
      for (const [link, target] of Object.entries(links)) symlinkSync(target, path.join(sandbox.root, link));
      const workspace = await sandbox.open();
      try {
        const context = { workspace, pool, signal: new AbortController().signal };
        const dry = await applyPatch({ workspaceId: 'w', patch, dryRun: true }, context);
        const applied = await applyPatch({ workspaceId: 'w', patch }, context);
        assert.notEqual(dry.status, 'applied');
        assert.deepEqual(outcome(dry), outcome(applied));
      } finally {
        await workspace.close();
      }
    });
  });
}
