/** The human form of a receipt for `patchd apply`: one line per file, then the error if any. */
import type { FileReceipt, Receipt, ReceiptError } from '../../protocol/index.ts';

export interface Palette {
  readonly green: (text: string) => string;
  readonly red: (text: string) => string;
  readonly yellow: (text: string) => string;
  readonly dim: (text: string) => string;
  readonly bold: (text: string) => string;
}

const paint = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;
const plain = (text: string) => text;

export const COLORS: Palette = { green: paint(32, 39), red: paint(31, 39), yellow: paint(33, 39), dim: paint(2, 22), bold: paint(1, 22) };
export const NO_COLORS: Palette = { green: plain, red: plain, yellow: plain, dim: plain, bold: plain };

/**
 * Colour when stdout is a terminal that supports it and NO_COLOR is unset or empty (no-color.org).
 * Node's own check would take an empty NO_COLOR as set, so the terminal is asked without it.
 */
export function paletteFor(stream: NodeJS.WriteStream): Palette {
  const { NO_COLOR: noColor = '', ...environment } = process.env;
  return noColor === '' && stream.hasColors?.(environment) === true ? COLORS : NO_COLORS;
}

const OP_LETTER: Record<FileReceipt['op'], string> = { add: 'A', update: 'M', delete: 'D', rename: 'R' };

export function renderReceipt(receipt: Receipt, colors: Palette): string {
  const lines = [headline(receipt, colors), ...receipt.files.map((file) => fileLine(file, colors))];
  for (const diagnostic of receipt.diagnostics) lines.push(colors.dim(`  note: ${diagnostic.message}`));
  if (receipt.error !== undefined) lines.push(...errorLines(receipt.error, colors));
  return `${lines.join('\n')}\n`;
}

function headline(receipt: Receipt, colors: Palette): string {
  const count = `${receipt.files.length} file${receipt.files.length === 1 ? '' : 's'}`;
  const detail = colors.dim(`(${receipt.format}, ${Math.round(receipt.timings.totalMs)} ms)`);
  switch (receipt.status) {
    case 'applied': return `${colors.green('applied')} ${count} ${detail}`;
    case 'dry_run': return `${colors.yellow('dry run')}: would change ${count} ${detail}`;
    case 'partial': return `${colors.red('partially applied')}: ${count} committed before an error ${detail}`;
    case 'rejected': return `${colors.red('rejected')}: nothing was changed ${detail}`;
  }
}

function fileLine(file: FileReceipt, colors: Palette): string {
  const { added, removed } = countChanges(file.diff);
  const name = file.fromPath === undefined ? file.path : `${file.fromPath} → ${file.path}`;
  const counts = [added > 0 ? colors.green(`+${added}`) : '', removed > 0 ? colors.red(`−${removed}`) : ''].filter(Boolean).join(' ');
  const tiers = file.hunks.filter((hunk) => hunk.tier !== 'exact').map((hunk) => `hunk ${hunk.index + 1}: ${hunk.tier}`);
  const fuzz = tiers.length > 0 ? colors.yellow(` [${tiers.join(', ')}]`) : '';
  return `  ${colors.bold(OP_LETTER[file.op])} ${name}  ${counts}${fuzz}`;
}

/** Added and removed lines in a unified diff's hunks (file headers excluded). */
export function countChanges(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  let inHunk = false;
  for (const line of diff.split('\n')) {
    if (line.startsWith('@@')) inHunk = true;
    else if (!inHunk) continue;
    else if (line.startsWith('+')) added += 1;
    else if (line.startsWith('-')) removed += 1;
  }
  return { added, removed };
}

function errorLines(error: ReceiptError, colors: Palette): string[] {
  const where = [error.path, error.hunkIndex === undefined ? undefined : `hunk ${error.hunkIndex + 1}`].filter(Boolean).join(', ');
  const lines = [`  ${colors.red(colors.bold(error.code))}${where === '' ? '' : ` (${where})`}: ${error.message}`, `  ${colors.dim('hint:')} ${error.hint}`];
  if (error.nearest !== undefined) {
    const similarity = Math.round(error.nearest.similarity * 100);
    lines.push(`  ${colors.dim(`nearest text, line ${error.nearest.line} (${similarity}% similar):`)}`);
    lines.push(...error.nearest.text.split('\n').map((text) => `    ${colors.dim('│')} ${text}`));
  }
  return lines;
}
