/**
 * Run by bundleOneShot.mjs with the bundle's directory: runs the bundle the way
 * dist/daemon/main.js does, a dry run and then an apply of a small patch on a scratch
 * workspace, and writes V8's code cache of everything those runs compiled beside the bundle.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const directory = path.resolve(process.argv[2]);
const { compileBundle, CODE_CACHE_FILE } = await import(pathToFileURL(path.resolve('dist/daemon/cli/oneShotBundle.js')).href);
const scratch = mkdtempSync(path.join(tmpdir(), 'patchd-code-cache-'));
try {
  const root = path.join(scratch, 'workspace');
  const patch = path.join(scratch, 'change.diff');
  mkdirSync(root);
  writeFileSync(path.join(root, 'hello.txt'), 'hello\nworld\n');
  writeFileSync(patch, '--- a/hello.txt\n+++ b/hello.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+patchd\n');
  const bundle = compileBundle(`${directory}${path.sep}`, false);
  const { runCommand } = bundle.load();
  const common = ['--state-dir', path.join(scratch, 'state'), '-C', root, patch];
  for (const args of [['--dry-run', ...common], common]) {
    const code = await runCommand('apply', args);
    if (code !== 0) throw new Error(`patchd apply ${args.join(' ')} exited ${code}`);
  }
  writeFileSync(path.join(directory, CODE_CACHE_FILE), bundle.script.createCachedData());
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

