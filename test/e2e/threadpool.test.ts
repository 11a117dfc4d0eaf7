/**
 * A daemon starts with a larger libuv threadpool, unless the environment sets one: one the client
 * spawns (an ES module entry cannot raise its own pool), and `patchd serve` / `patchd mcp` started
 * by hand through the launcher, which sets it before the pool starts.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { platform } from 'node:os';
import test from 'node:test';
import { PatchClient } from '../../client/index.ts';
import { DAEMON_THREADPOOL_SIZE, daemonEnvironment } from '../../client/daemonProcess.ts';
import { BIN } from '../helpers/cli.ts';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const PATCH = '--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n';

/** Resolves once the daemon's stderr matches `pattern`. */
async function waitForStderr(daemon: RawDaemon, pattern: RegExp): Promise<void> {
  while (!pattern.test(daemon.stderr)) await new Promise((resolve) => daemon.child.stderr.once('data', resolve));
}

test('the caller\'s own UV_THREADPOOL_SIZE wins; otherwise the daemon gets patchd\'s', () => {
  assert.equal(daemonEnvironment({ PATH: '/bin' }).UV_THREADPOOL_SIZE, DAEMON_THREADPOOL_SIZE);
  assert.equal(daemonEnvironment({ UV_THREADPOOL_SIZE: '7' }).UV_THREADPOOL_SIZE, '7');
});

test('a spawned daemon runs with it', { skip: platform() !== 'linux' && 'reads /proc' }, async () => {
  await using client = await PatchClient.spawn({ env: { ...process.env, UV_THREADPOOL_SIZE: undefined } });
  const environ = readFileSync(`/proc/${client.pid}/environ`, 'utf8').split('\0');
  assert.ok(environ.includes(`UV_THREADPOOL_SIZE=${DAEMON_THREADPOOL_SIZE}`), environ.filter((entry) => entry.startsWith('UV_')).join());
});

/** Threads of a live process: libuv's pool starts all of its threads at its first use. */
function threadCount(pid: number): number {
  return readdirSync(`/proc/${pid}/task`).length;
}

for (const [command, asked] of [['serve', undefined], ['serve', '4'], ['mcp', undefined]] as const) {
  const expected = asked === undefined ? `at least ${DAEMON_THREADPOOL_SIZE} threads` : `the ${asked} threads asked for`;
  test(`patchd ${command} started by hand (bin/patchd.js) runs with ${expected}`, { skip: platform() !== 'linux' && 'reads /proc' }, async () => {
    using tree = createTempTree({ 'a.txt': 'a\n' });
    await using daemon = new RawDaemon({ UV_THREADPOOL_SIZE: asked }, [BIN, command, ...(command === 'mcp' ? ['-C', tree.root] : [])]);
    if (command === 'serve') {
      const { workspaceId } = (await daemon.request(1, 'workspace/open', { root: tree.root })).result as { workspaceId: string };
      assert.equal(((await daemon.request(2, 'patch/apply', { workspaceId, patch: PATCH })).result as { status: string }).status, 'applied');
    } else {
      await waitForStderr(daemon, /mcp serving/);
    }
    const threads = threadCount(daemon.child.pid!);
    if (asked === undefined) assert.ok(threads >= Number(DAEMON_THREADPOOL_SIZE), `${threads} threads`);
    else assert.ok(threads < Number(DAEMON_THREADPOOL_SIZE), `${threads} threads`);
  });
}
