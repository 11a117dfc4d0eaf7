/** The table `patchd apply --batch` prints: one row per patch, then the totals; cut to the terminal's width. */
import type { Receipt } from '../../protocol/receipt.ts';
import type { Palette } from './render.ts';

export interface BatchRow {
  readonly file: string;
  readonly receipt: Receipt;
}

const STATUS_TEXT: Record<Receipt['status'], string> = { applied: 'applied', rejected: 'rejected', partial: 'partial', dry_run: 'dry run' };
const HEADER = ['patch', 'status', 'files', 'detail'] as const;
/** The patch column keeps at least this much of a name when the terminal is narrow. */
const MIN_NAME = 12;

/** `width`: the terminal's columns (every line fits), or undefined off a terminal (nothing is cut). */
export function renderBatch(rows: readonly BatchRow[], colors: Palette, width?: number): string {
  const cells = rows.map(({ file, receipt }) => [file, STATUS_TEXT[receipt.status], String(receipt.files.length), detailOf(receipt)] as const);
  const table = [HEADER, ...cells];
  const [nameWidth, statusWidth, filesWidth] = [0, 1, 2].map((column) => Math.max(...table.map((row) => row[column]!.length))) as [number, number, number];
  const fixed = statusWidth + filesWidth + 6;
  const name = width === undefined ? nameWidth : Math.min(nameWidth, Math.max(MIN_NAME, width - fixed - 20));
  const detail = width === undefined ? Infinity : Math.max(0, width - fixed - name - 2);
  const lines = table.map((row, index) => {
    const paint = index === 0 ? colors.bold : statusColor(rows[index - 1]!.receipt, colors);
    const line = `${cutStart(row[0], name).padEnd(name)}  ${paint(row[1].padEnd(statusWidth))}  ${row[2].padStart(filesWidth)}  ${cutEnd(row[3], detail)}`;
    return line.trimEnd();
  });
  return `${lines.join('\n')}\n${totals(rows, colors)}\n`;
}

/** Why a patch failed, or which hunks only matched with tolerance (and any re-plan). */
function detailOf(receipt: Receipt): string {
  const error = receipt.error;
  if (error !== undefined) return `${error.code}${error.path === undefined ? '' : ` (${error.path})`}: ${error.message}`;
  const tolerant = receipt.files.flatMap((file) => file.hunks.filter((hunk) => hunk.tier !== 'exact').map((hunk) => `${file.path} hunk ${hunk.index + 1} (${hunk.tier})`));
  const notes = tolerant.length > 0 ? [`tolerant match: ${tolerant.join(', ')}`] : [];
  if (receipt.replanned === true) notes.push('re-planned on new content');
  return notes.join('; ');
}

function statusColor(receipt: Receipt, colors: Palette): (text: string) => string {
  if (receipt.status === 'applied') return colors.green;
  return receipt.status === 'dry_run' ? colors.yellow : colors.red;
}

function totals(rows: readonly BatchRow[], colors: Palette): string {
  const count = (status: Receipt['status']) => rows.filter((row) => row.receipt.status === status).length;
  const parts = [colors.green(`${count('applied')} applied`), colors.red(`${count('rejected')} rejected`)];
  if (count('partial') > 0) parts.push(colors.red(`${count('partial')} partial`));
  if (count('dry_run') > 0) parts.push(colors.yellow(`${count('dry_run')} dry run`));
  const tolerant = rows.filter((row) => row.receipt.files.some((file) => file.hunks.some((hunk) => hunk.tier !== 'exact'))).length;
  if (tolerant > 0) parts.push(colors.yellow(`${tolerant} with tolerant matches`));
  const replanned = rows.filter((row) => row.receipt.replanned === true).length;
  if (replanned > 0) parts.push(`${replanned} re-planned`);
  return colors.bold(`${rows.length} patch${rows.length === 1 ? '' : 'es'}: ${parts.join(', ')}`);
}

/** Plain text cut to `width` characters, ending in `…` when cut. */
function cutEnd(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

/** A path cut from the left, so its file name stays. */
function cutStart(text: string, width: number): string {
  return text.length <= width ? text : `…${text.slice(text.length - width + 1)}`;
}
