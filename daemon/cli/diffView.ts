/** What a patch changes, for a person: the diff in colour, and `git apply --stat`'s summary. */
import type { FileReceipt } from '../../protocol/receipt.ts';
import { countChanges, type Palette } from './render.ts';

/** Every file's diff; added lines green, removed red, hunk headers dim. */
export function renderDiffs(files: readonly FileReceipt[], colors: Palette): string {
  const lines = files.flatMap((file) => file.diff.split('\n').filter((line, index, all) => line !== '' || index < all.length - 1));
  return lines.map((line) => paintLine(line, colors)).map((line) => `${line}\n`).join('');
}

function paintLine(line: string, colors: Palette): string {
  if (line.startsWith('+++') || line.startsWith('---')) return colors.bold(line);
  if (line.startsWith('@@')) return colors.dim(line);
  if (line.startsWith('+')) return colors.green(line);
  return line.startsWith('-') ? colors.red(line) : line;
}

const MAX_GRAPH = 50;

/** Like `git apply --stat`: ` path | N ++--` per file, then the totals. */
export function renderStat(files: readonly FileReceipt[], colors: Palette): string {
  const rows = files.map((file) => ({ name: file.fromPath === undefined ? file.path : `${file.fromPath} => ${file.path}`, ...countChanges(file.diff) }));
  const nameWidth = Math.max(0, ...rows.map((row) => row.name.length));
  const most = Math.max(0, ...rows.map((row) => row.added + row.removed));
  const countWidth = String(most).length;
  const scale = most > MAX_GRAPH ? MAX_GRAPH / most : 1;
  const lines = rows.map(({ name, added, removed }) => {
    const graph = colors.green('+'.repeat(Math.ceil(added * scale))) + colors.red('-'.repeat(Math.ceil(removed * scale)));
    return ` ${name.padEnd(nameWidth)} | ${String(added + removed).padStart(countWidth)} ${graph}`.trimEnd();
  });
  const added = rows.reduce((sum, row) => sum + row.added, 0);
  const removed = rows.reduce((sum, row) => sum + row.removed, 0);
  return `${[...lines, totals(files.length, added, removed)].join('\n')}\n`;
}

function totals(files: number, added: number, removed: number): string {
  const parts = [`${files} file${files === 1 ? '' : 's'} changed`];
  if (added > 0 || removed === 0) parts.push(`${added} insertion${added === 1 ? '' : 's'}(+)`);
  if (removed > 0 || added === 0) parts.push(`${removed} deletion${removed === 1 ? '' : 's'}(-)`);
  return ` ${parts.join(', ')}`;
}
