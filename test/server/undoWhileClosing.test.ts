/**
 * `patch/undo` racing `workspace/close`, in process: a failure raised because the workspace
 * closed under the undo is `unknown_workspace`, as for patches — never an internal fault.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { createRegistry } from '../../daemon/cli/runtime.ts';
import { UnknownWorkspaceError } from '../../daemon/server/failures.ts';
import { PatchdHandlers, type SessionOutput } from '../../daemon/server/handlers.ts';
import { createLogger } from '../../daemon/server/logger.ts';
import { TEST_STATE_ROOT } from '../helpers/testState.ts';
import { createTempTree } from '../helpers/tempTree.ts';

const log = createLogger(new Writable({ write: (_chunk, _encoding, done) => done() }));
const registry = createRegistry({ taskTimeoutMs: 10_000, log, stateRoot: TEST_STATE_ROOT });
const output: SessionOutput = {
  progress: async () => {}, fileChanged: () => {}, approve: async () => ({ approved: false }),
};

after(() => registry.closeAll());

test('an undo that fails because the workspace closed under it is unknown_workspace', async () => {
  using tree = createTempTree({ 'a.txt': 'a\n' });
  const handlers = new PatchdHandlers({ registry, sessionId: 'undo-close', log, output });
  const { workspaceId } = await handlers.openWorkspace({ root: tree.root });
  const { workspace } = registry.get(workspaceId);
  // The records become unreadable at the instant the workspace closes: the close wins the race.
  workspace.recordsOf = async () => {
    await handlers.closeWorkspace({ workspaceId });
    throw new Error('the state directory went away');
  };
  const undo = handlers.undo({ workspaceId, transactionId: 'any' }, new AbortController().signal);
  await assert.rejects(undo, UnknownWorkspaceError);
});
