/** claimStdout: after it, only the wire handle reaches stdout; console and stray writes go to stderr. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

test('stray stdout writes and console output land on stderr, the wire on stdout', () => {
  const guard = new URL('../../daemon/server/stdoutGuard.ts', import.meta.url).href;
  const script = `
    const { claimStdout } = await import(${JSON.stringify(guard)});
    const wire = claimStdout();
    console.log('log'); console.info('info'); console.debug('debug'); process.stdout.write('stray\\n');
    wire.end('FRAME');`;
  const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.status, 0, child.stderr);
  assert.equal(child.stdout, 'FRAME');
  assert.equal(child.stderr, 'log\ninfo\ndebug\nstray\n');
});
