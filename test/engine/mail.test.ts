/** `git format-patch` mail through the engine: real mails made in the test by real git. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePatch, planPatch, requiredPaths, type FileSnapshot, type ParsedPatch } from '../../daemon/engine/index.ts';
import { commit, createScratch, git, gitRepo } from '../helpers/producers.ts';

function parsed(patch: string): ParsedPatch {
  const result = parsePatch({ patch });
  if (!result.ok) assert.fail(`${result.error.code}: ${result.error.message}`);
  return result.value;
}

function planned(patch: string, tree: Readonly<Record<string, string>>) {
  const parse = parsed(patch);
  const files = new Map<string, FileSnapshot>();
  for (const path of requiredPaths(parse)) {
    const text = tree[path];
    files.set(path, text === undefined ? { kind: 'missing' } : { kind: 'file', bytes: new TextEncoder().encode(text) });
  }
  return planPatch(parse, files);
}

describe('git format-patch mail', () => {
  test('headers, message, diffstat and signature are not hunk lines; a removed "- " line before the signature is', () => {
    using scratch = createScratch();
    const repo = scratch.dir;
    gitRepo(repo, { 'list.md': 'items:\n- \n- one\n' });
    commit(repo, { 'list.md': 'items:\n- one\n' }, 'Drop the empty item\n\n---\nA line of dashes in the message.\n');
    const mail = git(repo, 'format-patch', '--stdout', 'HEAD~1');
    assert.match(mail, /\n-- \n2\.\d+/, 'git wrote its signature');
    const patch = parsed(mail);
    assert.equal(patch.series, undefined, 'one mail is one patch');
    assert.deepEqual(patch.files.map((file) => `${file.op} ${file.path}`), ['update list.md']);
    const result = planned(mail, { 'list.md': 'items:\n- \n- one\n' });
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    assert.equal(new TextDecoder().decode(result.value.files[0]!.after!), 'items:\n- one\n');
  });

  test('the last removed line is "- " and git wrote no signature: it stays a hunk line', () => {
    using scratch = createScratch();
    gitRepo(scratch.dir, { 'list.md': 'a\n- \n' });
    commit(scratch.dir, { 'list.md': 'a\n' }, 'Trim');
    const mail = git(scratch.dir, 'format-patch', '--stdout', '--no-signature', 'HEAD~1');
    const result = planned(mail, { 'list.md': 'a\n- \n' });
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    assert.equal(new TextDecoder().decode(result.value.files[0]!.after!), 'a\n');
  });

  test('a mailbox is a series: the same file in several mails applies in order, one net entry per path', () => {
    using scratch = createScratch();
    gitRepo(scratch.dir, { 'a.txt': '1\n2\n3\n', 'old.txt': 'old\n' });
    commit(scratch.dir, { 'a.txt': '1\ntwo\n3\n' }, 'First');
    commit(scratch.dir, { 'a.txt': '1\ntwo\nthree\n', 'b.txt': 'new\n' }, 'Second');
    commit(scratch.dir, { 'b.txt': 'newer\n' }, 'Third', ['old.txt']);
    const mbox = git(scratch.dir, 'format-patch', '--stdout', 'HEAD~3');
    const patch = parsed(mbox);
    assert.deepEqual(patch.series?.map((part) => [part.title, part.fileCount]), [['First', 1], ['Second', 2], ['Third', 2]]);
    assert.match(patch.diagnostics.find((entry) => entry.code === 'mailbox')?.message ?? '', /3 mail/);
    const result = planned(mbox, { 'a.txt': '1\n2\n3\n', 'old.txt': 'old\n' });
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    const files = result.value.files.map((file) => [file.op, file.path, file.after === null ? null : new TextDecoder().decode(file.after)]);
    assert.deepEqual(files, [['update', 'a.txt', '1\ntwo\nthree\n'], ['add', 'b.txt', 'newer\n'], ['delete', 'old.txt', null]]);
    assert.match(result.value.files[0]!.diff, /-2\n-3\n\+two\n\+three/);
    assert.equal(result.value.files[0]!.hunks.length, 2);
  });

  test('a mailbox whose first mail drops the BOM: the net bytes have none, and the net diff shows it going', () => {
    using scratch = createScratch();
    gitRepo(scratch.dir, { 'a.txt': '\uFEFFa\nb\n' });
    commit(scratch.dir, { 'a.txt': 'a\nb\n' }, 'Drop the BOM');
    commit(scratch.dir, { 'a.txt': 'a\nB\n' }, 'Shout');
    const mbox = git(scratch.dir, 'format-patch', '--stdout', 'HEAD~2');
    const result = planned(mbox, { 'a.txt': '\uFEFFa\nb\n' });
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    assert.equal(new TextDecoder('utf-8', { ignoreBOM: true }).decode(result.value.files[0]!.after!), 'a\nB\n');
    assert.match(result.value.files[0]!.diff, /^-\uFEFFa\n-b\n\+a\n\+B$/m);
  });

  test('a later mail that does not apply names its mail; a mailbox already applied is already_applied', () => {
    using scratch = createScratch();
    gitRepo(scratch.dir, { 'a.txt': 'x\ny\n' });
    commit(scratch.dir, { 'a.txt': 'x\nY\n' }, 'One');
    commit(scratch.dir, { 'a.txt': 'X\nY\n' }, 'Two');
    const mbox = git(scratch.dir, 'format-patch', '--stdout', 'HEAD~2');
    const broken = planned(mbox, { 'a.txt': 'x\ny\n'.replace('x', 'q') });
    assert.ok(!broken.ok);
    assert.match(broken.error.message, /^Patch 1 of 2 \("One"\)/);
    const twice = planned(mbox, { 'a.txt': 'X\nY\n' });
    assert.equal(twice.ok ? 'applied' : twice.error.code, 'already_applied');
    assert.match(twice.ok ? '' : twice.error.message, /All 2 patches/);
    const half = planned(mbox, { 'a.txt': 'x\nY\n' });
    assert.equal(half.ok ? 'applied' : half.error.code, 'already_applied');
    assert.match(half.ok ? '' : half.error.message, /The first 1 of the 2 patches .* from patch 2 \("Two"\) on/);
  });

  test('a mailbox without the CRs of a file\'s lone CRs is not found, never taken for already applied', () => {
    using scratch = createScratch();
    const before = { 'f.txt': 'lone\rcr\nx = 1;\n\r', 'g.txt': 'g\n' };
    gitRepo(scratch.dir, before);
    commit(scratch.dir, { 'f.txt': 'x = 1;\n\r' }, 'One');
    commit(scratch.dir, { 'g.txt': 'G\n' }, 'Two');
    const mbox = git(scratch.dir, 'format-patch', '--stdout', 'HEAD~2');
    const withCrs = planned(mbox, before);
    assert.ok(withCrs.ok, withCrs.ok ? '' : withCrs.error.message);
    // Its CRs stripped, as a model copies it: mail 1's old lines are not in the file, though its blank last line matches the lone CR ignoring whitespace.
    const stripped = planned(mbox.replaceAll('\r', ''), before);
    assert.equal(stripped.ok ? 'applied' : stripped.error.code, 'context_not_found');
    assert.match(stripped.ok ? '' : stripped.error.message, /^Patch 1 of 2 \("One"\)/);
  });

  test('one mail naming a file twice is still duplicate_file_patch', () => {
    using scratch = createScratch();
    gitRepo(scratch.dir, { 'a.txt': 'x\n' });
    commit(scratch.dir, { 'a.txt': 'y\n' }, 'One');
    const mail = git(scratch.dir, 'format-patch', '--stdout', 'HEAD~1');
    const section = mail.slice(mail.indexOf('diff --git'), mail.indexOf('-- \n'));
    const doubled = mail.replace(section, section + section);
    const result = parsePatch({ patch: doubled });
    assert.equal(result.ok ? 'parsed' : result.error.code, 'duplicate_file_patch');
  });

  test('a quoted-printable mail is refused with a parse_error that says what to send', () => {
    const mail = 'From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001\nFrom: A <a@b>\nSubject: [PATCH] x\nContent-Transfer-Encoding: quoted-printable\n\n---\ndiff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1 +1 @@\n-x=3D1\n+x=3D2\n';
    const result = parsePatch({ patch: mail });
    assert.equal(result.ok ? 'parsed' : result.error.code, 'parse_error');
    assert.match(result.ok ? '' : result.error.message, /quoted-printable/);
  });
});
