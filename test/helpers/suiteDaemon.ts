/**
 * One spawned daemon (and, for suites that reset one tree between cases, one open workspace)
 * shared by the tests of the enclosing `describe`: started in its `before`, closed in its
 * `after`. Call these inside `describe`; they register the hooks and return accessors.
 */
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { PatchClient, type Workspace } from '../../client/index.ts';
import { createTempTree, type TempTree } from './tempTree.ts';

export function suiteClient(): () => PatchClient {
  let client: PatchClient | undefined;
  before(async () => {
    client = await PatchClient.spawn();
  });
  after(async () => {
    await client?.close();
  });
  return () => client ?? assert.fail('the suite daemon is not running');
}

export interface SuiteWorkspace {
  readonly tree: () => TempTree;
  readonly workspace: () => Workspace;
}

/** A suite daemon with one empty temp tree open as a workspace. */
export function suiteWorkspace(): SuiteWorkspace {
  const client = suiteClient();
  let tree: TempTree | undefined;
  let workspace: Workspace | undefined;
  before(async () => {
    tree = createTempTree();
    workspace = await client().openWorkspace(tree.root);
  });
  after(() => {
    tree?.[Symbol.dispose]();
  });
  return {
    tree: () => tree ?? assert.fail('the suite tree is not made'),
    workspace: () => workspace ?? assert.fail('the suite workspace is not open'),
  };
}
