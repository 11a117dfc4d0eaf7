import assert from 'node:assert/strict';
import test from 'node:test';
import { planPatch } from '../../daemon/engine/plan.ts';
import type { FilePatch, FileSnapshot, ParsedPatch, TextEdit } from '../../daemon/engine/types.ts';

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array | null) => new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes ?? new Uint8Array());
const file = (text: string): FileSnapshot => ({ kind: 'file', bytes: encode(text) });

/** A SEARCH/REPLACE block as the parser builds it. */
const block = (search: string, replace: string): TextEdit => ({ kind: 'replace', search, replace, relativeIndent: true });
/** A str_replace edit as the parser builds it. */
const swap = (search: string, replace: string, replaceAll?: boolean): TextEdit => ({ kind: 'replace', search, replace, replaceAll, relativeIndent: false });
const insert = (line: number, text: string): TextEdit => ({ kind: 'insert', line, text });

function plan(edits: TextEdit[], content: string | FileSnapshot | undefined, fuzz?: 'exact', extra: FilePatch[] = []) {
  const files: FilePatch[] = [{ op: 'edit', path: 'f', edits }, ...extra];
  const snapshot = typeof content === 'string' ? file(content) : content ?? { kind: 'missing' };
  const parsed: ParsedPatch = { dialect: 'search-replace', files, diagnostics: [], ignoredMetadata: [] };
  return planPatch(parsed, new Map([['f', snapshot], ['g', file('g\n')]]), { fuzz });
}

function applied(result: ReturnType<typeof plan>): string {
  assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}`);
  return decode(result.value.files[0]!.after);
}

function tiers(result: ReturnType<typeof plan>): string[] {
  assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}`);
  return result.value.files[0]!.hunks.map((hunk) => hunk.tier);
}

function rejected(result: ReturnType<typeof plan>): string {
  assert.ok(!result.ok, 'expected a rejection');
  return result.error.code;
}

test('edits apply in order on the running content', () => {
  assert.equal(applied(plan([block('count = 1\n', 'count = 2\n'), block('count = 2\n', 'count = 3\n')], 'count = 1\n')), 'count = 3\n');
  const result = plan([block('b\n', 'B\n'), insert(0, 'top')], 'a\nb\n');
  assert.equal(applied(result), 'top\na\nB\n');
  assert.ok(result.ok);
  assert.deepEqual(result.value.files[0]!.hunks, [{ index: 0, line: 2, tier: 'exact', offset: 0 }, { index: 1, line: 1, tier: 'exact', offset: 0 }]);
});

test('one match is required: several are ambiguous_context naming the lines, none is context_not_found with the nearest text', () => {
  const ambiguous = plan([block('item = 0\n', 'item = 1\n')], 'item = 0\nother\nitem = 0\n');
  assert.equal(rejected(ambiguous), 'ambiguous_context');
  assert.ok(!ambiguous.ok);
  assert.match(ambiguous.error.message, /lines 1, 3/);
  const missing = plan([block('alpha\nbeta\nGAMMA\n', 'x\n')], 'zero\nalpha\nbeta\ngamma\n');
  assert.ok(!missing.ok);
  assert.equal(missing.error.code, 'context_not_found');
  assert.equal(missing.error.nearest?.line, 2);
  assert.equal(missing.error.hunkIndex, 0);
});

test('line tiers as for hunks; matched lines are replaced by the REPLACE lines as given', () => {
  assert.deepEqual(tiers(plan([block('a\n', 'A\n')], 'a  \nb\n')), ['trailing_whitespace']);
  assert.equal(applied(plan([block('x = “1”\n', 'x = 2\n')], 'x = "1"\n')), 'x = 2\n');
  assert.deepEqual(tiers(plan([block('x = “1”\n', 'x = 2\n')], 'x = "1"\n')), ['unicode']);
  assert.equal(rejected(plan([block('a\n', 'A\n')], 'a  \nb\n', 'exact')), 'context_not_found');
});

test('relative indentation: SEARCH missing the file\'s indentation, REPLACE shifted alike', () => {
  const result = plan([block('a = 1\nreturn a\n', 'a = 2\nif a:\n    return a * 2\n')], 'class C:\n    def f(self):\n        a = 1\n        return a\n');
  assert.equal(applied(result), 'class C:\n    def f(self):\n        a = 2\n        if a:\n            return a * 2\n');
  assert.deepEqual(tiers(result), ['relative_indent']);
  assert.equal(applied(plan([block('  x = 1\n\n  y = 2\n', '  x = 10\n\n    y = 20\n')], 'if True:\n    x = 1\n\n    y = 2\n')), 'if True:\n    x = 10\n\n      y = 20\n');
});

test('relative indentation: SEARCH with extra indentation, REPLACE outdented alike', () => {
  const result = plan([block('        a = 1\n        b = 2\n', '        a = 3\n      b = 4\n')], 'def f():\n    a = 1\n    b = 2\n');
  assert.equal(applied(result), 'def f():\n    a = 3\n  b = 4\n');
  assert.deepEqual(tiers(result), ['relative_indent']);
});

test('indentation that differs unevenly is refused, never written at the model\'s indentation: context_not_found saying so', () => {
  for (const edit of [block('a\n  b\n', 'A\nB\n'), swap('a\n  b\n', 'A\nB\n')]) {
    const result = plan([edit], '    a\n    b\n');
    assert.ok(!result.ok, 'expected a rejection');
    assert.equal(result.error.code, 'context_not_found');
    assert.match(result.error.message, /at line 1 only with leading whitespace ignored.*Copy the lines with their indentation exactly/);
    assert.equal(result.error.nearest?.line, 1);
  }
  const tabs = plan([swap('if x:\n    y()\n', 'if x:\n    z()\n')], 'def f():\n\tif x:\n\t\ty()\n');
  assert.equal(rejected(tabs), 'context_not_found', 'tabs in the file, spaces in the edit: no shift to speak of');
  assert.equal(rejected(plan([swap('if a:\n  b()\n', 'if a:\n  c()\n')], 'if a:\n    b()\n')), 'context_not_found', 'an indentation step of 2 where the file has 4');
  const all = plan([swap('g()\nh()\n', 'k()\n', true)], '  g()\n  h()\nx\n  g()\n    h()\n');
  assert.ok(!all.ok, 'replaceAll: an occurrence that cannot be placed is neither replaced nor left out silently');
  assert.equal(all.error.code, 'context_not_found');
  assert.match(all.error.message, /at line 4 only with leading whitespace ignored/);
});

test('the tiers that ignore leading whitespace shift the new lines by the file\'s indentation (str_replace edits and blocks)', () => {
  const nested = 'def main():\n    if x:\n        y()\n    return 0\n';
  const edit = plan([swap('if x:\n    y()\n', 'if x:\n    z()\n')], nested);
  assert.equal(applied(edit), 'def main():\n    if x:\n        z()\n    return 0\n');
  assert.deepEqual(tiers(edit), ['relative_indent']);
  const outdented = plan([swap('        if x:\n            y()\n', '        if x:\n            z()\n        w()\n')], nested);
  assert.equal(applied(outdented), 'def main():\n    if x:\n        z()\n    w()\n    return 0\n');
  const cls = 'class A:\n    def f(self):\n        return "x"\n';
  const folded = plan([block('def f(self):\n    return “x”\n', 'def f(self):\n    # doc\n    return "y"\n')], cls);
  assert.equal(applied(folded), 'class A:\n    def f(self):\n        # doc\n        return "y"\n');
  assert.deepEqual(tiers(folded), ['unicode'], 'the tier the match needed, its new lines shifted');
  const foldedEdit = plan([swap('def f(self):\n    return “x”\n', 'def f(self):\n    return "y"\n')], cls);
  assert.equal(applied(foldedEdit), 'class A:\n    def f(self):\n        return "y"\n');
  assert.deepEqual(tiers(foldedEdit), ['unicode']);
  assert.equal(rejected(plan([swap('def f(self):\n  return “x”\n', 'x\n')], cls)), 'context_not_found', 'uneven at the unicode tier too');
});

test('a shifted match: each place of a replaceAll by its own shift; one shifted evenly is taken over one that is not; endings and BOM kept', () => {
  assert.equal(applied(plan([swap('g()\nh()\n', 'g()\n  k()\n', true)], 'if a:\n  g()\n  h()\nif b:\n    g()\n    h()\n')), 'if a:\n  g()\n    k()\nif b:\n    g()\n      k()\n');
  const choice = plan([swap('if a:\n  g()\n', 'if a:\n  k()\n')], 'if a:\n        g()\n    if a:\n      g()\n');
  assert.equal(applied(choice), 'if a:\n        g()\n    if a:\n      k()\n');
  assert.deepEqual(tiers(choice), ['relative_indent']);
  assert.equal(applied(plan([swap('if x:\n  y()\n', 'if x:\n  z()\n')], 'def f():\r\n    if x:\r\n      y()\r\n')), 'def f():\r\n    if x:\r\n      z()\r\n');
  assert.equal(applied(plan([block('if x:\n  y()\n', 'if x:\n  z()\n')], '\uFEFF  if x:\n    y()\n')), '\uFEFF  if x:\n    z()\n');
  assert.equal(rejected(plan([swap('if x:\n  y()\n', 'if x:\n  z()\n')], '  if x:\n    y()\n', 'exact')), 'context_not_found');
});

test('exact and trailing-whitespace matches write the new text as given', () => {
  assert.equal(applied(plan([swap('foo()\n', 'bar()\n')], 'x\n    foo()\n')), 'x\n    bar()\n', 'the exact substring keeps what precedes it');
  const trailing = plan([swap('  if x:  \n    y()\n', 'if x:\n  z()\n')], '  if x:\n    y()\n');
  assert.equal(applied(trailing), 'if x:\n  z()\n');
  assert.deepEqual(tiers(trailing), ['trailing_whitespace']);
  assert.equal(applied(plan([block('  a  \n', 'b\n')], '  a\n')), 'b\n');
  assert.equal(applied(plan([block('  a\n', 'b\n')], '  a\n')), 'b\n');
});

test('relative indentation at two places is ambiguous; fuzz exact turns it off', () => {
  assert.equal(rejected(plan([block('f()\n', 'g()\n')], 'if a:\n  f()\nif b:\n    f()\n')), 'ambiguous_context');
  assert.equal(rejected(plan([block('a = 1\n', 'a = 2\n')], '    a = 1\n', 'exact')), 'context_not_found');
});

test('a spurious blank first SEARCH line is dropped when that makes it match (SEARCH of 3+ lines)', () => {
  const result = plan([block('\nbeta\ngamma\n', 'BETA\ngamma\n')], 'alpha\nbeta\ngamma\n');
  assert.equal(applied(result), 'alpha\nBETA\ngamma\n');
  assert.equal(applied(plan([block('\nbeta\ngamma\n', '\nBETA\ngamma\n')], 'alpha\nbeta\ngamma\n')), 'alpha\nBETA\ngamma\n', 'a blank first REPLACE line goes with it');
  assert.equal(applied(plan([block('\nbeta\ngamma\n', 'x\n')], 'alpha\n\nbeta\ngamma\n')), 'alpha\nx\n', 'kept when it matches');
  assert.equal(rejected(plan([block('\nbeta\n', 'BETA\n')], 'alpha\nbeta\n')), 'context_not_found');
});

test('replaceAll replaces every non-overlapping match at the lowest matching tier', () => {
  assert.equal(applied(plan([swap('a\na\n', 'b\n', true)], 'a\na\na\nx\na\na\n')), 'b\na\nx\nb\n');
  assert.equal(applied(plan([swap('x\n', 'y\n', true)], 'x\nx \nx\n')), 'y\nx \ny\n', 'the looser tier is not used when exact matches');
  assert.equal(applied(plan([swap('x', 'y', true)], 'xax\nx\n')), 'yay\ny\n');
});

test('str_replace: a substring inside a line, exact first, then trailing whitespace and punctuation folded', () => {
  assert.equal(applied(plan([swap('foo(1)', 'foo(2)')], 'def f():\n    foo(1)\n')), 'def f():\n    foo(2)\n');
  const folded = plan([swap('a = “x”  \nb', 'c')], 'a = "x"\nb = 1\n');
  assert.equal(applied(folded), 'c = 1\n');
  assert.deepEqual(tiers(folded), ['unicode']);
  assert.deepEqual(tiers(plan([swap('a  \nb', 'c')], 'a\nb\n')), ['trailing_whitespace']);
  assert.equal(rejected(plan([swap('if a:\nfoo()', 'x')], 'if a:\n    foo()\n')), 'context_not_found', 'indentation is never folded in a substring');
  assert.equal(rejected(plan([swap('o', 'x')], 'foo\n')), 'ambiguous_context');
  assert.equal(applied(plan([swap('…', '...')], 'a…b\n')), 'a...b\n');
  assert.equal(rejected(plan([swap('..', 'x')], 'a…b\n')), 'context_not_found', 'no match inside a folded character');
});

test('str_replace of whole lines: exact lines, then the exact substring, then looser tiers', () => {
  assert.equal(applied(plan([swap('foo(1)\n', 'foo(2)\n')], 'def f():\n    foo(1)\n')), 'def f():\n    foo(2)\n');
  assert.equal(applied(plan([swap('a\n', 'b')], 'a\nc\n')), 'b\nc\n', 'line-wise, a missing final newline of newText is supplied');
  const loose = plan([swap('  foo()  \n', 'bar()\n')], 'x\n    foo()\n');
  assert.equal(applied(loose), 'x\n  bar()\n', 'two spaces left of foo(), as newText has it');
  assert.deepEqual(tiers(loose), ['relative_indent']);
});

test('an empty oldText creates a missing file, is already_exists on an existing one or a directory', () => {
  const created = plan([swap('', 'hello\n'), swap('hello', 'bye')], undefined);
  assert.equal(applied(created), 'bye\n');
  assert.ok(created.ok);
  assert.equal(created.value.files[0]!.op, 'add');
  assert.match(created.value.files[0]!.diff, /^--- \/dev\/null/);
  assert.equal(rejected(plan([swap('', 'x')], 'a\n')), 'already_exists');
  assert.equal(rejected(plan([swap('', 'x')], { kind: 'directory' })), 'already_exists');
  assert.equal(rejected(plan([swap('a\n', 'b\n'), swap('', 'x')], 'a\n')), 'parse_error');
  assert.equal(rejected(plan([swap('a\n', 'b\n')], undefined)), 'not_found');
});

test('insert: after a 1-based line, 0 at the top, the line count at the end; past the end is context_not_found', () => {
  assert.equal(applied(plan([insert(0, 'top\n')], 'a\nb\n')), 'top\na\nb\n');
  assert.equal(applied(plan([insert(1, 'mid')], 'a\nb\n')), 'a\nmid\nb\n');
  assert.equal(applied(plan([insert(2, 'x\ny\n')], 'a\nb\n')), 'a\nb\nx\ny\n');
  assert.equal(applied(plan([insert(2, 'end')], 'a\nb')), 'a\nb\nend', 'the file still lacks a final newline');
  assert.equal(applied(plan([insert(0, 'first')], '')), 'first\n', 'an empty file counts as ending with a newline');
  assert.equal(rejected(plan([insert(3, 'x')], 'a\nb\n')), 'context_not_found');
  const report = plan([insert(1, 'mid')], 'a\nb\n');
  assert.ok(report.ok);
  assert.deepEqual(report.value.files[0]!.hunks, [{ index: 0, line: 2, tier: 'exact', offset: 0 }]);
});

test('the file keeps its CRLF, BOM and final-newline state', () => {
  assert.equal(applied(plan([block('name=old\n', 'name=new\nextra=1\n')], '[core]\r\nname=old\r\nsize=1\r\n')), '[core]\r\nname=new\r\nextra=1\r\nsize=1\r\n');
  assert.equal(applied(plan([insert(1, 'n')], 'a\r\nb\r\n')), 'a\r\nn\r\nb\r\n');
  assert.equal(applied(plan([swap('b\nc', 'x\ny')], 'a\r\nb\r\nc\r\n')), 'a\r\nx\r\ny\r\n');
  assert.equal(applied(plan([block('a\n', 'A\n')], '\uFEFFa\nb\n')), '\uFEFFA\nb\n');
  assert.equal(applied(plan([block('\uFEFFa\n', 'A\n')], '\uFEFFa\nb\n')), '\uFEFFA\nb\n');
  assert.equal(applied(plan([block('b\n', 'c\n')], 'a\nb')), 'a\nc');
  assert.equal(applied(plan([block('b\n', '')], 'a\nb')), 'a');
  assert.equal(applied(plan([swap('a', 'c\n')], 'a\nb')), 'c\n\nb');
  assert.equal(applied(plan([swap('b\n', 'c\n')], 'a\nb')), 'a\nc', 'a search\'s final newline where the file has none');
  assert.equal(applied(plan([swap('b\n', 'c\nd\n')], 'a\nb')), 'a\nc\nd');
  assert.equal(applied(plan([block('a\nb\n', '')], 'a\nb\n')), '');
});

test('atomic: a failing edit rejects the whole patch, earlier edits and files included', () => {
  assert.equal(rejected(plan([block('a\n', 'A\n'), block('nope\n', 'B\n')], 'a\n')), 'context_not_found');
  const later = plan([block('a\n', 'A\n')], 'a\n', undefined, [{ op: 'edit', path: 'g', edits: [block('nope\n', 'x\n')] }]);
  assert.ok(!later.ok);
  assert.equal(later.error.path, 'g');
});

test('the receipt diff is a unified diff of the change, numbered in the file', () => {
  const before = Array.from({ length: 20 }, (_, index) => `line ${index + 1}`).join('\n') + '\n';
  const result = plan([block('line 10\n', 'ten\n'), block('line 18\n', 'eighteen\n')], before);
  assert.ok(result.ok);
  assert.equal(result.value.files[0]!.diff, [
    '--- a/f', '+++ b/f',
    '@@ -7,7 +7,7 @@', ' line 7', ' line 8', ' line 9', '-line 10', '+ten', ' line 11', ' line 12', ' line 13',
    '@@ -15,6 +15,6 @@', ' line 15', ' line 16', ' line 17', '-line 18', '+eighteen', ' line 19', ' line 20', '',
  ].join('\n'));
  const unchanged = plan([block('line 1\n', 'line 1\n')], before);
  assert.ok(unchanged.ok);
  assert.equal(unchanged.value.files[0]!.diff, '');
});

test('str_replace at the end of the file is exact: an oldText and newText that differ in a final newline add or drop it', () => {
  const added = plan([swap('b\nc', 'b\nc\n')], 'a\nb\nc');
  assert.equal(applied(added), 'a\nb\nc\n');
  assert.ok(added.ok);
  assert.equal(added.value.files[0]!.diff, '--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n b\n-c\n\\ No newline at end of file\n+c\n');
  assert.equal(applied(plan([swap('c\n', 'c')], 'a\nb\nc\n')), 'a\nb\nc');
  assert.equal(applied(plan([swap('c', 'c\nd\n')], 'a\nb\nc')), 'a\nb\nc\nd\n');
  assert.equal(applied(plan([swap('b\nc\n', 'x')], 'a\nb\nc\n')), 'a\nx', 'line-wise too');
  assert.equal(applied(plan([swap('b', 'c\n')], 'a\nb')), 'a\nc\n');
  assert.equal(applied(plan([swap('b\n', '')], 'a\nb\n')), 'a\n', 'deleted: the text before ends the file');
  assert.equal(applied(plan([swap('\nb\n', '')], 'a\nb\n')), 'a');
  assert.equal(applied(plan([swap('b', '')], 'a\nb')), 'a\n');
  assert.equal(applied(plan([swap('b\n', 'B'), swap('a', 'A')], 'a\nb\n')), 'A\nB', 'later edits keep the state the earlier left');
});

test('the final newline at the end: CRLF files take CRLF, a BOM stays, edits elsewhere, blocks and inserts keep the state', () => {
  assert.equal(applied(plan([swap('b\nc', 'b\nc\n')], 'a\r\nb\r\nc')), 'a\r\nb\r\nc\r\n');
  assert.equal(applied(plan([swap('c', 'c\nd\n')], 'a\r\nc')), 'a\r\nc\r\nd\r\n');
  assert.equal(applied(plan([swap('c\n', 'c')], 'a\r\nb\r\nc\r\n')), 'a\r\nb\r\nc');
  assert.equal(applied(plan([swap('c\r\n', 'c')], 'a\r\nc\r\n')), 'a\r\nc', 'explicit CRLF');
  assert.equal(applied(plan([swap('b', 'b\n')], '\uFEFFa\nb')), '\uFEFFa\nb\n');
  assert.equal(applied(plan([swap('a\n', 'x')], 'a\nb')), 'x\nb', 'not at the end: line-wise, the state kept');
  assert.equal(applied(plan([swap('a', 'x\n')], 'a\nb\n')), 'x\n\nb\n');
  assert.equal(applied(plan([block('b\n', 'c\n')], 'a\nb\n')), 'a\nc\n');
  assert.equal(applied(plan([insert(2, 'c')], 'a\nb')), 'a\nb\nc');
});

test('edits that ask for a change but leave every byte as it was are already_applied; writes of the same content too', () => {
  for (const [edits, content] of [
    [[swap('c\n', 'c')], 'a\nc'],
    [[swap('x = “1”\n', 'x = "1"\n')], 'x = "1"\n'],
    [[swap('x  \n', 'x\n')], 'x\n'],
    [[block('\uFEFFa\n', 'a\n')], '\uFEFFa\n'],
    [[swap('a', 'b'), swap('b', 'a')], 'a\n'],
  ] as const) {
    const result = plan([...edits], content);
    assert.ok(!result.ok, JSON.stringify(edits));
    assert.equal(result.error.code, 'already_applied');
    assert.match(result.error.message, /would leave every byte of f as it is/);
  }
  assert.equal(applied(plan([swap('c', 'c')], 'a\nc')), 'a\nc', 'an edit that asks for nothing is the no-op it asks for');
  for (const mayReplace of [true, false]) {
    const write = plan([], 'a\n', undefined, [{ op: 'write', path: 'g', content: 'g\n', mayReplace }]);
    assert.ok(!write.ok);
    assert.equal(write.error.code, 'already_applied');
  }
  assert.equal(rejected(plan([], 'a\n', undefined, [{ op: 'write', path: 'g', content: 'g\r\n', mayReplace: false }])), 'precondition_required');
});
