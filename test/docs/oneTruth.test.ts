/**
 * Invariants read off the source: each protocol method is declared once, in `protocol/` only;
 * and the shipped code reads no environment variable the README does not document — so no test
 * hook (like the old `PATCHD_TEST_RUNAWAY`) can hide in the product.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { REPO_ROOT } from '../helpers/cli.ts';

const PRODUCT_DIRS = ['daemon', 'client', 'protocol', 'bin'];

function sourcesUnder(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.(ts|js|mjs)$/.test(entry.name))
    .map((entry) => relative(REPO_ROOT, join(entry.parentPath, entry.name)));
}

const product = PRODUCT_DIRS.flatMap(sourcesUnder).map((file) => ({ file, text: readFileSync(join(REPO_ROOT, file), 'utf8') }));

test('each JSON-RPC method is declared once, and only in protocol/', () => {
  const declared = new Map<string, string[]>();
  for (const { file, text } of product) {
    for (const [, method] of text.matchAll(/\bdefine(?:Request|Notification)0?\(\s*'([^']+)'/g)) {
      declared.set(method!, [...(declared.get(method!) ?? []), file]);
    }
    if (!file.startsWith('protocol/')) assert.doesNotMatch(text, /\bnew (?:Request|Notification)Type\d?\(/, `${file} declares a message type outside protocol/`);
  }
  assert.ok(declared.has('patch/apply') && declared.has('$/progress'), 'the scan finds declarations');
  for (const [method, files] of declared) assert.deepEqual(files.length, 1, `${method} is declared in ${files.join(', ')}`);
});

test('the product reads only the environment variables the README documents', () => {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const read = new Set<string>();
  for (const { text } of product) {
    for (const match of text.matchAll(/\benv(?:\.([A-Z_][A-Z0-9_]*)|\[\s*['"]([A-Z_][A-Z0-9_]*)['"]\s*\])/g)) read.add(match[1] ?? match[2]!);
  }
  assert.ok(read.has('PATCHD_STATE_DIR'), 'the scan finds environment reads');
  // HOME is where ~ is; every other variable is a setting of patchd's.
  const undocumented = [...read].filter((name) => name !== 'HOME' && !readme.includes(`| \`${name}\` |`));
  assert.deepEqual(undocumented, []);
});
