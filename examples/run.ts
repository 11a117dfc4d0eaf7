/**
 * `npm start`: copies `examples/workspace` to a scratch directory, starts a patchd daemon,
 * applies every example patch in `examples/patches` (one per dialect, and one that is
 * rejected) through the client library, and prints each receipt. The scratch directory (the
 * copy and the daemon's state) is removed at the end, unless `npm start -- --keep`.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PatchClient, type Change } from '../client/index.ts';
import { paletteFor, renderReceipt } from '../daemon/cli/render.ts';

const keep = process.argv.slice(2).includes('--keep');
const examples = fileURLToPath(new URL('.', import.meta.url));
const patchesDir = join(examples, 'patches');
const scratchBase = mkdtempSync(join(tmpdir(), 'patchd-example-'));
const scratch = join(scratchBase, 'workspace');

const colors = paletteFor(process.stdout);
const out = (text: string) => process.stdout.write(`${text}\n`);

function loadChange(name: string): Change {
  const text = readFileSync(join(patchesDir, name), 'utf8');
  return name.endsWith('.json') ? (JSON.parse(text) as Change) : text;
}

async function applyEveryExample(): Promise<void> {
  cpSync(join(examples, 'workspace'), scratch, { recursive: true });
  out(colors.bold(`patchd example: patching a copy of examples/workspace in ${scratch}\n`));
  // The daemon's journals and trash live in the scratch directory too, so nothing is left behind.
  await using client = await PatchClient.spawn({ serveArgs: ['--state-dir', join(scratchBase, 'state')] });
  await using workspace = await client.openWorkspace(scratch);
  for (const name of readdirSync(patchesDir).sort()) {
    const receipt = await workspace.apply(loadChange(name));
    out(colors.bold(`── ${name}`));
    out(renderReceipt(receipt, colors).trimEnd());
    for (const file of receipt.files) if (file.diff !== '') out(colors.dim(file.diff.trimEnd()));
    out('');
  }
}

try {
  await applyEveryExample();
} finally {
  if (keep) {
    out(`Kept the patched workspace in ${scratch} (remove ${scratchBase} when done).`);
  } else {
    rmSync(scratchBase, { recursive: true, force: true });
    out(`Removed the scratch directory ${scratchBase} (npm start -- --keep keeps it).`);
  }
}
