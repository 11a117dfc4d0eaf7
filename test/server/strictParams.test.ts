/**
 * Every request the daemon takes refuses params it does not know (a misspelled `dryrun` must
 * never be a silent write) — at every level a caller writes, batch entries and options too —
 * except `initialize`, the handshake, which stays open to what a newer client may add.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { z } from 'zod';
import {
  ApplyBatchRequest, ApplyPatchRequest, CloseWorkspaceRequest, InitializeRequest, ListTransactionsRequest, OpenWorkspaceRequest,
  ReadFileRequest, SessionDiffRequest, UndoRequest,
} from '../../protocol/index.ts';

const workspaceId = 'ws_1';
/** Each method with valid params and with an unknown key at one place inside them. */
const CASES: readonly { readonly definition: { readonly method: string; readonly params: z.ZodType }; readonly valid: object; readonly typo: object; readonly at: string }[] = [
  { definition: OpenWorkspaceRequest, valid: { root: '/r' }, typo: { root: '/r', readonly: true }, at: '' },
  { definition: OpenWorkspaceRequest, valid: { root: '/r', options: { approvalTimeoutMs: 5 } }, typo: { root: '/r', options: { approvalTimeout: 5 } }, at: 'options' },
  { definition: OpenWorkspaceRequest, valid: { root: '/r', options: { approval: { deny: ['*'] } } }, typo: { root: '/r', options: { approval: { denied: ['*'] } } }, at: 'options.approval' },
  { definition: CloseWorkspaceRequest, valid: { workspaceId }, typo: { workspaceId, force: true }, at: '' },
  { definition: ApplyPatchRequest, valid: { workspaceId, patch: 'p', dryRun: true }, typo: { workspaceId, patch: 'p', dryrun: true }, at: '' },
  {
    definition: ApplyPatchRequest, valid: { workspaceId, operations: [{ type: 'create_file', path: 'a', diff: '+a\n' }] },
    typo: { workspaceId, operations: [{ type: 'create_file', path: 'a', dif: '+a\n' }] }, at: 'operations.0',
  },
  { definition: ApplyBatchRequest, valid: { workspaceId, patches: [{ patch: 'p' }] }, typo: { workspaceId, patches: [{ patch: 'p' }], concurency: 2 }, at: '' },
  { definition: ApplyBatchRequest, valid: { workspaceId, patches: [{ patch: 'p', dryRun: true }] }, typo: { workspaceId, patches: [{ patch: 'p', dryrun: true }] }, at: 'patches.0' },
  { definition: ReadFileRequest, valid: { workspaceId, path: 'a' }, typo: { workspaceId, path: 'a', encoding: 'latin1' }, at: '' },
  { definition: UndoRequest, valid: { workspaceId, transactionId: 't' }, typo: { workspaceId, transactionId: 't', dryrun: true }, at: '' },
  { definition: SessionDiffRequest, valid: { workspaceId }, typo: { workspaceId, from: 't' }, at: '' },
  { definition: ListTransactionsRequest, valid: { workspaceId }, typo: { workspaceId, max: 5 }, at: '' },
];

test('every request but initialize refuses an unknown key, naming it and where it is', () => {
  for (const { definition, valid, typo, at } of CASES) {
    assert.ok(definition.params.safeParse(valid).success, `${definition.method} accepts ${JSON.stringify(valid)}`);
    const parsed = definition.params.safeParse(typo);
    assert.ok(!parsed.success, `${definition.method} refuses ${JSON.stringify(typo)}`);
    const issue = parsed.error.issues.find((candidate) => candidate.code === 'unrecognized_keys');
    assert.ok(issue !== undefined, JSON.stringify(parsed.error.issues));
    assert.equal(issue.path.join('.'), at, definition.method);
    assert.match(issue.message, /Unrecognized key/);
  }
});

test('keys the client leaves undefined are no unknown keys', () => {
  assert.ok(ApplyPatchRequest.params.safeParse({ workspaceId, patch: 'p', dryRun: undefined, format: undefined, expectedSha256ByPath: undefined }).success);
});

test('initialize stays open: a newer client may send what this daemon does not know, and still learn its protocol version', () => {
  const parsed = InitializeRequest.params.safeParse({ clientInfo: { name: 'editor', version: '2', build: 'x' }, capabilities: { streaming: true } });
  assert.ok(parsed.success);
  assert.deepEqual(parsed.data, { clientInfo: { name: 'editor', version: '2' } }, 'unknown keys are dropped, not kept');
});
