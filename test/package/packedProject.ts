/**
 * The package as another project gets it: a copy of this checkout (what `git clone` would give,
 * plus uncommitted work) is packed with `npm pack` — whose `prepare` builds `dist/` — and the
 * tarball is installed into a scratch project outside the repository. Built once per test file.
 */
import { execFileSync, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../../', import.meta.url));

export interface PackedProject extends Disposable {
  /** The copy of the checkout that was packed (it holds the `dist/` the pack built). */
  readonly clone: string;
  /** Every path in the tarball. */
  readonly tarballFiles: readonly string[];
  /** A scratch ESM project with the tarball installed. */
  readonly consumer: string;
}

/** npm with the caller's `npm test` lifecycle variables removed, so it behaves as run by hand. */
export function npm(args: readonly string[], cwd: string): string {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_') || name === 'npm_config_cache'));
  return execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function run(command: string, args: readonly string[], cwd: string): SpawnSyncReturns<string> {
  return spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 120_000 });
}

export function packAndInstall(): PackedProject {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'patchd-package-')));
  try {
    const clone = join(base, 'clone');
    copyCheckout(clone);
    const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', base], clone)) as [{ filename: string; files: { path: string }[] }];
    const consumer = join(base, 'consumer');
    mkdirSync(consumer);
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    // Cached by this checkout's own install, so no network is needed; --prefer-offline still may use it.
    npm(['install', '--prefer-offline', join(base, packed.filename), `@types/node@${installedVersion('@types/node')}`], consumer);
    return {
      clone,
      tarballFiles: packed.files.map((file) => file.path),
      consumer,
      [Symbol.dispose]: () => rmSync(base, { recursive: true, force: true }),
    };
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    throw error;
  }
}

/** Tracked and untracked-but-not-ignored files, as a fresh clone would hold them, with this checkout's node_modules. */
function copyCheckout(target: string): void {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' });
  for (const path of listed.split('\0')) {
    if (path === '') continue;
    mkdirSync(dirname(join(target, path)), { recursive: true });
    try {
      cpSync(join(REPO, path), join(target, path));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error; // deleted in the work tree, not yet committed
    }
  }
  symlinkSync(join(REPO, 'node_modules'), join(target, 'node_modules'), 'dir');
}

function installedVersion(name: string): string {
  return (JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}
