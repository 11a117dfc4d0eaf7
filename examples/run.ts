/**
 * `npm start`: copies `examples/workspace` to a scratch directory, starts a patchd daemon,
 * applies every example patch in `examples/patches` (one per dialect, and one that is
 * rejected) through the client library, and prints each receipt.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PatchClient, type Change } from '../client/index.ts';
import { paletteFor, renderReceipt } from '../daemon/cli/render.ts';

const examples = fileURLToPath(new URL('.', import.meta.url));
const patchesDir = join(examples, 'patches');
const scratch = join(mkdtempSync(join(tmpdir(), 'patchd-example-')), 'workspace');
cpSync(join(examples, 'workspace'), scratch, { recursive: true });

const colors = paletteFor(process.stdout);
const out = (text: string) => process.stdout.write(`${text}\n`);

function loadChange(name: string): Change {
  const text = readFileSync(join(patchesDir, name), 'utf8');
  return name.endsWith('.json') ? (JSON.parse(text) as Change) : text;
}

out(colors.bold(`patchd example: patching a copy of examples/workspace in ${scratch}\n`));
await using client = await PatchClient.spawn();
await using workspace = await client.openWorkspace(scratch);
for (const name of readdirSync(patchesDir).sort()) {
  const receipt = await workspace.apply(loadChange(name));
  out(colors.bold(`── ${name}`));
  out(renderReceipt(receipt, colors).trimEnd());
  for (const file of receipt.files) if (file.diff !== '') out(colors.dim(file.diff.trimEnd()));
  out('');
}
out(`The patched workspace is in ${scratch}`);
