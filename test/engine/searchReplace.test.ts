import assert from 'node:assert/strict';
import test from 'node:test';
import { LIMITS } from '../../daemon/engine/limits.ts';
import { parsePatch } from '../../daemon/engine/parse.ts';
import { fromText, parserHarness } from '../helpers/parserHarness.ts';
import { parseSearchReplace } from '../../daemon/engine/searchReplace.ts';
import type { FilePatch, TextEdit } from '../../daemon/engine/types.ts';

const { parsed, rejected } = parserHarness(fromText(parseSearchReplace));

function block(search: string[], replace: string[], marks = { head: '<<<<<<< SEARCH', divider: '=======', tail: '>>>>>>> REPLACE' }): string[] {
  return [marks.head, ...search, marks.divider, ...replace, marks.tail];
}

function reply(...lines: string[]): string {
  return `${lines.join('\n')}\n`;
}

function replaceEdit(search: string, replace: string): TextEdit {
  return { kind: 'replace', search, replace, relativeIndent: true };
}

/** The single file patch's path, for path-line tests. */
function pathOf(text: string): string {
  const { files } = parsed(text);
  assert.equal(files.length, 1);
  return files[0]!.path;
}

test('a block becomes one edit with whole-line search and replace, relative indentation on', () => {
  const result = parsed(reply('a.py', ...block(['x = 1', 'y = 2'], ['x = 3'])));
  assert.equal(result.dialect, 'search-replace');
  assert.deepEqual(result.files, [{ op: 'edit', path: 'a.py', edits: [replaceEdit('x = 1\ny = 2\n', 'x = 3\n')] }]);
  assert.deepEqual(result.diagnostics, []);
});

test('path lines: bare, backticked, bold, heading, trailing colon, inside the fence', () => {
  const body = block(['a'], ['b']);
  assert.equal(pathOf(reply('src/a.py', '```python', ...body, '```')), 'src/a.py');
  assert.equal(pathOf(reply('`src/a.py`', ...body)), 'src/a.py');
  assert.equal(pathOf(reply('**src/a.py**:', '```', ...body, '```')), 'src/a.py');
  assert.equal(pathOf(reply('### `docs/a.md`', '```markdown', ...body, '```')), 'docs/a.md');
  assert.equal(pathOf(reply('```python', 'util.py', ...body, '```')), 'util.py');
  assert.equal(pathOf(reply('Makefile', ...body)), 'Makefile');
  assert.equal(pathOf(reply('src/a.py', '', ...body)), 'src/a.py', 'a blank line between path and block is fine');
});

test('a path in the fence info string is a fallback; a path line wins over it', () => {
  assert.equal(pathOf(reply('```src/app.py', ...block(['a'], ['b']), '```')), 'src/app.py');
  assert.equal(pathOf(reply('app.vue', '```vue.js', ...block(['a'], ['b']), '```')), 'app.vue');
});

test('paths are normalised, and escapes refused', () => {
  assert.equal(pathOf(reply('./src/../lib/x.py', ...block(['a'], ['b']))), 'lib/x.py');
  assert.equal(rejected(reply('../outside.txt', ...block([], ['x']))).code, 'path_escape');
  assert.equal(rejected(reply('/etc/passwd', ...block(['a'], ['b']))).code, 'path_escape');
});

test('markers take 5 to 9 characters, SEARCH> and trailing spaces', () => {
  for (const count of [5, 7, 9]) {
    const marks = { head: `${'<'.repeat(count)} SEARCH`, divider: '='.repeat(count), tail: `${'>'.repeat(count)} REPLACE` };
    assert.equal(parsed(reply('a.txt', ...block(['a'], ['b'], marks))).files.length, 1, `${count} characters`);
  }
  assert.equal(parsed(reply('a.txt', ...block(['a'], ['b'], { head: '<<<<<<< SEARCH>', divider: '=======   ', tail: '>>>>>>> REPLACE  ' }))).files.length, 1);
  for (const count of [4, 10]) {
    const marks = { head: `${'<'.repeat(count)} SEARCH`, divider: '='.repeat(count), tail: `${'>'.repeat(count)} REPLACE` };
    assert.equal(rejected(reply('a.txt', ...block(['a'], ['b'], marks))).code, 'parse_error', `${count} characters are no marker`);
  }
});

test('blocks of several files, in reply order; A, B, A gives A one edit patch with both edits', () => {
  const result = parsed(reply('a.txt', ...block(['1'], ['one']), 'b.txt', ...block(['2'], ['two']), 'a.txt', ...block(['3'], ['three'])));
  assert.deepEqual(result.files, [
    { op: 'edit', path: 'a.txt', edits: [replaceEdit('1\n', 'one\n'), replaceEdit('3\n', 'three\n')] },
    { op: 'edit', path: 'b.txt', edits: [replaceEdit('2\n', 'two\n')] },
  ]);
});

test('a block without a path reuses the previous one; prose is ignored and reported', () => {
  const result = parsed(reply('Here are the changes:', '', 'list.txt', '```text', ...block(['one'], ['1']), '', '...', '', ...block(['three'], ['3']), '```', 'Done.'));
  assert.deepEqual(result.files, [{ op: 'edit', path: 'list.txt', edits: [replaceEdit('one\n', '1\n'), replaceEdit('three\n', '3\n')] }]);
  assert.deepEqual(result.diagnostics.map((diagnostic) => diagnostic.code), ['text_around_patch']);
  assert.match(result.diagnostics[0]!.message, /3 line/);
});

test('a line of prose right before a block is not taken for a path', () => {
  assert.equal(pathOf(reply('a.txt', ...block(['a'], ['b']), 'Then change this:', ...block(['c'], ['d']))), 'a.txt');
  assert.equal(pathOf(reply('a.txt', ...block(['a'], ['b']), 'Note:', ...block(['c'], ['d']))), 'a.txt');
  assert.equal(rejected(reply('Here is the fix', ...block(['a'], ['b']))).code, 'parse_error');
});

test('fence lines inside SEARCH and REPLACE are content', () => {
  const result = parsed(reply('README.md', '````markdown', ...block(['```sh', 'make old', '```'], ['```sh', 'make build', '```']), '````'));
  assert.deepEqual(result.files[0], { op: 'edit', path: 'README.md', edits: [replaceEdit('```sh\nmake old\n```\n', '```sh\nmake build\n```\n')] });
});

test('an empty SEARCH creates the file; an empty REPLACE deletes the lines', () => {
  assert.deepEqual(parsed(reply('pkg/v.py', ...block([], ['V = 1']))).files, [{ op: 'add', path: 'pkg/v.py', content: 'V = 1\n' }]);
  assert.deepEqual(parsed(reply('pkg/v.py', ...block(['', '  '], ['V = 1']))).files, [{ op: 'add', path: 'pkg/v.py', content: 'V = 1\n' }]);
  assert.deepEqual(parsed(reply('e.txt', ...block([], []))).files, [{ op: 'add', path: 'e.txt', content: '' }]);
  assert.deepEqual(parsed(reply('a.js', ...block(['debug();'], []))).files, [{ op: 'edit', path: 'a.js', edits: [replaceEdit('debug();\n', '')] }]);
});

test('a file created by a block cannot take more blocks, nor an edited file an empty SEARCH', () => {
  assert.equal(rejected(reply('n.txt', ...block([], ['a']), 'n.txt', ...block(['a'], ['b']))).code, 'parse_error');
  assert.equal(rejected(reply('n.txt', ...block(['a'], ['b']), 'n.txt', ...block([], ['c']))).code, 'parse_error');
});

test('malformed blocks are parse errors', () => {
  const cases: Record<string, string> = {
    'missing divider': reply('a.txt', '<<<<<<< SEARCH', 'a', '>>>>>>> REPLACE'),
    'missing REPLACE marker': reply('a.txt', '<<<<<<< SEARCH', 'a', '=======', 'b'),
    'unterminated': reply('a.txt', '<<<<<<< SEARCH', 'a'),
    'new block inside a block': reply('a.txt', '<<<<<<< SEARCH', 'a', '=======', '<<<<<<< SEARCH', 'b', '=======', 'c', '>>>>>>> REPLACE'),
    'stray REPLACE marker': reply('a.txt', '>>>>>>> REPLACE'),
    'two dividers': reply('a.txt', ...block(['Title', '======='], ['Title'])),
    'no file name': reply(...block(['a'], ['b'])),
    'no block': reply('a.txt', 'just prose'),
    'empty': '',
  };
  for (const [name, text] of Object.entries(cases)) assert.equal(rejected(text).code, 'parse_error', name);
  assert.match(rejected(cases['missing divider']!).message, /=======/);
  assert.match(rejected(cases['no file name']!).message, /names no file/);
});

test('an all-CRLF reply: the CRs are transport; a reply with CR in some lines keeps them', () => {
  const crlf = reply('a.txt', ...block(['a', 'b'], ['c'])).replaceAll('\n', '\r\n');
  assert.deepEqual(parsed(crlf).files[0], { op: 'edit', path: 'a.txt', edits: [replaceEdit('a\nb\n', 'c\n')] });
  const mixed = reply('a.txt', ...block(['a\r'], ['c']));
  assert.deepEqual(parsed(mixed).files[0], { op: 'edit', path: 'a.txt', edits: [replaceEdit('a\r\n', 'c\n')] });
});

test('too many blocks → limit_exceeded', () => {
  const many = Array.from({ length: LIMITS.maxHunks + 1 }, () => block(['a'], ['b']).join('\n')).join('\n');
  const error = rejected(`a.txt\n${many}\n`);
  assert.equal(error.code, 'limit_exceeded');
  assert.equal(error.limit?.name, 'maxHunks');
});

test('auto detects SEARCH/REPLACE blocks; the format given wins', () => {
  const text = reply('Some prose', '--- not a diff', 'a.txt', ...block(['a'], ['b']));
  const auto = parsePatch({ patch: reply('a.txt', ...block(['a'], ['b'])) });
  assert.ok(auto.ok);
  assert.equal(auto.value.dialect, 'search-replace');
  const unified = parsePatch({ patch: text, format: 'unified' });
  assert.ok(!unified.ok, 'as a unified diff it is not one');
  const given = parsePatch({ patch: text, format: 'search-replace' });
  assert.ok(given.ok);
  assert.deepEqual(given.value.files.map((file: FilePatch) => file.path), ['a.txt']);
});
