/** Line endings in every dialect (DESIGN, Matching → Line endings), through parse and plan. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import test from 'node:test';
import type { PatchInput } from '../../daemon/engine/index.ts';
import { planOnFiles } from '../helpers/planText.ts';

const decode = (bytes: Uint8Array | null) => (bytes === null ? null : new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes));

const plan = planOnFiles;

/** The new content of `path`, and the tiers its hunks matched at. */
function applied(input: PatchInput, files: Record<string, string>, path = 'f.txt'): { text: string | null; tiers: string[] } {
  const result = plan(input, files);
  assert.ok(result.ok, result.ok ? '' : `${result.error.code}: ${result.error.message}`);
  const file = result.value.files.find((planned) => planned.path === path);
  assert.ok(file, `nothing planned for ${path}`);
  return { text: decode(file.after), tiers: file.hunks.map((hunk) => hunk.tier) };
}

function rejected(input: PatchInput, files: Record<string, string>): string {
  const result = plan(input, files);
  assert.ok(!result.ok, 'expected a rejection');
  return result.error.code;
}

const unified = (...body: string[]) => ({ patch: ['--- a/f.txt', '+++ b/f.txt', ...body].join('\n') + '\n', format: 'unified' as const });

test('a git diff of a CRLF file matches at tier exact and writes CRLF, never CR CR LF', () => {
  const result = applied(unified('@@ -1,3 +1,3 @@', ' a\r', '-b\r', '+B\r', ' c\r'), { 'f.txt': 'a\r\nb\r\nc\r\n' });
  assert.deepEqual(result, { text: 'a\r\nB\r\nc\r\n', tiers: ['exact'] });
});

test('an EOL-explicit patch writes each added line as spelled: a CRLF → LF conversion comes out LF', () => {
  assert.equal(applied(unified('@@ -1,2 +1,2 @@', '-a\r', '-b\r', '+a', '+b'), { 'f.txt': 'a\r\nb\r\n' }).text, 'a\nb\n');
  assert.equal(applied(unified('@@ -1,2 +1,2 @@', '-a', '-b', '+a\r', '+b\r'), { 'f.txt': 'a\nb\n' }).text, 'a\r\nb\r\n');
});

test('a git diff with CRs on added lines only (-U0) is EOL-explicit too', () => {
  assert.equal(applied(unified('@@ -1,0 +2,2 @@', '+x', '+y\r'), { 'f.txt': 'a\r\nb\r\n' }).text, 'a\r\nx\ny\r\nb\r\n');
});

test('a git diff of the very file it was made from (its index line names the file\'s bytes) writes an added LF line as LF beside CRLF lines, as git apply does', () => {
  const blob = (text: string) => execFileSync('git', ['hash-object', '--stdin'], { input: text, encoding: 'utf8' }).trim().slice(0, 7);
  const gitDiff = (index: string, ...body: string[]) => ({
    patch: ['diff --git a/f.txt b/f.txt', `index ${index} 100644`, '--- a/f.txt', '+++ b/f.txt', ...body].join('\n') + '\n',
    format: 'unified' as const,
  });
  const before = 'a\r\nb\r\n';
  assert.equal(applied(gitDiff(`${blob(before)}..${blob('a\r\nx\nb\r\n')}`, '@@ -1,0 +2 @@ a', '+x'), { 'f.txt': before }).text, 'a\r\nx\nb\r\n');
  // An index line that names other bytes (a model's made-up one) says nothing: the file's own endings.
  assert.equal(applied(gitDiff('1234567..89abcde', '@@ -1,0 +2 @@ a', '+x'), { 'f.txt': before }).text, 'a\r\nx\r\nb\r\n');
  // A diff whose CRs were lost on the way: read literally it is not the new blob, so the file's own endings again.
  const lost = gitDiff(`${blob(before)}..${blob('a\r\nx\r\nb\r\n')}`, '@@ -1,2 +1,3 @@', ' a', '+x', ' b');
  assert.deepEqual(applied(lost, { 'f.txt': before }), { text: 'a\r\nx\r\nb\r\n', tiers: ['exact'] });
});

test('a patch without CRs compares without endings; added lines take the ending of the lines they join', () => {
  assert.deepEqual(applied(unified('@@ -1,2 +1,3 @@', ' a', '+n', ' b'), { 'f.txt': 'a\r\nb\r\n' }), { text: 'a\r\nn\r\nb\r\n', tiers: ['exact'] });
  const mixed = 'crlf1\r\ncrlf2\r\nlf1\nlf2\n';
  assert.equal(applied(unified('@@ -1,2 +1,3 @@', ' crlf1', '+new', ' crlf2'), { 'f.txt': mixed }).text, 'crlf1\r\nnew\r\ncrlf2\r\nlf1\nlf2\n');
  assert.equal(applied(unified('@@ -3,2 +3,3 @@', ' lf1', '+new', ' lf2'), { 'f.txt': mixed }).text, 'crlf1\r\ncrlf2\r\nlf1\nnew\nlf2\n');
});

test('the same block once with CRLF and once with LF: ambiguous without CRs, told apart by them', () => {
  const file = { 'f.txt': 'w\r\nh\r\nsep\nw\nh\n' };
  assert.equal(rejected(unified('@@', ' w', '-h', '+H'), file), 'ambiguous_context');
  assert.equal(applied(unified('@@', ' w\r', '-h\r', '+H\r'), file).text, 'w\r\nH\r\nsep\nw\nh\n');
  assert.equal(applied(unified('@@', ' w', '-h', '+H'), { 'f.txt': 'w\r\nh\r\nsep\n' }).text, 'w\r\nH\r\nsep\n');
});

test('a lone CR is content: never a line break, never dropped', () => {
  const file = { 'f.txt': 'a\r\n50%\r100%\r\nb\r\n' };
  assert.equal(applied(unified('@@ -1,3 +1,3 @@', ' a\r', '-50%\r100%\r', '+done\r', ' b\r'), file).text, 'a\r\ndone\r\nb\r\n');
  assert.equal(rejected(unified('@@ -1,3 +1,3 @@', ' a', '-50%', '-100%', '+done', ' b'), file), 'context_not_found');
  assert.equal(rejected(unified('@@ -1,3 +1,3 @@', ' a', '-50%100%', '+done', ' b'), file), 'context_not_found');
});

test('a patch without CRs on a file with lone CRs is not found, never taken for already applied', () => {
  // git's diff of deleting the first line, its CRs stripped as a model writes it: the file's last
  // line is a lone CR, which the blank context line matches only where whitespace is ignored.
  const file = { 'f.txt': 'lone\rcr\nx = 1;\n\r' };
  const stripped = unified('@@ -1,3 +1,2 @@', '-lonecr', ' x = 1;', ' ', '\\ No newline at end of file');
  assert.equal(rejected(stripped, file), 'context_not_found');
  assert.equal(applied(unified('@@ -1,3 +1,2 @@', '-lone\rcr', ' x = 1;', ' \r', '\\ No newline at end of file'), file).text, 'x = 1;\n\r');
  // Without lone CRs, a change made before is still told apart.
  assert.equal(rejected(unified('@@ -1,3 +1,2 @@', '-gone', ' x = 1;', ' y'), { 'f.txt': 'x = 1;\ny\n' }), 'already_applied');
});

test('\\ No newline at end of file on a CRLF file: the last line keeps exactly the bytes the patch gives', () => {
  assert.equal(applied(unified('@@ -1,2 +1,2 @@', ' a\r', '-b', '\\ No newline at end of file', '+B', '\\ No newline at end of file'), { 'f.txt': 'a\r\nb' }).text, 'a\r\nB');
  assert.equal(applied(unified('@@ -1,2 +1,3 @@', ' a\r', '-b', '\\ No newline at end of file', '+b\r', '+c\r'), { 'f.txt': 'a\r\nb' }).text, 'a\r\nb\r\nc\r\n');
  // As git writes it: a CR before a missing final newline is content.
  assert.equal(applied(unified('@@ -1,2 +1,2 @@', ' a\r', '-b\r', '+B\r', '\\ No newline at end of file'), { 'f.txt': 'a\r\nb\r\n' }).text, 'a\r\nB\r');
  assert.equal(applied(unified('@@ -1,2 +1,2 @@', ' a', '-b', '+B', '\\ No newline at end of file'), { 'f.txt': 'a\r\nb\r\n' }).text, 'a\r\nB');
});

test('a file that is only a BOM: git\'s BOM line is the BOM', () => {
  const patch = unified('@@ -1 +1,2 @@', '-\uFEFF', '\\ No newline at end of file', '+\uFEFFx\r', '+y\r');
  assert.equal(applied(patch, { 'f.txt': '\uFEFF' }).text, '\uFEFFx\r\ny\r\n');
});

test('new, deleted and renamed CRLF files', () => {
  const created = { patch: 'diff --git a/n.txt b/n.txt\nnew file mode 100644\n--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1,2 @@\n+a\r\n+b\r\n', format: 'unified' as const };
  assert.equal(applied(created, {}, 'n.txt').text, 'a\r\nb\r\n');
  const deleted = { patch: 'diff --git a/f.txt b/f.txt\ndeleted file mode 100644\n--- a/f.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-a\r\n-b\r\n', format: 'unified' as const };
  assert.equal(applied(deleted, { 'f.txt': 'a\r\nb\r\n' }).text, null);
  const renamed = { patch: 'diff --git a/f.txt b/g.txt\nsimilarity index 50%\nrename from f.txt\nrename to g.txt\n--- a/f.txt\n+++ b/g.txt\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+B\r\n', format: 'unified' as const };
  assert.equal(applied(renamed, { 'f.txt': 'a\r\nb\r\n' }, 'g.txt').text, 'a\r\nB\r\n');
});

test('codex envelope: CR lines are endings, a blank CR line is an empty context line, anchors compare without endings', () => {
  const envelope = (...lines: string[]) => ({ patch: ['*** Begin Patch', '*** Update File: f.txt', ...lines, '*** End Patch'].join('\n') + '\n', format: 'codex' as const });
  const file = { 'f.txt': '[a]\r\nx=1\r\n\r\n[b]\r\nx=1\r\n' };
  assert.equal(applied(envelope('@@ [b]\r', '-x=1\r', '+x=2\r'), file).text, '[a]\r\nx=1\r\n\r\n[b]\r\nx=2\r\n');
  assert.equal(applied(envelope('@@ [a]', ' x=1\r', '\r', '+[new]\r'), file).text, '[a]\r\nx=1\r\n\r\n[new]\r\n[b]\r\nx=1\r\n');
  assert.equal(applied(envelope('@@ [b]', '-x=1', '+x=2'), file).text, '[a]\r\nx=1\r\n\r\n[b]\r\nx=2\r\n');
});

test('V4A: a diff is a JSON value, its CRs are kept, even when every line has one', () => {
  const operations = (diff: string, type: 'update_file' | 'create_file' = 'update_file') => ({ operations: [{ type, path: 'f.txt', diff }], format: 'v4a' as const });
  assert.equal(applied(operations(' a\r\n-b\r\n+B\r\n'), { 'f.txt': 'a\r\nb\r\n' }).text, 'a\r\nB\r\n');
  assert.equal(applied(operations('+a\r\n+b\r\n+', 'create_file'), {}).text, 'a\r\nb\r\n');
  assert.equal(rejected(operations(' w\n-h\n+H'), { 'f.txt': 'w\r\nh\r\nsep\nw\nh\n' }), 'ambiguous_context');
});

test('SEARCH/REPLACE: CR lines are endings; without them the block takes the file\'s endings', () => {
  const reply = (search: string[], replace: string[]) => ({ patch: ['f.txt', '<<<<<<< SEARCH', ...search, '=======', ...replace, '>>>>>>> REPLACE'].join('\n') + '\n', format: 'search-replace' as const });
  const file = { 'f.txt': 'a\r\nb\r\nc\r\n' };
  assert.deepEqual(applied(reply(['b\r'], ['B\r', 'B2\r']), file), { text: 'a\r\nB\r\nB2\r\nc\r\n', tiers: ['exact'] });
  assert.equal(applied(reply(['b'], ['B', 'B2']), file).text, 'a\r\nB\r\nB2\r\nc\r\n');
  assert.equal(rejected(reply(['w', 'h'], ['H']), { 'f.txt': 'w\r\nh\r\nsep\nw\nh\n' }), 'ambiguous_context');
});

test('str_replace edits: a line break in the search matches either ending; the replacement takes the file\'s', () => {
  const edit = (oldText: string, newText: string) => ({ edits: [{ path: 'f.txt', oldText, newText }], format: 'edits' as const });
  assert.equal(applied(edit('b\nc', 'B\nC'), { 'f.txt': 'a\r\nb\r\nc\r\n' }).text, 'a\r\nB\r\nC\r\n');
  assert.equal(applied(edit('b\nc', 'B\nC'), { 'f.txt': 'a\nb\r\nc\nd\n' }).text, 'a\nB\r\nC\nd\n');
  assert.equal(applied(edit('\nc', '\nC'), { 'f.txt': 'b\r\nc\r\n' }).text, 'b\r\nC\r\n', 'no CR is left before the replacement\'s line break');
  assert.equal(rejected(edit('w\nh', 'W\nH'), { 'f.txt': 'w\r\nh\r\nsep\nw\nh\n' }), 'ambiguous_context');
  assert.equal(applied({ edits: [{ path: 'f.txt', insertLine: 1, text: 'n\n' }], format: 'edits' }, { 'f.txt': 'a\r\nb\r\n' }).text, 'a\r\nn\r\nb\r\n');
});

test('str_replace edits are JSON values: their CRs are endings, never transport, as in V4A', () => {
  const edit = (oldText: string, newText: string) => ({ edits: [{ path: 'f.txt', oldText, newText }], format: 'edits' as const });
  assert.equal(applied(edit('', 'x\r\ny\r\n'), {}).text, 'x\r\ny\r\n', 'a new file keeps the endings its text gives');
  assert.equal(applied(edit('b\n', 'B\r\n'), { 'f.txt': 'a\nb\nc\n' }).text, 'a\nB\r\nc\n', 'an added line ending in CR is written CRLF');
  assert.equal(applied(edit('b\r\n', 'B\n'), { 'f.txt': 'a\r\nb\r\nc\r\n' }).text, 'a\r\nB\nc\r\n', 'EOL-explicit: a CRLF → LF conversion comes out LF');
  assert.equal(applied(edit('b\r\nc\r\n', 'B\r\nC\r\n'), { 'f.txt': 'a\r\nb\r\nc\r\n' }).text, 'a\r\nB\r\nC\r\n');
  const insert = (text: string) => ({ edits: [{ path: 'f.txt', insertLine: 1, text }], format: 'edits' as const });
  assert.equal(applied(insert('n\r\n'), { 'f.txt': 'a\nb\n' }).text, 'a\nn\r\nb\n');
  assert.equal(applied(insert('n\r\nm\n'), { 'f.txt': 'a\r\nb\r\n' }).text, 'a\r\nn\r\nm\nb\r\n', 'an explicit insert writes each line as spelled');
});

test('every dialect gives the same bytes for the same change: SEARCH/REPLACE, str_replace, V4A, unified', () => {
  const files = { 'f.txt': 'a\r\nb\r\nc\r\n' };
  const changes: [string[], string[]][] = [[['b'], ['B', 'B2']], [['b\r'], ['B\r', 'B2\r']], [['b\r'], ['B']], [['b'], ['B\r', 'C']]];
  for (const [search, replace] of changes) {
    const viaUnified = applied(unified('@@ -2 +2 @@', ...search.map((line) => `-${line}`), ...replace.map((line) => `+${line}`)), files).text;
    const reply = { patch: ['f.txt', '<<<<<<< SEARCH', ...search, '=======', ...replace, '>>>>>>> REPLACE'].join('\n') + '\n', format: 'search-replace' as const };
    const asText = (lines: string[]) => lines.map((line) => `${line}\n`).join('');
    const edit = { edits: [{ path: 'f.txt', oldText: asText(search), newText: asText(replace) }], format: 'edits' as const };
    const v4a = { operations: [{ type: 'update_file' as const, path: 'f.txt', diff: [...search.map((line) => `-${line}`), ...replace.map((line) => `+${line}`)].join('\n') + '\n' }], format: 'v4a' as const };
    for (const [name, input] of [['search-replace', reply], ['str_replace', edit], ['v4a', v4a]] as const) {
      assert.equal(applied(input, files).text, viaUnified, `${name}: ${JSON.stringify(search)} → ${JSON.stringify(replace)}`);
    }
  }
});
