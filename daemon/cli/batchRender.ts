/** The summary table `patchd apply --batch` prints: one row per patch, then the totals. */
import type { BatchSummary, Receipt } from '../../protocol/index.ts';
import type { Palette } from './render.ts';

export interface BatchRow {
  readonly file: string;
  readonly receipt: Receipt;
}

const STATUS_TEXT: Record<Receipt['status'], string> = { applied: 'applied', rejected: 'rejected', partial: 'partial', dry_run: 'dry run' };

export function renderBatch(rows: readonly BatchRow[], summary: BatchSummary, colors: Palette): string {
  const cells = rows.map(({ file, receipt }) => [file, STATUS_TEXT[receipt.status], String(receipt.files.length), detailOf(receipt)]);
  const table = [['patch', 'status', 'files', 'detail'], ...cells];
  const widths = [0, 1, 2].map((column) => Math.max(...table.map((row) => row[column]!.length)));
  const lines = table.map((row, index) => {
    const [file, status, files, detail] = row as [string, string, string, string];
    const paint = index === 0 ? colors.bold : statusColor(rows[index - 1]!.receipt, colors);
    return `${file.padEnd(widths[0]!)}  ${paint(status.padEnd(widths[1]!))}  ${files.padStart(widths[2]!)}  ${detail}`.trimEnd();
  });
  return `${lines.join('\n')}\n${totals(summary, colors)}\n`;
}

function detailOf(receipt: Receipt): string {
  const error = receipt.error;
  const replanned = receipt.replanned === true ? 're-planned on new content' : '';
  if (error === undefined) return replanned;
  return `${error.code}${error.path === undefined ? '' : ` (${error.path})`}: ${error.message}`;
}

function statusColor(receipt: Receipt, colors: Palette): (text: string) => string {
  if (receipt.status === 'applied') return colors.green;
  return receipt.status === 'dry_run' ? colors.yellow : colors.red;
}

function totals(summary: BatchSummary, colors: Palette): string {
  const parts = [colors.green(`${summary.applied} applied`), colors.red(`${summary.rejected} rejected`)];
  if (summary.partial > 0) parts.push(colors.red(`${summary.partial} partial`));
  if (summary.dryRun > 0) parts.push(colors.yellow(`${summary.dryRun} dry run`));
  if (summary.replanned > 0) parts.push(`${summary.replanned} re-planned`);
  return colors.bold(`${summary.total} patch${summary.total === 1 ? '' : 'es'}: ${parts.join(', ')}`);
}
