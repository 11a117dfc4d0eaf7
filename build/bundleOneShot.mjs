/**
 * `npm run bundle-cli`, after tsc: bundles the one-shot commands from tsc's output
 * (dist/daemon/cli/command.js) into one CommonJS file in dist/daemon/cli/oneShot/, records V8's
 * code cache for it (see daemon/cli/oneShotBundle.ts), then writes inputs.json there — the files
 * the bundle was built from, relative to it. dist/daemon/main.js runs the bundle only while none
 * of them is newer than inputs.json, so a later tsc (a bare `tsc -w`) that rewrote one never
 * leaves a stale bundle running. inputs.json comes last: without it nothing here runs.
 */
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const outdir = 'dist/daemon/cli/oneShot';
rmSync(outdir, { recursive: true, force: true });
const { metafile } = await build({
  entryPoints: ['dist/daemon/cli/command.js'],
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  outfile: path.join(outdir, 'command.cjs'),
  // Modules find package.json and the daemon's entry from their own URL: the bundle's.
  define: { 'import.meta': '__bundleMeta' },
  banner: { js: 'const __bundleMeta = { url: require("node:url").pathToFileURL(__filename).href, resolve: (specifier) => require("node:url").pathToFileURL(require.resolve(specifier)).href };' },
  logLevel: 'warning',
  metafile: true,
});
const recorded = spawnSync(process.execPath, [path.join(import.meta.dirname, 'codeCache.mjs'), outdir], { stdio: ['ignore', 'ignore', 'inherit'] });
if (recorded.status !== 0) throw new Error(`recording the one-shot bundle's code cache failed (exit ${recorded.status})`);
const inputs = Object.keys(metafile.inputs).map((input) => path.relative(outdir, input).split(path.sep).join('/')).sort();
writeFileSync(path.join(outdir, 'inputs.json'), `${JSON.stringify(inputs)}\n`);
