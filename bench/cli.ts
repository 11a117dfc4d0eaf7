/**
 * Row (g): `patchd apply --dry-run` as a one-shot process, whole, against `node -e 0` and
 * `git apply --check` run the same way. patchd runs as an installed package would: the
 * launcher `bin/patchd.js` in a directory without TypeScript sources, next to the compiled
 * `dist/` (so whatever the launcher does when installed is what is measured).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { REPO_ROOT } from './repo.ts';
import type { Row } from './rows.ts';
import { median, ms, times } from './stats.ts';
import { makeTree, patchFor } from './tree.ts';

/** A package directory as npm installs it: bin/ and package.json copied, dist/ and node_modules/ linked. */
function installedLayout(base: string): string {
  const installed = join(base, 'installed');
  mkdirSync(installed);
  cpSync(join(REPO_ROOT, 'bin'), join(installed, 'bin'), { recursive: true });
  cpSync(join(REPO_ROOT, 'package.json'), join(installed, 'package.json'));
  symlinkSync(join(REPO_ROOT, 'dist'), join(installed, 'dist'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(installed, 'node_modules'));
  return join(installed, 'bin', 'patchd.js');
}

function wallMs(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const result = spawnSync(command, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
  const took = performance.now() - started;
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}): ${result.stderr}`);
  return took;
}

export function benchCli(quick: boolean): Row {
  const base = mkdtempSync(join(tmpdir(), 'patchd-bench-cli-'));
  const root = makeTree(1, 'patchd-bench-cli-ws-');
  try {
    const launcher = installedLayout(base);
    writeFileSync(join(base, 'change.patch'), patchFor(0));
    const env = { ...process.env, XDG_STATE_HOME: join(base, 'state'), NO_COLOR: '1' };
    const patchd = [launcher, 'apply', '--dry-run', '-C', root, join(base, 'change.patch')];
    const samples = { node: [] as number[], patchd: [] as number[], git: [] as number[] };
    for (let run = 0; run < (quick ? 6 : 20); run++) {
      samples.node.push(wallMs(process.execPath, ['-e', '0'], root, env));
      samples.patchd.push(wallMs(process.execPath, patchd, root, env));
      samples.git.push(wallMs('git', ['apply', '--check', join(base, 'change.patch')], root, env));
    }
    const [node, ours, git] = [median(samples.node), median(samples.patchd), median(samples.git)];
    return {
      id: 'g', label: 'patchd apply --dry-run, whole process ÷ node -e 0', ours: ms(ours),
      peer: `${ms(node)} (node -e 0); git apply --check ${ms(git)}`, peerValue: node,
      value: ours / node, shown: times(ours / node), better: 'lower', goal: 2, goalText: '≤ 2×', tolerance: 1.75,
    };
  } finally {
    rmSync(base, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  }
}
