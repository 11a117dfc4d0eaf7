/**
 * The approval globs: each documented form, dot files, literal fallbacks, and that a glob
 * built to make a backtracking matcher explode is answered at once.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { PathGlob } from '../../daemon/server/pathGlob.ts';

function check(glob: string, matching: readonly string[], notMatching: readonly string[]): void {
  const compiled = new PathGlob(glob);
  for (const path of matching) assert.equal(compiled.matches(path), true, `${glob} should match ${path}`);
  for (const path of notMatching) assert.equal(compiled.matches(path), false, `${glob} should not match ${path}`);
}

describe('PathGlob', () => {
  test('literal paths match only themselves', () => {
    check('src/a.ts', ['src/a.ts'], ['src/a.tsx', 'src/a', 'x/src/a.ts', 'src/b.ts']);
  });

  test('* stays within one segment, and matches dot files', () => {
    check('*.txt', ['a.txt', '.txt', 'long name.txt'], ['a/b.txt', 'a.txt.bak']);
    check('*', ['.env', 'a'], ['a/b']);
    check('src/*', ['src/a.ts', 'src/.hidden'], ['src/a/b.ts', 'src', 'lib/a.ts']);
    check('a*b*c', ['abc', 'aXbYc', 'abbbc'], ['ab', 'a/b/c', 'acb']);
  });

  test('** as a whole segment crosses any number of segments', () => {
    check('**', ['a', 'a/b/c', '.git/config'], ['']);
    check('**/*.ts', ['c.ts', 'a/c.ts', 'a/b/c.ts'], ['c.tsx', 'a/c.js']);
    check('x/**/y', ['x/y', 'x/a/y', 'x/a/b/y'], ['x/ay', 'y', 'x/y/z']);
    check('secrets/**', ['secrets/key', 'secrets/.key', 'secrets/a/b'], ['secrets', 'secretsx/a', 'a/secrets/key']);
  });

  test('** inside a segment is a plain *', () => {
    check('a**b', ['ab', 'axxb'], ['a/x/b']);
  });

  test('? is one character but /', () => {
    check('?.md', ['a.md', 'é.md'], ['.md', 'ab.md', '/.md']);
    check('a?b', ['axb'], ['a/b', 'ab']);
  });

  test('character classes: members, ranges, negation, never /', () => {
    check('[ab].txt', ['a.txt', 'b.txt'], ['c.txt', 'ab.txt']);
    check('file[0-9].log', ['file0.log', 'file7.log'], ['filex.log', 'file10.log']);
    check('[!a]*', ['b', 'bcd'], ['a', 'abc']);
    check('[^a]', ['b'], ['a']);
    check('[]x]', [']', 'x'], ['y']);
    check('a[/]b', [], ['a/b']);
  });

  test('{a,b} alternatives, nested, with other wildcards inside', () => {
    check('*.{js,ts}', ['a.js', 'a.ts'], ['a.jsx', 'a.md']);
    check('a{b,c{d,e}}', ['ab', 'acd', 'ace'], ['ac', 'abd']);
    check('{src,lib}/**/*.ts', ['src/a.ts', 'lib/x/y.ts'], ['test/a.ts']);
    check('{.env,secrets/**}', ['.env', 'secrets/k'], ['env', 'secrets']);
    check('x{,.bak}', ['x', 'x.bak'], ['x.']);
  });

  test('escapes and unclosed brackets are literal', () => {
    check('a\\*', ['a*'], ['ab']);
    check('\\{a,b\\}', ['{a,b}'], ['a']);
    check('a{b', ['a{b'], ['ab']);
    check('[a', ['[a'], ['a']);
    check('a}b,c', ['a}b,c'], []);
  });

  test('a glob built to make a backtracking matcher explode is answered in one pass', () => {
    const glob = new PathGlob(`${'*a'.repeat(40)}b`);
    assert.equal(glob.matches('a'.repeat(4000)), false);
    const braces = new PathGlob('{a,b}'.repeat(100));
    assert.equal(braces.matches('ab'.repeat(50)), true);
    assert.equal(braces.matches('ab'.repeat(49)), false);
  });

  test('no warning on stderr: the daemon\'s stderr is structured logs only', () => {
    const script = "import { PathGlob } from './daemon/server/pathGlob.ts'; new PathGlob('**/*.{ts,js}').matches('a/b.ts');"
      + " import { ApprovalGate } from './daemon/server/approval.ts';"
      + " new ApprovalGate({ policy: { ask: ['src/**'], deny: ['.env'] }, timeoutMs: 1 }, async () => ({ approved: true })).deniedPath(['src/a.ts', '.env']);";
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr, '');
  });
});
