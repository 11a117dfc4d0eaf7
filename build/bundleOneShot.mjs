/**
 * `npm run bundle-cli`, after tsc: bundles the one-shot commands from tsc's output
 * (dist/daemon/cli/command.js) into dist/daemon/cli/oneShot/, then writes inputs.json there — the
 * files the bundle was built from, relative to it. dist/daemon/main.js runs the bundle only
 * while none of them is newer than inputs.json, so a later tsc (a bare `tsc -w`) that rewrote one
 * never leaves a stale bundle running.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const outdir = 'dist/daemon/cli/oneShot';
const { metafile } = await build({
  entryPoints: ['dist/daemon/cli/command.js'],
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  outdir,
  logLevel: 'warning',
  metafile: true,
});
const inputs = Object.keys(metafile.inputs).map((input) => path.relative(outdir, input).split(path.sep).join('/')).sort();
writeFileSync(path.join(outdir, 'inputs.json'), `${JSON.stringify(inputs)}\n`);
