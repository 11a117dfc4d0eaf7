/** `npm pack` → `npm install` into a project outside the repository, used the ways the README says. */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { packAndInstall, REPO, run, type PackedProject } from './packedProject.ts';

const MODULE_LOG = fileURLToPath(new URL('../helpers/moduleLog.mjs', import.meta.url));
const PATCH = '--- a/hello.txt\n+++ b/hello.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+patchd\n';

/** The README's client example: the first `js` block of "The client library". */
function readmeClientExample(): string {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## The client library'));
  const example = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  assert.ok(example !== undefined, 'README has a js block under "The client library"');
  return example;
}

function workspaceWithHello(consumer: string, name: string): string {
  const root = join(consumer, name);
  mkdirSync(root);
  writeFileSync(join(root, 'hello.txt'), 'hello\nworld\n');
  return root;
}

describe('the packed package', () => {
  let packed: PackedProject;
  before(() => {
    packed = packAndInstall();
  });
  after(() => packed?.[Symbol.dispose]());

  test('the tarball holds the compiled code, its types and the launcher; no sources, tests, benchmarks or examples', () => {
    for (const entry of ['client', 'protocol', 'protocol/tools']) {
      assert.ok(packed.tarballFiles.includes(`dist/${entry}/index.js`), entry);
      assert.ok(packed.tarballFiles.includes(`dist/${entry}/index.d.ts`), entry);
    }
    assert.ok(packed.tarballFiles.includes('dist/daemon/main.js'));
    assert.ok(packed.tarballFiles.includes('dist/daemon/pool/worker.js'));
    assert.ok(packed.tarballFiles.includes('bin/patchd.js'));
    // It makes the launcher CommonJS, which sizes the daemon's threadpool before it starts.
    assert.ok(packed.tarballFiles.includes('bin/package.json'));
    const unexpected = packed.tarballFiles.filter((path) =>
      !/^(package\.json|README\.md|bin\/(patchd\.js|package\.json)|dist\/daemon\/cli\/oneShot\/(inputs\.json|command\.cjs|command\.cache)|dist\/(client|daemon|protocol)\/.+\.(js|d\.ts))$/.test(path));
    assert.deepEqual(unexpected, []);
  });

  test('TypeScript and tsx are not installed with it', () => {
    const manifest = JSON.parse(readFileSync(join(packed.consumer, 'node_modules/patchd/package.json'), 'utf8')) as { dependencies: Record<string, string> };
    assert.deepEqual(Object.keys(manifest.dependencies).filter((name) => /^(typescript|tsx|@types\/)/.test(name)), []);
    assert.equal(existsSync(join(packed.consumer, 'node_modules/tsx')), false);
    assert.equal(existsSync(join(packed.consumer, 'node_modules/typescript')), false);
  });

  test("the README's client example runs as plain ESM on this Node: PatchClient.spawn() applies a patch", () => {
    writeFileSync(join(packed.consumer, 'apply.mjs'), readmeClientExample());
    const root = workspaceWithHello(packed.consumer, 'ws-example');
    writeFileSync(join(packed.consumer, 'fix.diff'), PATCH);
    const result = run(process.execPath, ['apply.mjs', root, 'fix.diff'], packed.consumer);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout, 'update hello.txt\n');
    assert.equal(readFileSync(join(root, 'hello.txt'), 'utf8'), 'hello\npatchd\n');
  });

  test('patchd/tools and patchd/protocol import from ESM', () => {
    const script = "const tools = await import('patchd/tools'); const protocol = await import('patchd/protocol');"
      + " console.log(tools.openai.customTool.format.syntax, tools.anthropic.tool.input_schema.required.join(), typeof protocol.ReceiptSchema.parse);";
    const result = run(process.execPath, ['--input-type=module', '-e', script], packed.consumer);
    assert.equal(result.status, 0, result.stderr);
    assert.equal(result.stdout, 'lark patch function\n');
  });

  test("the README's client example type-checks as a strict NodeNext TypeScript consumer", () => {
    writeFileSync(join(packed.consumer, 'consumer.ts'), readmeClientExample());
    writeFileSync(join(packed.consumer, 'types.ts'), [
      "import type { Receipt } from 'patchd/protocol';",
      "import { ERROR_HINTS, type ErrorCode } from 'patchd/client';",
      "export const hint: string = ERROR_HINTS['context_not_found' satisfies ErrorCode];",
      "export const status = (receipt: Receipt): 'applied' | 'rejected' | 'dry_run' | 'partial' => receipt.status;",
      "import { anthropic, openai } from 'patchd/tools';",
      "export const tools: readonly [string, 'lark', Record<string, unknown>] = [anthropic.tool.name, openai.customTool.format.syntax, openai.functionTool.parameters];",
      '',
    ].join('\n'));
    writeFileSync(join(packed.consumer, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true,
        noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true, skipLibCheck: false, types: ['node'],
      },
      include: ['consumer.ts', 'types.ts'],
    }));
    const tsc = createRequire(join(REPO, 'package.json')).resolve('typescript/bin/tsc');
    const result = run(process.execPath, [tsc, '-p', 'tsconfig.json'], packed.consumer);
    assert.equal(result.status, 0, result.stdout + result.stderr);
  });

  test('npx patchd --version, npx patchd apply and npx patchd mcp --help run the installed compiled command', () => {
    const { version } = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string };
    const versionRun = run('npx', ['--no-install', 'patchd', '--version'], packed.consumer);
    assert.equal(versionRun.status, 0, versionRun.stderr);
    assert.equal(versionRun.stdout, `patchd ${version}\n`);

    const root = workspaceWithHello(packed.consumer, 'ws-cli');
    writeFileSync(join(packed.consumer, 'cli.diff'), PATCH);
    const applyRun = run('npx', ['--no-install', 'patchd', 'apply', 'cli.diff', '-C', root, '--json'], packed.consumer);
    assert.equal(applyRun.status, 0, applyRun.stderr);
    assert.equal((JSON.parse(applyRun.stdout) as { status: string }).status, 'applied');
    assert.equal(readFileSync(join(root, 'hello.txt'), 'utf8'), 'hello\npatchd\n');

    const mcpHelp = run('npx', ['--no-install', 'patchd', 'mcp', '--help'], packed.consumer);
    assert.equal(mcpHelp.status, 0, mcpHelp.stderr);
    assert.match(mcpHelp.stdout, /^usage: patchd mcp \[-C DIR\]/);
  });

  test('the installed one-shot apply runs from the bundled CLI, without zod, chokidar, vscode-jsonrpc, piscina or the MCP SDK', () => {
    const root = workspaceWithHello(packed.consumer, 'ws-modules');
    writeFileSync(join(packed.consumer, 'modules.diff'), PATCH);
    const log = join(packed.consumer, 'modules.txt');
    writeFileSync(log, '');
    const bin = join(packed.consumer, 'node_modules/patchd/bin/patchd.js');
    const result = spawnSync(process.execPath, ['--import', MODULE_LOG, bin, 'apply', '--dry-run', 'modules.diff', '-C', root], {
      cwd: packed.consumer, encoding: 'utf8', timeout: 60_000, env: { ...process.env, PATCHD_TEST_MODULE_LOG: log },
    });
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^dry run: would change 1 file/);
    const loaded = readFileSync(log, 'utf8').trim().split('\n');
    const installed = '/node_modules/patchd/dist/daemon/';
    // The bundle is compiled from its file, not loaded as a module: what shows is its loader and the CommonJS jsdiff it requires.
    assert.ok(loaded.some((url) => url.endsWith('/node_modules/diff/libcjs/patch/create.js')), 'the bundle ran');
    const unbundled = loaded.filter((url) => url.includes(installed));
    assert.deepEqual(unbundled.map((url) => url.slice(url.indexOf(installed) + installed.length)), ['main.js', 'cli/oneShotBundle.js']);
    assert.deepEqual(loaded.filter((url) => /\/node_modules\/(zod|chokidar|vscode-jsonrpc|piscina|@modelcontextprotocol)\//.test(url)), []);
  });

  test('a compiled one-shot command runs tsc\'s newer output, never a bundle built before it (a bare tsc -w after the build)', () => {
    const main = join(packed.clone, 'dist/daemon/main.js');
    const root = workspaceWithHello(packed.consumer, 'ws-stale');
    writeFileSync(join(packed.consumer, 'stale.diff'), PATCH);
    const applyDryRun = () => {
      const log = join(packed.consumer, 'stale-modules.txt');
      writeFileSync(log, '');
      const result = spawnSync(process.execPath, ['--import', MODULE_LOG, main, 'apply', '--dry-run', 'stale.diff', '-C', root], {
        cwd: packed.consumer, encoding: 'utf8', timeout: 60_000, env: { ...process.env, PATCHD_TEST_MODULE_LOG: log },
      });
      assert.equal(result.status, 0, result.stderr);
      const loaded = readFileSync(log, 'utf8').trim().split('\n');
      return { stderr: result.stderr, bundled: loaded.some((url) => url.endsWith('/dist/daemon/cli/oneShotBundle.js')) };
    };
    assert.equal(applyDryRun().bundled, true, 'a fresh build runs the bundle');
    // What tsc -w does on an edit: rewrites that module's output in place, after the bundle was made.
    appendFileSync(join(packed.clone, 'dist/daemon/cli/apply.js'), "process.stderr.write('apply.js as tsc wrote it last\\n');\n");
    const after = applyDryRun();
    assert.equal(after.bundled, false);
    assert.match(after.stderr, /apply\.js as tsc wrote it last/);
  });

  test('in a checkout, bin/patchd.js runs the sources even when a dist/ build is there (never a stale one)', () => {
    assert.ok(existsSync(join(packed.clone, 'dist/daemon/main.js')), 'npm pack built dist/ in the copy');
    writeFileSync(join(packed.clone, 'dist/daemon/main.js'), "process.stdout.write('stale dist\\n');\n");
    const result = run(process.execPath, [join(packed.clone, 'bin/patchd.js'), '--version'], packed.clone);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, /^patchd \d+\.\d+\.\d+\n$/);
  });
});
