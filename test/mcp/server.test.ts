/** The MCP tools over a stand-in workspace: a call the host cancels cancels the patch on the daemon (nothing written once it is refused there). */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Workspace } from '../../client/index.ts';
import { createMcpServer } from '../../daemon/mcp/server.ts';

/** A workspace whose apply and undo wait until their call is cancelled, handing over the signal they were given. */
function waitingWorkspace(): { workspace: Workspace; calls: Promise<AbortSignal>[] } {
  const calls: Promise<AbortSignal>[] = [];
  const resolvers: ((signal: AbortSignal) => void)[] = [];
  for (let index = 0; index < 2; index++) calls.push(new Promise((resolve) => resolvers.push(resolve)));
  let called = 0;
  const wait = (options: { signal?: AbortSignal }): Promise<never> => {
    const { signal } = options;
    assert.ok(signal !== undefined, 'the call is given a signal');
    resolvers[called++]?.(signal);
    return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('cancelled on the daemon'))));
  };
  const workspace = { root: '/workspace', apply: (_patch: string, options: { signal?: AbortSignal }) => wait(options), undo: (_id: string, options: { signal?: AbortSignal }) => wait(options) };
  return { workspace: workspace as unknown as Workspace, calls };
}

test('apply_patch and undo pass the host\'s cancellation on to the workspace call', async () => {
  const { workspace, calls } = waitingWorkspace();
  const server = createMcpServer(workspace, { name: 'patchd', version: '0.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  try {
    for (const [index, [name, args]] of ([['apply_patch', { patch: '--- a/x\n+++ b/x\n' }], ['undo', { transaction_id: 'abc' }]] as const).entries()) {
      const controller = new AbortController();
      const calling = client.callTool({ name, arguments: args }, undefined, { signal: controller.signal });
      const signal = await calls[index]!;
      assert.equal(signal.aborted, false);
      controller.abort(new Error('the user pressed stop'));
      await assert.rejects(calling, /pressed stop/);
      if (!signal.aborted) await once(signal, 'abort');
      assert.equal(signal.aborted, true, `${name}: the workspace call was cancelled`);
    }
  } finally {
    await client.close();
    await server.close();
  }
});
