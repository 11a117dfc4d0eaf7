import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { LIMITS } from '../../daemon/engine/limits.ts';
import type { Hunk, V4AOperation } from '../../daemon/engine/types.ts';
import { parseV4AOperations } from '../../daemon/engine/v4a.ts';
import { parserHarness } from '../helpers/parserHarness.ts';

const { parsed, rejected, onlyFile } = parserHarness((...ops: V4AOperation[]) => parseV4AOperations(ops));

function hunksOf(op: V4AOperation): readonly Hunk[] {
  const file = onlyFile(op);
  if (file.op !== 'update') assert.fail(`expected an update, got ${file.op}`);
  return file.hunks;
}

const update = (path: string, diff: string): V4AOperation => ({ type: 'update_file', path, diff });
const create = (path: string, diff: string): V4AOperation => ({ type: 'create_file', path, diff });

// create_file

test('create_file joins the + lines with \\n: only a final bare + line gives a trailing newline', () => {
  assert.deepEqual(onlyFile(create('docs/intro.txt', '+Welcome.\n+Read SETUP.md first.\n+')), {
    op: 'add', path: 'docs/intro.txt', content: 'Welcome.\nRead SETUP.md first.\n',
  });
  assert.deepEqual(onlyFile(create('VERSION', '+1.4.2\n')), { op: 'add', path: 'VERSION', content: '1.4.2' });
});

test('create_file: a bare + line in the middle is an empty line', () => {
  assert.deepEqual(onlyFile(create('L', '+Apache-2.0\n+\n+See LICENSE.\n+')), { op: 'add', path: 'L', content: 'Apache-2.0\n\nSee LICENSE.\n' });
});

test('create_file with an empty diff is an empty file', () => {
  assert.deepEqual(onlyFile(create('empty.txt', '')), { op: 'add', path: 'empty.txt', content: '' });
});

test('create_file: a line not starting with + is a parse_error naming the diff line', () => {
  const error = rejected(create('c.txt', '+ok\nnot prefixed'));
  assert.equal(error.code, 'parse_error');
  assert.match(error.message, /operation 1 \(create_file "c\.txt"\), diff line 2 \("not prefixed"\)/);
  assert.equal(error.path, 'c.txt');
});

test('create_file or update_file without a diff is a parse_error', () => {
  assert.match(rejected({ type: 'create_file', path: 'a.txt' }).message, /has no diff/);
  assert.match(rejected({ type: 'update_file', path: 'a.txt' }).message, /has no diff/);
});

// update_file

test('update_file: context, remove and add lines; no oldStart, no anchors, not at end of file', () => {
  assert.deepEqual(onlyFile(update('config.yml', ' env: prod\n-verbose: false\n+verbose: true\n level: warn')), {
    op: 'update',
    path: 'config.yml',
    hunks: [{
      anchors: [],
      lines: [
        { kind: 'context', text: 'env: prod' }, { kind: 'remove', text: 'verbose: false' },
        { kind: 'add', text: 'verbose: true' }, { kind: 'context', text: 'level: warn' },
      ],
      atEndOfFile: false,
    }],
  });
});

test('@@ <line> is an anchor; several @@ sections are several hunks', () => {
  const hunks = hunksOf(update('shapes.py', '@@ class Circle:\n-    def area(self):\n+    def surface(self):\n@@ def describe(shape):\n-    print(s.area())\n+    print(s.surface())'));
  assert.deepEqual(hunks.map((hunk) => hunk.anchors), [['class Circle:'], ['def describe(shape):']]);
});

test('stacked @@ anchors keep their indentation, outermost first', () => {
  const [hunk] = hunksOf(update('svc.py', '@@ class Writer:\n@@     def close(self):\n-        pass\n+        self.flush()'));
  assert.deepEqual(hunk?.anchors, ['class Writer:', '    def close(self):']);
});

test('bare @@ separates sections without an anchor', () => {
  const hunks = hunksOf(update('web.js', '@@\n a\n-b\n+B\n@@\n c\n-d\n+D'));
  assert.deepEqual(hunks.map((hunk) => hunk.anchors), [[], []]);
});

test('a unified @@ -a,b +c,d @@ line is ignored, not an anchor', () => {
  const [hunk] = hunksOf(update('n.txt', '@@ -1,2 +1,2 @@\n one\n-two\n+2'));
  assert.deepEqual(hunk?.anchors, []);
  assert.equal(hunk?.lines.length, 3);
});

test('an empty diff line, or a single space, is an empty context line', () => {
  const [hunk] = hunksOf(update('app.py', ' import os\n+import sys\n\n \n def main():'));
  assert.deepEqual(hunk?.lines.slice(2, 4), [{ kind: 'context', text: '' }, { kind: 'context', text: '' }]);
});

test('*** End of File marks the hunk atEndOfFile', () => {
  const [hunk] = hunksOf(update('list.md', ' - item\n-- last\n+- final\n*** End of File'));
  assert.equal(hunk?.atEndOfFile, true);
  assert.deepEqual(hunk?.lines[1], { kind: 'remove', text: '- last' });
});

test('\\ No newline at end of file is honoured', () => {
  const [hunk] = hunksOf(update('g.txt', '-Hello\n+Hi\n\\ No newline at end of file'));
  assert.deepEqual(hunk?.finalNewline, { old: true, new: false });
  assert.equal(hunk?.atEndOfFile, true);
});

test('update_file: an invalid line is a parse_error naming the diff line and the hunk', () => {
  const error = rejected(update('n.txt', ' one\n#two\n+2'));
  assert.equal(error.code, 'parse_error');
  assert.match(error.message, /diff line 2 \("#two"\)/);
  assert.equal(error.hunkIndex, 0);
});

test('update_file: a *** directive other than *** End of File is a parse_error', () => {
  assert.match(rejected(update('n.txt', '-a\n+b\n*** End Patch')).message, /diff line 3/);
});

test('an empty update diff is a parse_error', () => {
  assert.match(rejected(update('a.txt', '')).message, /empty diff/);
  assert.equal(rejected(update('a.txt', '\n\n')).code, 'parse_error');
});

test('an empty section (@@ with no lines) is a parse_error', () => {
  assert.equal(rejected(update('a.txt', '@@ x\n-a\n+b\n@@ y')).hunkIndex, 1);
});

// delete_file, paths, batches

test('delete_file is a delete with no hunks', () => {
  assert.deepEqual(parsed({ type: 'delete_file', path: 'tmp/debug.log' }), {
    dialect: 'v4a', files: [{ op: 'delete', path: 'tmp/debug.log', hunks: [] }], diagnostics: [], ignoredMetadata: [],
  });
});

test('operations keep their order in one patch', () => {
  const patch = parsed(create('app.py', '+x\n+'), update('main.py', '-a\n+b'), { type: 'delete_file', path: 'old.py' });
  assert.deepEqual(patch.files.map((file) => file.op), ['add', 'update', 'delete']);
});

test('a diff is a JSON value, not pasted text: even when every line ends in CRLF its CRs are kept', () => {
  const [hunk] = hunksOf(update('win.txt', ' first\r\n-second\r\n+SECOND'));
  assert.deepEqual(hunk?.lines.map((line) => line.text), ['first\r', 'second\r', 'SECOND']);
  assert.deepEqual(onlyFile(create('w.txt', '+a\r\n+b\r\n+')), { op: 'add', path: 'w.txt', content: 'a\r\nb\r\n' });
});

test('a diff with mixed line endings keeps its CRs as content', () => {
  const [hunk] = hunksOf(update('mixed.txt', ' first\r\n-second\n+SECOND'));
  assert.deepEqual(hunk?.lines.map((line) => line.text), ['first\r', 'second', 'SECOND']);
});

test('paths are normalised; escapes are path_escape for every operation type', () => {
  assert.equal(onlyFile({ type: 'delete_file', path: './a//b.txt' }).path, 'a/b.txt');
  assert.equal(rejected(create('../outside.txt', '+x')).code, 'path_escape');
  assert.equal(rejected(update('/etc/passwd', '-a\n+b')).code, 'path_escape');
  assert.equal(rejected({ type: 'delete_file', path: 'sub/../../x.txt' }).code, 'path_escape');
});

test('two operations on the same path are duplicate_file_patch', () => {
  const error = rejected(create('a.txt', '+x'), update('./a.txt', '-x\n+y'));
  assert.equal(error.code, 'duplicate_file_patch');
  assert.equal(error.path, 'a.txt');
  assert.match(error.message, /Operations 1 and 2/);
});

test('no operations at all is a parse_error', () => {
  const result = parseV4AOperations([]);
  assert.equal(result.ok ? 'ok' : result.error.code, 'parse_error');
});

test('an unknown operation type or a missing path is a parse_error, not a crash', () => {
  assert.match(rejected({ type: 'rename_file', path: 'a' } as unknown as V4AOperation).message, /rename_file/);
  assert.equal(rejected({ type: 'delete_file' } as unknown as V4AOperation).code, 'parse_error');
  assert.equal(rejected(null as unknown as V4AOperation).code, 'parse_error');
});

test(`more than ${LIMITS.maxOperations} operations is limit_exceeded`, () => {
  const ops = Array.from({ length: LIMITS.maxOperations + 1 }, (_, index): V4AOperation => ({ type: 'delete_file', path: `f${index}` }));
  const error = rejected(...ops);
  assert.equal(error.code, 'limit_exceeded');
  assert.deepEqual(error.limit, { name: 'maxOperations', max: LIMITS.maxOperations, actual: LIMITS.maxOperations + 1 });
});

test(`more than ${LIMITS.maxHunks} hunks over all operations is limit_exceeded`, () => {
  const diff = Array.from({ length: LIMITS.maxHunks / 2 + 1 }, (_, index) => `@@\n-a${index}\n+b${index}`).join('\n');
  const error = rejected(update('a.txt', diff), update('b.txt', diff));
  assert.equal(error.code, 'limit_exceeded');
  assert.equal(error.limit?.name, 'maxHunks');
});

test('never throws, whatever the diff', () => {
  const line = fc.oneof(
    fc.constantFrom('@@', '@@ x', '@@ -1 +1 @@', '*** End of File', '*** End Patch', '\\ No newline at end of file', '', ' '),
    fc.tuple(fc.constantFrom(' ', '+', '-', '@', '*', '#'), fc.string({ maxLength: 5 })).map(([prefix, text]) => prefix + text),
  );
  const op = fc.record({
    type: fc.constantFrom('create_file', 'update_file', 'delete_file') as fc.Arbitrary<V4AOperation['type']>,
    path: fc.constantFrom('a.txt', 'b/c.txt', '../x', ''),
    diff: fc.option(fc.tuple(fc.array(line, { maxLength: 12 }), fc.constantFrom('\n', '\r\n')).map(([lines, eol]) => lines.join(eol)), { nil: undefined }),
  });
  fc.assert(fc.property(fc.array(op, { maxLength: 4 }), (ops) => {
    assert.equal(typeof parseV4AOperations(ops).ok, 'boolean');
  }), { numRuns: 2000 });
});
