/**
 * Tool results as text for a model: what happened, which files, and on rejection the code, the
 * hint and the nearest text verbatim — the `content` beside each result's `structuredContent`.
 */
import type { FileReceipt, Receipt, ReceiptError } from '../../protocol/index.ts';
import { countChanges } from '../cli/render.ts';

export function receiptText(receipt: Receipt): string {
  const lines = [headline(receipt)];
  for (const file of receipt.files) lines.push(fileLine(file));
  lines.push(...noteLines(receipt.diagnostics));
  if (receipt.status === 'dry_run') for (const file of receipt.files) if (file.diff !== '') lines.push('', file.diff.trimEnd());
  if (receipt.error !== undefined) lines.push('', ...errorLines(receipt.error));
  if (receipt.status === 'applied' || receipt.status === 'partial') lines.push('', `transaction_id: ${receipt.transactionId}`);
  return `${lines.join('\n')}\n`;
}

/** Notes a model can use read in a glance: a patch of hundreds of hunks may have a note for each (all are in `structuredContent`). */
const MAX_NOTES = 10;

function noteLines(diagnostics: Receipt['diagnostics']): string[] {
  const shown = diagnostics.slice(0, MAX_NOTES).map((diagnostic) => `note: ${diagnostic.message}`);
  const more = diagnostics.length - shown.length;
  return more > 0 ? [...shown, `note: … and ${more} more (structuredContent.diagnostics lists them all)`] : shown;
}

/** code, message, hint and (for context that was not found) the nearest text, verbatim. */
export function errorLines(error: Pick<ReceiptError, 'code' | 'message' | 'hint' | 'path' | 'hunkIndex' | 'nearest'>): string[] {
  const where = error.path === undefined ? '' : ` in ${error.path}${error.hunkIndex === undefined ? '' : `, hunk ${error.hunkIndex + 1}`}`;
  const lines = [`error: ${error.code}${where}`, error.message, `hint: ${error.hint}`];
  if (error.nearest !== undefined) {
    lines.push(`nearest text (line ${error.nearest.line}, ${Math.round(error.nearest.similarity * 100)}% of the hunk's old lines match):`, error.nearest.text);
  }
  return lines;
}

function headline(receipt: Receipt): string {
  const files = `${receipt.files.length} file${receipt.files.length === 1 ? '' : 's'}`;
  switch (receipt.status) {
    case 'applied':
      return `applied: ${files} changed (${receipt.format})`;
    case 'dry_run':
      return `dry run, nothing written: the patch would change ${files} (${receipt.format})`;
    case 'partial':
      return `partially applied: ${files} written before an error stopped the patch`;
    case 'rejected':
      return 'rejected: nothing was written';
  }
}

function fileLine(file: FileReceipt): string {
  const { added, removed } = countChanges(file.diff);
  const path = file.fromPath === undefined ? file.path : `${file.fromPath} -> ${file.path}`;
  const tolerant = file.hunks.filter((hunk) => hunk.tier !== 'exact').map((hunk) => `hunk ${hunk.index + 1} matched by ${hunk.tier}`);
  return `  ${file.op} ${path} (+${added} -${removed})${tolerant.length === 0 ? '' : `; ${tolerant.join(', ')}`}`;
}
