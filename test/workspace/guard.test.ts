import assert from 'node:assert/strict';
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import test from 'node:test';
import { PathGuard } from '../../daemon/workspace/guard.ts';
import { addFile, listTree, planOf, updateFile, withSandbox } from './fixtures.ts';

function refusal(guard: PathGuard, raw: string): string {
  const result = guard.check(raw);
  assert.ok(!result.ok, `${JSON.stringify(raw)} should be refused`);
  return result.error.code;
}

test('lexical escapes are path_escape', async () => {
  await withSandbox({}, async ({ root }) => {
    const guard = new PathGuard(root);
    for (const raw of ['../x', '/abs', '/etc/passwd', 'a/../../x', 'C:/x', 'c:x', 'a\\b', 'a\0b', '~/x', '.', 'a/..']) {
      assert.equal(refusal(guard, raw), 'path_escape', raw);
    }
  });
});

test('paths are normalised like the engine does', async () => {
  await withSandbox({}, async ({ root }) => {
    const result = new PathGuard(root).check('a/./b//c/../d.txt');
    assert.ok(result.ok);
    assert.equal(result.value.path, 'a/b/d.txt');
    assert.equal(result.value.absolute, path.join(root, 'a', 'b', 'd.txt'));
  });
});

test('.git is permission_denied unless allowed', async () => {
  await withSandbox({ '.git/config': '[core]\n' }, async ({ root }) => {
    const guard = new PathGuard(root);
    for (const raw of ['.git/config', '.git', 'sub/.git/HEAD', '.GIT/config', 'x/../.git/config']) {
      assert.equal(refusal(guard, raw), 'permission_denied', raw);
    }
    assert.ok(new PathGuard(root, { allowGitDir: true }).check('.git/config').ok);
    assert.ok(guard.check('.github/workflows/ci.yml').ok);
  });
});

test('a symlinked directory leading outside is path_escape; one staying inside is followed', async () => {
  await withSandbox({ 'sub/a.txt': 'a\n' }, async ({ root, outside }) => {
    await symlink(outside, path.join(root, 'out'));
    await symlink(path.join(root, 'sub'), path.join(root, 'in'));
    await symlink('../..', path.join(root, 'sub', 'up'));
    const guard = new PathGuard(root);
    assert.equal(refusal(guard, 'out/secret.txt'), 'path_escape');
    assert.equal(refusal(guard, 'out/new/file.txt'), 'path_escape');
    assert.equal(refusal(guard, 'sub/up/outside/secret.txt'), 'path_escape');
    assert.ok(guard.check('in/a.txt').ok);
    assert.ok(guard.check('in/new.txt').ok);
  });
});

test('a symlink as the final component is never used: path_escape outside, permission_denied inside', async () => {
  await withSandbox({ 'real.txt': 'real\n' }, async ({ root, outside }) => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'to-outside'));
    await symlink('real.txt', path.join(root, 'to-inside'));
    await symlink(path.join(outside, 'missing.txt'), path.join(root, 'dangling-outside'));
    await symlink('nowhere.txt', path.join(root, 'dangling-inside'));
    await symlink('loop', path.join(root, 'loop'));
    const guard = new PathGuard(root);
    assert.equal(refusal(guard, 'to-outside'), 'path_escape');
    assert.equal(refusal(guard, 'dangling-outside'), 'path_escape');
    assert.equal(refusal(guard, 'to-inside'), 'permission_denied');
    assert.equal(refusal(guard, 'dangling-inside'), 'permission_denied');
    assert.equal(refusal(guard, 'loop'), 'permission_denied');
  });
});

test('refused paths are neither read nor written, and files outside keep their bytes', async () => {
  await withSandbox({ 'real.txt': 'real\n' }, async (sandbox) => {
    const { root, outside } = sandbox;
    await symlink(outside, path.join(root, 'out'));
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'secret-link'));
    await symlink('real.txt', path.join(root, 'inner-link'));
    const outsideBefore = await listTree(outside);
    const rootBefore = await listTree(root);
    const workspace = await sandbox.open();
    for (const [raw, code] of [['../outside/secret.txt', 'path_escape'], ['out/secret.txt', 'path_escape'], ['secret-link', 'path_escape'], ['inner-link', 'permission_denied']] as const) {
      const read = await workspace.read(raw);
      assert.equal(read.ok ? 'ok' : read.error.code, code, `read ${raw}`);
      const snapshot = await workspace.snapshot(['real.txt', raw]);
      assert.equal(snapshot.ok ? 'ok' : snapshot.error.code, code, `snapshot ${raw}`);
      const outcome = await workspace.commit(planOf(updateFile(raw, 'pwned\n')), { atomic: true, snapshots: new Map() });
      assert.equal(outcome.status === 'rejected' ? outcome.error.code : outcome.status, code, `commit ${raw}`);
      const added = await workspace.commit(planOf(addFile(`${raw}/new.txt`, 'pwned\n')), { atomic: false, snapshots: new Map() });
      assert.equal(added.status, 'rejected');
    }
    await workspace.close();
    assert.deepEqual(await listTree(outside), outsideBefore);
    assert.deepEqual(await listTree(root), rootBefore);
  });
});

test('a path whose parent is a regular file counts as missing for the guard', async () => {
  await withSandbox({ 'file.txt': 'x\n' }, async ({ root }) => {
    const result = new PathGuard(root).check('file.txt/child.txt');
    assert.ok(result.ok);
    assert.equal(result.value.found, 'missing');
  });
});

test('the guard says what its walk found: a regular file, nothing, or something else; through a symlinked directory too', async () => {
  await withSandbox({ 'd/file.txt': 'x\n' }, async ({ root }) => {
    await symlink('d', path.join(root, 'linked'));
    const guard = new PathGuard(root);
    const found = (raw: string) => {
      const result = guard.check(raw);
      assert.ok(result.ok, raw);
      return result.value.found;
    };
    assert.deepEqual(
      ['d/file.txt', 'linked/file.txt', 'd', 'd/none.txt', 'none/file.txt'].map(found),
      ['file', 'file', 'other', 'missing', 'missing'],
    );
  });
});
