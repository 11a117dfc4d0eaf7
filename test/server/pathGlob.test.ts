/**
 * The approval globs: each documented form, dot files, literal fallbacks, the same answers as a
 * regular expression written for each random glob, and that globs and paths built to make a
 * matcher slow cost a bounded number of steps (counted by the budget, not timed) — or, past
 * the budget, get no answer, which the approval gate turns into `limit_exceeded`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ApprovalGate, MAX_GLOB_STEPS } from '../../daemon/server/approval.ts';
import { GlobBudget, PathGlob, PathGlobSet } from '../../daemon/server/pathGlob.ts';

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

  test('any glob of the documented forms answers as the regular expression it stands for', () => {
    fc.assert(fc.property(globWithRegExp, fc.array(fc.string({ unit: fc.constantFrom('a', 'b', '.', '/', '-', '*', '{', ','), maxLength: 10 }), { maxLength: 30 }), ([glob, source], paths) => {
      const compiled = new PathGlob(glob);
      const expected = new RegExp(`^(?:${source})$`, 's');
      for (const path of [...paths, ...paths.map((path) => path.replaceAll('*', 'a'))]) {
        assert.equal(compiled.matches(path), expected.test(path), `${glob} (${source}) against ${JSON.stringify(path)}`);
      }
    }), { numRuns: 500 });
  });

  test('a list of globs matches what any of them matches, states built for earlier paths kept for later ones', () => {
    fc.assert(fc.property(fc.array(globWithRegExp, { minLength: 1, maxLength: 5 }), fc.array(fc.string({ unit: fc.constantFrom('a', 'b', '.', '/'), maxLength: 8 }), { maxLength: 40 }), (globs, paths) => {
      const set = new PathGlobSet(globs.map(([glob]) => glob));
      const singles = globs.map(([glob]) => new PathGlob(glob));
      for (const path of [...paths, ...paths]) assert.equal(set.matches(path, new GlobBudget(Infinity)), singles.some((glob) => glob.matches(path)), path);
    }), { numRuns: 300 });
  });
});

describe('character classes, compiled to sorted ranges, answer as scanning each range did', () => {
  test('overlapping, single, reversed and negated ranges; escaped ] and -; case; never /', () => {
    check('[a-mg-z]', ['a', 'g', 'm', 'z'], ['A', '`', '{', '/']);
    check('[a-cx-zb]', ['a', 'b', 'c', 'x', 'z'], ['d', 'w']);
    check('[aaa]', ['a'], ['b']);
    check('[z-a]', [], ['a', 'm', 'z']);
    check('[!z-a]', ['a', 'm', '.'], ['/', 'ab']);
    check('[!a-c]', ['d', '`', 'A', '😀'], ['a', 'b', 'c', '/']);
    check('[^A-Z]', ['a', '-'], ['A', 'Q', 'Z']);
    check('[\\]\\-]', [']', '-'], ['\\', 'a']);
    check('[a\\-z]', ['a', '-', 'z'], ['b', 'y']);
    check('[a-]', ['a', '-'], ['b']);
    check('[-a]', ['a', '-'], ['b']);
    check('[]-a]', [']', '^', '_', '`', 'a'], ['b', '\\']);
    check('[!]a]', ['b', '['], [']', 'a']);
    check('[.-0]', ['.', '0'], ['/', '-', '1']);
    check('[\\/a]', ['a'], ['/']);
  });

  test('characters beyond the BMP are one character, ordered as JavaScript orders strings (by UTF-16 code units)', () => {
    check('[😀-😂]', ['😀', '😁', '😂'], ['😃', '\u{1F5FF}', '😀😀', '\uD83D']);
    check('[!😀]', ['😁', 'a', '\uD83D'], ['😀', '/']);
    check('x[😀a-c]y', ['x😀y', 'xby'], ['x😁y', 'x\uD83Dy']);
    // U+E000 sorts after every pair (U+10000 is \uD800\uDC00), so the first is empty and the second is not.
    check('[\u{E000}-\u{10000}]', [], ['\u{E000}', '\u{10000}', '\u{F000}']);
    check('[\u{10000}-\u{E000}]', ['\u{10000}', '\u{10FFFF}', '\uD801', '\uDC00', '\u{E000}'], ['\u{E001}', '\uD800', '\u{D7FF}', '\u{FFFF}']);
  });

  test('any class of code points answers as the string comparisons, range by range, it replaced', () => {
    const interesting = [0, 0x21, 0x2d, 0x2f, 0x41, 0x5c, 0x5d, 0x5e, 0x61, 0x7a, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xffff, 0x1_0000, 0x1_f600, 0x10_ffff];
    const codePoint = fc.oneof(
      fc.constantFrom(...interesting),
      fc.tuple(fc.constantFrom(...interesting), fc.integer({ min: -3, max: 3 })).map(([code, offset]) => Math.min(0x10_ffff, Math.max(0, code + offset))),
      fc.integer({ min: 0, max: 0x10_ffff }),
    );
    const range = fc.oneof(codePoint.map((code): [number, number] => [code, code]), fc.tuple(codePoint, codePoint));
    fc.assert(fc.property(fc.array(range, { minLength: 1, maxLength: 8 }), fc.boolean(), fc.array(codePoint, { maxLength: 20 }), (ranges, negated, probes) => {
      const escaped = (code: number) => `\\${String.fromCodePoint(code)}`;
      const glob = `[${negated ? '!' : ''}${ranges.map(([low, high]) => (low === high ? escaped(low) : `${escaped(low)}-${escaped(high)}`)).join('')}]`;
      const compiled = new PathGlob(glob);
      const scanned = scannedClass(ranges, negated);
      for (const code of [...probes, ...ranges.flat().flatMap((end) => [end - 1, end, end + 1])]) {
        if (code < 0 || code > 0x10_ffff) continue;
        const char = String.fromCodePoint(code);
        assert.equal(compiled.matches(char), scanned(char), `${JSON.stringify(glob)} against U+${code.toString(16)}`);
      }
    }), { numRuns: 1_000 });
  });
});

/** A class as it was tested before it was compiled: `/` never, else each range scanned, compared as strings. */
function scannedClass(ranges: readonly [number, number][], negated: boolean): (char: string) => boolean {
  const bounds = ranges.map(([low, high]) => [String.fromCodePoint(low), String.fromCodePoint(high)] as const);
  return (char) => char !== '/' && bounds.some(([low, high]) => char >= low && char <= high) !== negated;
}

test('what a list keeps is bounded: a few states meeting a new code point on every path gather no transitions without end', () => {
  const set = new PathGlobSet(['*a*b*c*']);
  let most = 0;
  for (let first = 0x4e00; first + 1_000 <= 0x10_ffff; first += 1_000) {
    const path = Array.from({ length: 1_000 }, (_, offset) => String.fromCodePoint(first + offset)).join('');
    assert.equal(set.matches(path, new GlobBudget(Infinity)), false);
    assert.equal(set.matches(`a${path}b${path}c`, new GlobBudget(Infinity)), true);
    most = Math.max(most, set.held);
  }
  assert.ok(most <= (1 << 20) + 64, `held ${most}`);
});

/** The policy of the report that held a shared daemon for 34 s: 100 deny globs of 998 characters, and a path of 4,095. */
const HOSTILE_GLOB = `${'**/a*/'.repeat(166)}zz`;
const HOSTILE_PATH = `${'a/'.repeat(2047)}b`;

/** `*` then a class of `ranges` CJK characters none next to another (997 make 1,000 characters, as long as a glob may be), from U+4E00 + `shift`. */
function hugeClassGlob(shift: number, ranges = 997): string {
  return `*[${Array.from({ length: ranges }, (_, index) => String.fromCodePoint(0x4e00 + shift + 2 * index)).join('')}]`;
}

/** 4,095 characters, each different, in none of those classes. */
const DISTINCT_PATH = Array.from({ length: 4095 }, (_, index) => String.fromCodePoint(0xac00 + index)).join('');

describe('globs and paths built to be slow', () => {
  test('cost a bounded number of steps: the report\'s policy and path are answered in about 280 thousand (the matcher before took 140 ms per glob, 100 globs a patch), and nothing the next time', () => {
    assert.equal(HOSTILE_GLOB.length, 998);
    assert.equal(HOSTILE_PATH.length, 4095);
    const set = new PathGlobSet(Array.from({ length: 100 }, () => HOSTILE_GLOB));
    const budget = new GlobBudget(Infinity);
    assert.equal(set.matches(HOSTILE_PATH, budget), false);
    assert.ok(budget.spent < 600_000, `${budget.spent} steps`);
    assert.equal(set.matches(`${HOSTILE_PATH.slice(0, -1)}zz`, budget), true);
    const again = new GlobBudget(Infinity);
    assert.equal(set.matches(HOSTILE_PATH, again), false);
    assert.equal(again.spent, 0, 'every state it goes through is built already');
  });

  test('different ones cost no more than path length × glob length; a budget stops the matching (no answer) one state past its limit', () => {
    const globs = Array.from({ length: 100 }, (_, index) => `${HOSTILE_GLOB.slice(0, 990)}zz${index}`);
    const some = globs.slice(0, 10);
    const unbounded = new GlobBudget(Infinity);
    assert.equal(new PathGlobSet(some).matches(HOSTILE_PATH, unbounded), false);
    const chars = (list: readonly string[]) => list.reduce((total, glob) => total + glob.length, 0);
    assert.ok(unbounded.spent < HOSTILE_PATH.length * chars(some), `${unbounded.spent} steps`);
    const budget = new GlobBudget(1_000_000);
    assert.equal(new PathGlobSet(globs).matches(HOSTILE_PATH, budget), undefined);
    assert.ok(budget.spent > 1_000_000 && budget.spent < 1_000_000 + 10 * chars(globs), `${budget.spent} steps`);
  });

  test('the approval gate: the report\'s policy checks its path; 100 different such globs are limit_exceeded, not an answer', () => {
    const gate = (deny: string[]) => new ApprovalGate({ policy: { deny, ask: deny }, timeoutMs: 1 }, async () => ({ approved: true }));
    const same = gate(Array.from({ length: 100 }, () => HOSTILE_GLOB));
    assert.deepEqual(same.deniedPath([HOSTILE_PATH, 'b']), { ok: true, value: undefined });
    assert.deepEqual(same.deniedPath(['x', `${'a/'.repeat(166)}zz`]), { ok: true, value: `${'a/'.repeat(166)}zz` });
    const different = gate(Array.from({ length: 100 }, (_, index) => `${HOSTILE_GLOB.slice(0, 990)}zz${index}`));
    for (const result of [different.deniedPath([HOSTILE_PATH]), different.needsApproval([HOSTILE_PATH])]) {
      assert.equal(result.ok, false);
      if (result.ok) continue;
      assert.equal(result.error.code, 'limit_exceeded');
      assert.equal(result.error.limit?.name, 'approvalGlobSteps');
      assert.equal(result.error.limit?.max, MAX_GLOB_STEPS);
      assert.match(result.error.message, /approval policy took more than 4000000 steps.*nothing was written/);
    }
  });

  test('a class is charged by its search: testing a character against 997 ranges costs about log2(997) steps more than against one, not the same', () => {
    const spentWith = (ranges: number) => {
      const budget = new GlobBudget(Infinity);
      assert.equal(new PathGlobSet([hugeClassGlob(0, ranges)]).matches(DISTINCT_PATH, budget), false);
      return budget.spent;
    };
    assert.equal(hugeClassGlob(0, 997).length, 1000);
    // Each character of the path is new, so each builds a transition, which tests the class once.
    const morePerCharacter = (spentWith(997) - spentWith(1)) / DISTINCT_PATH.length;
    assert.ok(Math.abs(morePerCharacter - Math.log2(997)) <= 1, `${morePerCharacter} steps more per character`);
  });

  test('the approval gate: 10 globs of huge classes check a long path within the budget; 100 are limit_exceeded, not seconds of scanning counted as a few steps', () => {
    const globs = Array.from({ length: 100 }, (_, shift) => hugeClassGlob(shift));
    const budget = new GlobBudget(MAX_GLOB_STEPS);
    assert.equal(new PathGlobSet(globs.slice(0, 10)).matches(DISTINCT_PATH, budget), false);
    assert.ok(budget.spent <= MAX_GLOB_STEPS, `${budget.spent} steps`);
    const gate = new ApprovalGate({ policy: { deny: globs, ask: globs }, timeoutMs: 1 }, async () => ({ approved: true }));
    for (const result of [gate.deniedPath([DISTINCT_PATH]), gate.needsApproval([DISTINCT_PATH])]) {
      assert.equal(result.ok, false);
      if (result.ok) continue;
      assert.equal(result.error.code, 'limit_exceeded');
      assert.equal(result.error.limit?.name, 'approvalGlobSteps');
      assert.equal(result.error.limit?.max, MAX_GLOB_STEPS);
      // Stopped one state past the limit: at most each glob's steps looked at and searched, and followed.
      assert.ok(result.error.limit.actual! < MAX_GLOB_STEPS + 100 * 1000, `${result.error.limit.actual} steps`);
    }
  });

  test('parsing is linear too: unclosed or nested braces and brackets by the hundred', () => {
    check('{'.repeat(999), ['{'.repeat(999)], ['{'.repeat(998)]);
    check('['.repeat(999), ['['.repeat(999)], ['[']);
    check(`${'{a,'.repeat(300)}b${'}'.repeat(300)}`, ['a', 'b'], ['ab', '']);
    check('{a,\\}b}', ['a', '}b'], ['b']);
    check('[\\]]', [']'], ['\\']);
  });
});

/** Random globs of the documented forms, each with the regular expression (source) it stands for. */
const globWithRegExp: fc.Arbitrary<[string, string]> = (() => {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  const literal = fc.constantFrom('a', 'b', '.', '-').map((char): [string, string] => [char, escape(char)]);
  const escaped = fc.constantFrom('*', '?', '{', '}', '[', ']', ',', '\\').map((char): [string, string] => [`\\${char}`, escape(char)]);
  const wildcard = fc.constantFrom<[string, string]>(['?', '[^/]'], ['[ab]', '[ab]'], ['[!a]', '[^a/]'], ['[a-c]', '[a-c]'], ['[^b]', '[^b/]']);
  const star: [string, string] = ['*', '[^/]*'];
  const { item } = fc.letrec<{ item: [string, string]; sequence: [string, string] }>((tie) => ({
    item: fc.oneof({ depthSize: 'small' }, literal, literal, escaped, wildcard, fc.constant(star), fc.array(tie('sequence'), { minLength: 1, maxLength: 3 }).map((options): [string, string] => [
      `{${options.map(([glob]) => glob).join(',')}}`, `(?:${options.map(([, source]) => source).join('|')})`,
    ])),
    // Two stars in a row would be `**`: one star stands for both.
    sequence: fc.array(tie('item') as fc.Arbitrary<[string, string]>, { maxLength: 3 }).map((items) => joinItems(items.filter((entry, index) => entry !== star || items[index - 1] !== star))),
  }));
  const segment = fc.oneof(
    { weight: 1, arbitrary: fc.constant<[string, string] | 'globstar'>('globstar') },
    { weight: 4, arbitrary: fc.array(item, { minLength: 1, maxLength: 3 }).map((items) => joinItems(items.filter((entry, index) => entry !== star || items[index - 1] !== star))) },
  );
  return fc.array(segment, { minLength: 1, maxLength: 4 }).map((segments): [string, string] => {
    let glob = '';
    let source = '';
    segments.forEach((part, index) => {
      const last = index === segments.length - 1;
      if (part === 'globstar') {
        glob += last ? '**' : '**/';
        source += last ? '.+' : '(?:.*/)?';
      } else {
        glob += last ? part[0] : `${part[0]}/`;
        source += last ? part[1] : `${part[1]}/`;
      }
    });
    return [glob, source];
  });
})();

function joinItems(items: readonly [string, string][]): [string, string] {
  return [items.map(([glob]) => glob).join(''), items.map(([, source]) => source).join('')];
}

describe('the matcher', () => {
  test('no warning on stderr: the daemon\'s stderr is structured logs only', () => {
    const script = "import { PathGlob } from './daemon/server/pathGlob.ts'; new PathGlob('**/*.{ts,js}').matches('a/b.ts');"
      + " import { ApprovalGate } from './daemon/server/approval.ts';"
      + " new ApprovalGate({ policy: { ask: ['src/**'], deny: ['.env'] }, timeoutMs: 1 }, async () => ({ approved: true })).deniedPath(['src/a.ts', '.env']);";
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stderr, '');
  });
});
