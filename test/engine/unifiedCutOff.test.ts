/** A tool's diff cut off in its last hunk is refused; counts stay advisory everywhere else. Through the whole engine (parse + plan). */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type PatchInput, type Plan } from '../../daemon/engine/index.ts';
import { planOnFiles } from '../helpers/planText.ts';

type Tree = Readonly<Record<string, string>>;

/** Parses and plans against an in-memory tree. */
function run(input: PatchInput, tree: Tree): { code?: string; message?: string; path?: string; hunkIndex?: number; hint?: string; plan?: Plan } {
  const plan = planOnFiles(input, tree);
  return plan.ok ? { plan: plan.value } : plan.error;
}

function applied(patch: string, tree: Tree, path: string): { text: string; diagnostics: readonly string[] } {
  const { plan, code, message } = run({ patch }, tree);
  assert.ok(plan, `expected the patch to apply, got ${code}: ${message}`);
  const after = plan.files.find((file) => file.path === path)?.after;
  return { text: new TextDecoder().decode(after ?? undefined), diagnostics: plan.diagnostics.map((entry) => entry.code) };
}

function cutOff(patch: string, tree: Tree): { message: string; path?: string; hunkIndex?: number; hint?: string } {
  const { code, message = '', path, hunkIndex, hint } = run({ patch }, tree);
  assert.equal(code, 'parse_error', `expected a cut-off patch to be refused, got ${code ?? 'applied'}: ${message}`);
  assert.match(message, /looks cut off/);
  return { message, path, hunkIndex, hint };
}

const lines = (...text: string[]) => `${text.join('\n')}\n`;
const TEN = { 'a.txt': lines('1', '2', '3', '4', '5', '6', '7', '8', '9', '10') };
const GIT_HEADER = ['diff --git a/a.txt b/a.txt', 'index f00c965..c3a2d1c 100644', '--- a/a.txt', '+++ b/a.txt'];
const DATED_HEADER = ['--- a.txt\t2024-05-01 10:00:00.000000000 +0200', '+++ a.txt\t2024-05-02 11:30:00.000000000 +0200'];
/** `git diff` of deleting lines 4 to 6 of TEN. */
const DELETE_4_TO_6 = ['@@ -1,9 +1,6 @@', ' 1', ' 2', ' 3', '-4', '-5', '-6', ' 7', ' 8', ' 9'];
/** The first 9 lines of that diff, as `git diff | head -n 9` leaves them. */
const CUT_AFTER_4 = lines(...GIT_HEADER, ...DELETE_4_TO_6.slice(0, 5));

describe('a git or diff -u diff cut off in its last hunk is a parse_error, nothing applied', () => {
  test('the report: `git diff | head -n 9` would have removed line 4 only', () => {
    const error = cutOff(CUT_AFTER_4, TEN);
    assert.match(error.message, /^The patch looks cut off: hunk 1 of a\.txt \(line 5\) declares 9 old and 6 new lines, but the input ends after 4 and 3\. This is a git diff/);
    assert.match(error.message, /Resend the whole patch/);
    assert.match(error.hint ?? '', /Resend it whole/);
    assert.equal(error.path, 'a.txt');
    assert.equal(error.hunkIndex, 0);
  });

  test('wherever the cut falls in the hunk: after its header, in its leading or trailing context, mid-line, with blank lines after', () => {
    for (let kept = 0; kept < DELETE_4_TO_6.length - 1; kept++) cutOff(lines(...GIT_HEADER, ...DELETE_4_TO_6.slice(0, kept + 1)), TEN);
    cutOff(lines(...GIT_HEADER, ...DELETE_4_TO_6.slice(0, 4), '-'), TEN);
    cutOff(lines(...GIT_HEADER, ...DELETE_4_TO_6.slice(0, 7)) + ' 8', TEN);
    cutOff(`${CUT_AFTER_4}\n\n`, TEN);
  });

  test('diff -u output (timestamps on both header lines) is held to its counts the same way', () => {
    const error = cutOff(lines(...DATED_HEADER, ...DELETE_4_TO_6.slice(0, 5)), TEN);
    assert.match(error.message, /This is `diff -u` output/);
  });

  test('a cut that keeps the context before the lines it took (an append to the file) is still refused', () => {
    const append = ['@@ -1,10 +1,13 @@', '-1', '+one', ' 2', ' 3', ' 4', ' 5', ' 6', ' 7', ' 8', ' 9', ' 10', '+11', '+12', '+13'];
    assert.equal(applied(lines(...GIT_HEADER, ...append), TEN, 'a.txt').text, lines('one', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13'));
    cutOff(lines(...GIT_HEADER, ...append.slice(0, 11)), TEN);
    cutOff(lines(...GIT_HEADER, ...append.slice(0, 12)), TEN);
    cutOff(lines(...GIT_HEADER, ...append.slice(0, 13)), TEN);
  });

  test('a new file cut off is not created with the lines that arrived', () => {
    const added = ['diff --git a/new.txt b/new.txt', 'new file mode 100644', 'index 0000000..3b18e51', '--- /dev/null', '+++ b/new.txt', '@@ -0,0 +1,3 @@', '+x', '+y', '+z'];
    assert.equal(applied(lines(...added), {}, 'new.txt').text, lines('x', 'y', 'z'));
    const error = cutOff(lines(...added.slice(0, -1)), {});
    assert.equal(error.path, 'new.txt');
  });

  test('a cut in the second file of a patch names that file, its hunk and its line', () => {
    const other = ['diff --git a/b.txt b/b.txt', 'index 6178079..0ea0c3b 100644', '--- a/b.txt', '+++ b/b.txt', '@@ -1,2 +1,2 @@', ' b', '-c', '+C'];
    const patch = lines(...GIT_HEADER, ...DELETE_4_TO_6, ...other.slice(0, -1));
    const error = cutOff(patch, { ...TEN, 'b.txt': lines('b', 'c') });
    assert.match(error.message, /hunk 1 of b\.txt \(line 19\)/);
    assert.equal(error.path, 'b.txt');
  });
});

describe('counts stay advisory where nothing shows a cut', () => {
  test('the same cut diff with no index line (a model or a person wrote it) applies as before, with the count note', () => {
    const { text, diagnostics } = applied(lines(...GIT_HEADER.slice(2), ...DELETE_4_TO_6.slice(0, 5)), TEN, 'a.txt');
    assert.equal(text, lines('1', '2', '3', '5', '6', '7', '8', '9', '10'));
    assert.deepEqual(diagnostics, ['hunk_count_mismatch']);
  });

  test('a git diff with exact counts applies', () => {
    const { text, diagnostics } = applied(lines(...GIT_HEADER, ...DELETE_4_TO_6), TEN, 'a.txt');
    assert.equal(text, lines('1', '2', '3', '7', '8', '9', '10'));
    assert.deepEqual(diagnostics, []);
  });

  test('a short hunk of a git diff with another file after it is a count error, not a cut: advisory', () => {
    const short = ['@@ -1,11 +1,6 @@', ...DELETE_4_TO_6.slice(1)];
    const other = ['diff --git a/b.txt b/b.txt', 'index 6178079..0ea0c3b 100644', '--- a/b.txt', '+++ b/b.txt', '@@ -1,2 +1,2 @@', ' b', '-c', '+C'];
    const patch = lines(...GIT_HEADER, ...short, ...other);
    const { text, diagnostics } = applied(patch, { ...TEN, 'b.txt': lines('b', 'c') }, 'a.txt');
    assert.equal(text, lines('1', '2', '3', '7', '8', '9', '10'));
    assert.deepEqual(diagnostics, ['hunk_count_mismatch']);
  });

  test('a short hunk with another hunk of the same file after it is advisory too', () => {
    const patch = lines(...GIT_HEADER, '@@ -1,5 +1,4 @@', ' 1', '-2', ' 3', ' 4', '@@ -8,3 +7,3 @@', ' 8', '-9', '+nine', ' 10');
    assert.equal(applied(patch, TEN, 'a.txt').text, lines('1', '3', '4', '5', '6', '7', '8', 'nine', '10'));
  });

  test('a last hunk that ends as git ends one (its full context, one side short) had its counts edited: advisory, as the corpus has it', () => {
    const patch = lines(...GIT_HEADER, '@@ -1,11 +1,6 @@', ...DELETE_4_TO_6.slice(1));
    assert.equal(applied(patch, TEN, 'a.txt').text, lines('1', '2', '3', '7', '8', '9', '10'));
  });

  test('a last hunk whose new side ends with `\\ No newline at end of file` is whole, whatever it counts', () => {
    const patch = lines(...GIT_HEADER, '@@ -8,3 +8,9 @@', ' 8', ' 9', '-10', '+ten', '+eleven', '\\ No newline at end of file');
    const { text } = applied(patch, TEN, 'a.txt');
    assert.equal(text, `${lines('1', '2', '3', '4', '5', '6', '7', '8', '9', 'ten')}eleven`);
  });
});
