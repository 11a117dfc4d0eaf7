/** The README's reference tables stay true to the code. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { ERROR_HINTS, FORMATS } from '../../protocol/index.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

test('every error code is in the README with its exact hint', () => {
  for (const [code, hint] of Object.entries(ERROR_HINTS)) {
    assert.ok(readme.includes(`| \`${code}\` | ${hint} |`), `README lacks the row for ${code}`);
  }
});

test('every format is described in the README', () => {
  for (const format of FORMATS) assert.ok(readme.includes(`| \`${format}\` |`), `README lacks the format ${format}`);
});

test('the README shows the commands a newcomer runs', () => {
  for (const command of ['npm install', 'npm start', 'npm test', 'npm run bench']) assert.ok(readme.includes(command), command);
});
