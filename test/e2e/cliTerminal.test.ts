/** The CLI in a pseudo-terminal (util-linux `script`): colour, NO_COLOR, the progress bar, the table's width, the dry-run diff. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { patchdInTerminal, stripAnsi } from '../helpers/cli.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const PATCH = '--- a/greet.txt\n+++ b/greet.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n';
const ESC = '\u001b[';

function greetTree() {
  const tree = createTempTree({ 'greet.txt': 'hello\nworld\n' });
  const patch = join(tree.base, 'change.diff');
  writeFileSync(patch, PATCH);
  return { tree, patch };
}

describe('patchd on a terminal', () => {
  test('the receipt is in colour; NO_COLOR turns colour off, and nothing else changes', () => {
    const { tree, patch } = greetTree();
    using _tree = tree;
    const coloured = patchdInTerminal(['apply', '--dry-run', patch, '-C', tree.root]);
    assert.equal(coloured.code, 0, coloured.stdout);
    assert.ok(coloured.stdout.includes(`${ESC}33mdry run${ESC}39m`), coloured.stdout);
    const plain = patchdInTerminal(['apply', '--dry-run', patch, '-C', tree.root], { env: { NO_COLOR: '1' } });
    assert.equal(plain.code, 0, plain.stdout);
    assert.ok(!plain.stdout.includes(ESC), plain.stdout);
    assert.equal(plain.stdout.replace(/\d+ ms/, 'N ms'), stripAnsi(coloured.stdout).replace(/\d+ ms/, 'N ms'));
  });

  test('an empty NO_COLOR leaves colour on, as no-color.org says', () => {
    const { tree, patch } = greetTree();
    using _tree = tree;
    const run = patchdInTerminal(['apply', '--dry-run', patch, '-C', tree.root], { env: { NO_COLOR: '' } });
    assert.equal(run.code, 0, run.stdout);
    assert.ok(run.stdout.includes(`${ESC}33mdry run${ESC}39m`), run.stdout);
  });

  test('--dry-run shows the diff on a terminal, and writes nothing', () => {
    const { tree, patch } = greetTree();
    using _tree = tree;
    const run = patchdInTerminal(['apply', '--dry-run', patch, '-C', tree.root], { env: { NO_COLOR: '1' } });
    assert.equal(run.code, 0, run.stdout);
    assert.match(run.stdout, /^@@ -1,2 \+1,2 @@\n hello\n-world\n\+there\n/m);
    assert.equal(tree.text('greet.txt'), 'hello\nworld\n');
  });

  test('with no PATCHFILE and a terminal on stdin: a usage error, not a wait for input', () => {
    const { tree } = greetTree();
    using _tree = tree;
    const run = patchdInTerminal(['apply', '-C', tree.root]);
    assert.equal(run.code, 2, run.stdout);
    assert.match(run.stdout, /^patchd apply: no patch given: name a PATCHFILE or pipe the patch to stdin\nusage: patchd apply /);
  });

  test('--batch: a progress bar that erases itself, and a table that fits the terminal', () => {
    const tree = createTempTree(Object.fromEntries(Array.from({ length: 6 }, (_, index) => [`f${index}.txt`, 'one\ntwo\n'])));
    using _tree = tree;
    const dir = join(tree.base, 'a-rather-long-directory-name-for-patches');
    mkdirSync(dir);
    for (let index = 0; index < 6; index++) {
      const body = index === 5 ? ' one\n-absent\n+three\n' : ' one\n-two\n+three\n';
      writeFileSync(join(dir, `a-long-descriptive-name-for-patch-number-${index}.diff`), `--- a/f${index}.txt\n+++ b/f${index}.txt\n@@ -1,2 +1,2 @@\n${body}`);
    }
    const columns = 60;
    const run = patchdInTerminal(['apply', '--batch', dir, '-C', tree.root], { columns });
    assert.equal(run.code, 1, run.stdout);
    assert.match(run.stdout, /[█░]+ 6\/6 {2}\S*✓ 5\S* {2}\S*✗ 1/u, 'the bar reached 6/6');
    assert.ok(run.stdout.includes('\r\u001b[2K'), 'the bar erases its line');
    const table = stripAnsi(run.stdout.slice(run.stdout.lastIndexOf('\r\u001b[2K') + 5)).trimEnd().split('\n');
    assert.match(table[0]!, /^patch\s+status\s+files\s+detail$/);
    assert.equal(table.length, 8, table.join('\n'));
    for (const line of table) assert.ok(line.length <= columns, `${line.length} > ${columns}: ${line}`);
    assert.match(table[6]!, /^….*-number-5\.diff\s+rejected\s+0\s+context_not_found.*…$/);
    assert.match(table[7]!, /^6 patches: 5 applied, 1 rejected$/);
  });
});
