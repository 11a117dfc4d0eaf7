/** `npm start` runs the bundled example: every example patch applies, except the one meant to be rejected. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

test('the bundled example applies every dialect and shows one rejection', () => {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/run.ts'], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  const outcomes = new Map<string, string>();
  const lines = run.stdout.split('\n');
  lines.forEach((line, index) => {
    if (line.startsWith('── ')) outcomes.set(line.slice(3), (lines[index + 1] ?? '').split(' ')[0]!);
  });
  const patches = readdirSync(new URL('../../examples/patches', import.meta.url)).sort();
  assert.deepEqual([...outcomes.keys()], patches);
  for (const [name, status] of outcomes) assert.equal(status, name.includes('rejected') ? 'rejected:' : 'applied', name);
  assert.match(run.stdout, /context_not_found/);
});
