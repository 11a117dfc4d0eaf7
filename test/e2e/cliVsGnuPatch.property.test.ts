/**
 * `patchd apply` against GNU `diff -ruN` and GNU `patch`, differentially (README, The CLI: "the
 * habits of `git apply` and GNU `patch` work"). Each case is a random small tree and change
 * (`randomTrees.ts`), the patch real `diff -ruN -U<n>` makes of the two trees (now and then with
 * `-p`, `--minimal`, `-d` or `--horizon-lines=1`): timestamps on every header, GNU's quoting of
 * names with a space or non-ASCII bytes, the Unix epoch for a file that is not there, no
 * renames. Both tools then run with `-p1` on copies of one tree:
 * - forward on the old tree, `-R` on the new one: patchd writes the tree `diff -N` can describe
 *   (an empty file and no file are alike to it), as GNU patch does;
 * - on the tree the patch already made (forward on the new tree, `-R` on the old): wherever patchd
 *   changes that tree, GNU patch made the same change (its `--forward` refuses what it sees as
 *   applied);
 * - forward on the old tree with lines added around and between what the patch changes: patchd
 *   writes the intended change a few lines lower, or what GNU patch wrote, or refuses.
 * Whatever patchd refuses, and every `--dry-run`, changes nothing. A `-U0` patch on a tree it
 * was not made from has no context to place it: GNU patch is no oracle there, only noted.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'node:test';
import fc from 'fast-check';
import {
  changed, differential, drift, drifted, files, hunkRanges, listing, listingOf, op, patchdAsync, RUNS, stageRun, treeOf, writeTree, type Tree,
} from '../helpers/randomTrees.ts';

type Kind = 'forward' | 'reverse' | 'again' | 'drifted';

const GNU_DIFF_OPTIONS = [['-p'], ['--minimal'], ['-d'], ['--horizon-lines=1'], ['-p', '--minimal']] as const;

const caseOf = fc.record({
  files,
  ops: fc.array(op, { minLength: 1, maxLength: 3 }),
  context: fc.integer({ min: 0, max: 5 }),
  diffOptions: fc.oneof({ weight: 3, arbitrary: fc.constant<readonly string[]>([]) }, { weight: 1, arbitrary: fc.constantFrom<readonly string[]>(...GNU_DIFF_OPTIONS) }),
  kind: fc.oneof({ weight: 2, arbitrary: fc.constantFrom<Kind>('forward', 'reverse') }, { weight: 1, arbitrary: fc.constantFrom<Kind>('again', 'drifted') }),
  /** For `again`: the tree the forward patch made, or -R on the old tree. */
  reverse: fc.boolean(),
  dryRun: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  stdin: fc.boolean(),
  drift,
});

type Case = typeof caseOf extends fc.Arbitrary<infer T> ? T : never;

function tool(command: string, args: readonly string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C', TZ: 'UTC' }, maxBuffer: 16 * 1024 * 1024 });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** `diff -N` says nothing of an empty file on one side with none on the other: `to` as a patch of it can make `from` into. */
function describable(from: Tree, to: Tree): Tree {
  const tree = new Map(to);
  for (const [path, text] of to) if (text === '' && !from.has(path)) tree.delete(path);
  for (const [path, text] of from) if (text === '' && !to.has(path)) tree.set(path, '');
  return tree;
}

const CODE = /^ {2}([a-z_]+)(?: \([^\n]*\))?: /m;

test('patchd apply against GNU diff -ruN and GNU patch: same bytes, on random trees and changes', async (t) => {
  let cases = 0;
  await differential(t, caseOf, async (testCase: Case, report) => {
    const base = mkdtempSync(join(tmpdir(), 'patchd-gnudiff-'));
    try {
      const before = treeOf(testCase.files);
      const after = changed(before, testCase.ops);
      writeTree(join(base, 'old'), before);
      writeTree(join(base, 'new'), after);
      const diffArgs = [`-U${testCase.context}`, ...testCase.diffOptions];
      const made = tool('diff', ['-ruN', ...diffArgs, 'old', 'new'], base);
      if (made.code === 0) return; // the ops cancelled out
      assert.equal(made.code, 1, `diff failed: ${made.stderr}`);
      cases++;
      const patch = made.stdout;
      for (const [feature, present] of [['CRLF', patch.includes('\r\n')], ['no newline', patch.includes('\\ No newline')], ['quoted name', /^--- "/m.test(patch)],
        ['epoch', patch.includes('\t1970-01-01')], [`-U${testCase.context}`, true], [testCase.diffOptions.join(' '), testCase.diffOptions.length > 0]] as const) if (present) report.count(feature);

      const { kind, context } = testCase;
      const reverse = kind === 'reverse' || (kind === 'again' && testCase.reverse);
      const ranges = (path: string) => (context === 0 ? [] : hunkRanges(tool('diff', [...diffArgs, join('old', path), join('new', path)], base).stdout));
      const moved = kind === 'drifted' ? drifted(before, after, testCase.drift, ranges) : undefined;
      const start = moved?.start ?? (kind === 'forward' || (kind === 'again' && reverse) ? before : after);
      const { peerDir: gnuDir, patchdDir: pdDir, patchFile } = stageRun(base, start, patch, 'gnu');
      const direction = reverse ? ['-R'] : [];
      const dry = testCase.dryRun ? ['--dry-run'] : [];
      const gnuArgs = ['-p1', '-s', '--batch', '--forward', '--no-backup-if-mismatch', '--reject-file=-', ...direction, ...dry, '-i', patchFile];
      const pdArgs = ['apply', '-p1', ...direction, ...dry, ...(testCase.stdin ? [] : [patchFile])];
      const gnu = tool('patch', gnuArgs, gnuDir);
      const pd = await patchdAsync(pdArgs, pdDir, testCase.stdin ? patch : '');

      const gnuOk = gnu.code === 0;
      const pdOk = pd.code === 0;
      report.count(`${kind}${kind === 'again' && reverse ? ' -R' : ''}: GNU patch ${gnuOk ? 'ok' : 'refused'}, patchd ${pdOk ? 'ok' : 'refused'}`);
      const what = `${kind}, diff ${diffArgs.join(' ')}; patch ${gnuArgs.join(' ')} → ${gnu.code}; patchd ${pdArgs.join(' ')} → ${pd.code}`;
      const detail = `${what}\npatchd said: ${pd.stdout}${pd.stderr}\nGNU patch said: ${gnu.stdout}${gnu.stderr}\npatch: ${JSON.stringify(patch)}\ntree: ${JSON.stringify([...start])}`;
      assert.ok(pd.code === 0 || pd.code === 1, `patchd exited ${pd.code}\n${detail}`);
      const startListing = listingOf(start);
      const pdTree = listing(pdDir);
      const gnuTree = listing(gnuDir);
      if (!pdOk || testCase.dryRun) assert.deepEqual(pdTree, startListing, `patchd ${pdOk ? '--dry-run' : 'refused but'} changed the tree\n${detail}`);
      const code = CODE.exec(pd.stdout + pd.stderr)?.[1];

      if (kind === 'forward' || kind === 'reverse') {
        const wanted = testCase.dryRun ? startListing : listingOf(describable(start, reverse ? before : after));
        if (gnuTree.join() !== wanted.join()) report.note(`GNU patch did not make the intended tree (${what}): ${gnu.stdout}${gnu.stderr}`);
        assert.ok(pdOk, `patchd refused (${code}) an intended apply\n${detail}`);
        assert.deepEqual(pdTree, wanted, `patchd's tree is not the intended one${gnuTree.join() === wanted.join() ? ' (GNU patch\'s is)' : ''}\n${detail}`);
        return;
      }
      if (!pdOk || testCase.dryRun || pdTree.join() === startListing.join()) {
        if (gnuOk !== pdOk) report.note(`${kind}: GNU patch ${gnuOk ? 'applied' : 'refused'}, patchd ${pdOk ? 'applied' : `refused (${code})`} (${what})`);
        return;
      }
      const sameAsGnu = gnuOk && gnuTree.join() === pdTree.join();
      if (kind === 'drifted') {
        if (pdTree.join() === listingOf(describable(start, moved!.intended)).join()) return;
        report.note(`drifted: patchd applied elsewhere than intended${sameAsGnu ? ', as GNU patch did' : ''} (${what})`);
        if (context > 0) assert.ok(sameAsGnu, `patchd applied a drifted patch elsewhere than intended, and elsewhere than GNU patch\n${detail}`);
        return;
      }
      report.note(`again: patchd changed the tree the patch had made${sameAsGnu ? ', as GNU patch did' : ''} (${what})`);
      if (context > 0) assert.ok(sameAsGnu, `patchd changed the tree the patch had already made, where GNU patch did not do the same\n${detail}`);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
  assert.ok(cases >= RUNS * 0.7, `only ${cases} of ${RUNS} cases changed anything`);
});
