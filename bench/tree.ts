/** The workspace the daemon rows use: small TypeScript files, 100 per directory, and one-hunk patches to them. */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const fileName = (index: number) => `src/module${Math.floor(index / 100)}/file${index}.ts`;

export const fileText = (index: number) =>
  `// file ${index}\nexport const name = "file${index}";\nexport const value = ${index};\nexport default value;\n`;

/** What `patchFor(index)` makes of the file: the bytes a durable writer of the same change writes. */
export const patchedText = (index: number) => fileText(index).replace(`= ${index};`, `= ${index} + 1;`);

/** One hunk changing `value` of file `index` (each file takes it once). */
export const patchFor = (index: number) =>
  `--- a/${fileName(index)}\n+++ b/${fileName(index)}\n@@ -2,3 +2,3 @@\n export const name = "file${index}";\n-export const value = ${index};\n+export const value = ${index} + 1;\n export default value;\n`;

/** One hunk on the first line of file `index`, which `patchFor` leaves alone; `round` makes each one new. */
export const touchFor = (index: number, round: number) =>
  `--- a/${fileName(index)}\n+++ b/${fileName(index)}\n@@ -1,1 +1,1 @@\n-${firstLine(index, round)}\n+${firstLine(index, round + 1)}\n`;

const firstLine = (index: number, round: number) => (round === 0 ? `// file ${index}` : `// file ${index} (touched ${round})`);

/** A fresh directory under the system temp dir holding `count` files. */
export function makeTree(count: number, prefix = 'patchd-bench-ws-'): string {
  const root = mkdtempSync(join(tmpdir(), prefix));
  for (let index = 0; index < count; index++) {
    if (index % 100 === 0) mkdirSync(join(root, fileName(index), '..'), { recursive: true });
    writeFileSync(join(root, fileName(index)), fileText(index));
  }
  return root;
}
