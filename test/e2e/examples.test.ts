/** `npm start` runs the bundled example: every example patch applies, except the one meant to be rejected; the scratch directory goes away unless kept. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

function runExample(args: readonly string[] = []) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'examples/run.ts', ...args], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' }, timeout: 60_000 });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

test('the bundled example applies every dialect, shows one rejection, and removes its scratch directory', () => {
  const stdout = runExample();
  const outcomes = new Map<string, string>();
  const lines = stdout.split('\n');
  lines.forEach((line, index) => {
    if (line.startsWith('── ')) outcomes.set(line.slice(3), (lines[index + 1] ?? '').split(' ')[0]!);
  });
  const patches = readdirSync(new URL('../../examples/patches', import.meta.url)).sort();
  assert.deepEqual([...outcomes.keys()], patches);
  for (const [name, status] of outcomes) assert.equal(status, name.includes('rejected') ? 'rejected:' : 'applied', name);
  assert.match(stdout, /context_not_found/);
  const scratch = /^Removed the scratch directory (.+) \(npm start -- --keep keeps it\)\.$/m.exec(stdout)?.[1];
  assert.ok(scratch !== undefined && scratch.includes('patchd-example-'), stdout);
  assert.ok(!existsSync(scratch), `${scratch} is left behind`);
});

test('npm start -- --keep keeps the patched workspace and says where it is', () => {
  const stdout = runExample(['--keep']);
  const kept = /^Kept the patched workspace in (.+) \(remove (.+) when done\)\.$/m.exec(stdout);
  assert.ok(kept !== null, stdout);
  try {
    assert.ok(existsSync(`${kept[1]}/src/clamp.ts`), 'the kept workspace holds the patched files');
    assert.equal(dirname(kept[1]!), kept[2]);
  } finally {
    rmSync(kept[2]!, { recursive: true, force: true });
  }
});
