/**
 * Files that are not text in a `git diff` made from whole contents (`formatGitDiff`, the session
 * diff's format): a `GIT binary patch` as `git diff --binary` writes it — the same bytes for an
 * added or deleted file — which real `git apply` turns into exactly the new bytes, and `git
 * apply -R` back into the old ones. Binary files, non-UTF-8 text and text that becomes binary.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import test from 'node:test';
import { formatGitDiff, type GitChange, type GitSide } from '../../daemon/engine/gitDiff.ts';
import { decodeUtf8Text } from '../../daemon/workspace/files.ts';

type Tree = Record<string, { readonly bytes: Uint8Array; readonly mode?: number }>;

const bytes = (text: string, encoding: BufferEncoding = 'latin1') => Buffer.from(text, encoding);
const PNG = bytes('\x89PNG\r\n\x1a\n\x00\xff');
const RANDOM = randomBytes(3000);
const COMPRESSIBLE = Buffer.from('row\x00'.repeat(1500) + 'tail', 'latin1');
const EDITED = Buffer.concat([RANDOM.subarray(0, 1000), bytes('patched'), RANDOM.subarray(1000)]);

const BEFORE: Tree = {
  'logo.png': { bytes: PNG },
  'data/blob.bin': { bytes: RANDOM },
  'cafe.txt': { bytes: bytes('caf\xe9\nline two\n') },
  'becomes-binary.txt': { bytes: bytes('plain text\n') },
  'tool.bin': { bytes: PNG, mode: 0o644 },
  'old name.bin': { bytes: RANDOM },
  'same.bin': { bytes: PNG },
  'text.txt': { bytes: bytes('one\ntwo\n') },
};
const AFTER: Tree = {
  'data/blob.bin': { bytes: EDITED },
  'cafe.txt': { bytes: bytes('caf\xe9 au lait\nline two\n') },
  'becomes-binary.txt': { bytes: bytes('plain\x00text\n') },
  'tool.bin': { bytes: Buffer.concat([PNG, PNG]), mode: 0o755 },
  'new name.bin': { bytes: EDITED },
  'moved.bin': { bytes: PNG },
  'text.txt': { bytes: bytes('one\nTWO\n') },
  'added/empty-then.bin': { bytes: bytes('\x00\x01\x02') },
};

function side(path: string, tree: Tree, name = path): GitSide | null {
  const file = tree[path];
  return file === undefined ? null : { path: name, bytes: file.bytes, text: decodeUtf8Text(file.bytes), mode: file.mode ?? 0o644 };
}

const CHANGES: GitChange[] = [
  { before: side('logo.png', BEFORE), after: null },
  { before: side('data/blob.bin', BEFORE), after: side('data/blob.bin', AFTER) },
  { before: side('cafe.txt', BEFORE), after: side('cafe.txt', AFTER) },
  { before: side('becomes-binary.txt', BEFORE), after: side('becomes-binary.txt', AFTER) },
  { before: side('tool.bin', BEFORE), after: side('tool.bin', AFTER) },
  { before: side('old name.bin', BEFORE), after: side('new name.bin', AFTER) },
  { before: side('same.bin', BEFORE), after: side('moved.bin', AFTER) },
  { before: side('text.txt', BEFORE), after: side('text.txt', AFTER) },
  { before: null, after: side('added/empty-then.bin', AFTER) },
];

function writeTree(dir: string, tree: Tree): void {
  for (const [path, { bytes: content, mode }] of Object.entries(tree)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
    chmodSync(join(dir, path), mode ?? 0o644);
  }
}

function readTree(dir: string, prefix = ''): Record<string, string> {
  const listing: Record<string, string> = {};
  for (const name of readdirSync(join(dir, prefix)).sort()) {
    const path = prefix === '' ? name : `${prefix}/${name}`;
    if (name === '.git') continue;
    const stats = statSync(join(dir, path));
    if (stats.isDirectory()) Object.assign(listing, readTree(dir, path));
    else listing[path] = `${(stats.mode & 0o100) === 0 ? '644' : '755'}:${readFileSync(join(dir, path)).toString('hex')}`;
  }
  return listing;
}

function expected(tree: Tree): Record<string, string> {
  return Object.fromEntries(Object.entries(tree).sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, file]) => [path, `${(file.mode ?? 0o644) & 0o100 ? '755' : '644'}:${Buffer.from(file.bytes).toString('hex')}`]));
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

test('real git apply makes exactly the new bytes of every binary and non-UTF-8 file, and git apply -R the old ones', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'patchd-git-binary-'));
  try {
    const diff = formatGitDiff(CHANGES);
    assert.doesNotMatch(diff, /\uFFFD/, 'no byte is replaced');
    for (const path of ['logo.png', 'data/blob.bin', 'cafe.txt', 'becomes-binary.txt', 'tool.bin', 'new name.bin', 'added/empty-then.bin']) {
      assert.ok(diff.includes(`b/${path}`) || diff.includes(`"b/${path}"`), path);
    }
    assert.equal(diff.split('GIT binary patch\n').length - 1, 7, 'one binary patch per changed non-text file; none for the binary file moved unchanged');
    assert.match(diff, /--- a\/text\.txt\n\+\+\+ b\/text\.txt\n@@ -1,2 \+1,2 @@\n one\n-two\n\+TWO\n/, 'text stays a text diff');
    writeFileSync(join(scratch, 'session.diff'), diff);

    const forward = join(scratch, 'forward');
    writeTree(forward, BEFORE);
    git(forward, 'apply', '--whitespace=nowarn', join(scratch, 'session.diff'));
    assert.deepEqual(readTree(forward), expected(AFTER));

    const backward = join(scratch, 'backward');
    writeTree(backward, AFTER);
    git(backward, 'apply', '-R', '--whitespace=nowarn', join(scratch, 'session.diff'));
    assert.deepEqual(readTree(backward), expected(BEFORE));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});

test('a binary file added or deleted is written byte for byte as git diff --binary writes it', () => {
  const repo = mkdtempSync(join(tmpdir(), 'patchd-git-binary-repo-'));
  try {
    git(repo, 'init', '-q', '.');
    writeTree(repo, { 'gone.png': { bytes: PNG } });
    git(repo, 'add', '-A');
    git(repo, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'start');
    rmSync(join(repo, 'gone.png'));
    writeTree(repo, { 'new.bin': { bytes: COMPRESSIBLE } });
    git(repo, 'add', '-A');
    // git deflates at its default level, the fastest (whatever a user's configuration says).
    const real = git(repo, '-c', 'core.compression=1', '-c', 'diff.renames=false', 'diff', '--cached', '--binary', '--no-color', '--no-ext-diff');
    const ours = formatGitDiff([{ before: side('gone.png', { 'gone.png': { bytes: PNG } }), after: null }, { before: null, after: side('new.bin', { 'new.bin': { bytes: COMPRESSIBLE } }) }]);
    assert.equal(ours, real);
    assert.ok(!existsSync(join(repo, 'gone.png')));
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
});
