/** What a workspace closed in order leaves in its state dir (under the test state root). */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { stateDirFor } from '../../daemon/workspace/stateDir.ts';
import { TEST_STATE_ROOT } from './testState.ts';

/** No journal left, the commit log checkpointed and removed, one undo record per transaction committed. */
export function assertClosedInOrder(root: string, transactions: number): void {
  const stateDir = stateDirFor(root, TEST_STATE_ROOT);
  assert.deepEqual(readdirSync(join(stateDir, 'journal')), [], 'no journal left');
  assert.deepEqual(readdirSync(join(stateDir, 'log')), [], 'the commit log was checkpointed and removed');
  assert.equal(readdirSync(join(stateDir, 'history')).filter((name) => name.endsWith('.record')).length, transactions, 'one undo record per transaction');
}
