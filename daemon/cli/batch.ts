/**
 * `patchd apply --batch PATH…`: every patch file (directories expand to their files) as one
 * `patch/applyBatch`, in-process. A progress bar on stderr when it is a terminal; then a
 * summary table (or, with `--json`, the summary with every receipt). Exit 0 when every patch
 * applied (or dry-ran), 1 otherwise.
 */
import { ApplyBatchParamsSchema, type BatchSummary, type Receipt } from '../../protocol/index.ts';
import { listBatchFiles, readBatchPatch } from './batchFiles.ts';
import { renderBatch } from './batchRender.ts';
import { withLocalWorkspace } from './local.ts';
import { UsageError, type ApplyCommand } from './options.ts';
import { createProgress } from './progress.ts';
import { paletteFor } from './render.ts';

export async function runBatch(command: ApplyCommand): Promise<number> {
  const files = await listBatchFiles(command.sources);
  if (files.length === 0) throw new UsageError('the batch names no patch files');
  const options = { format: command.format, dryRun: command.dryRun, fuzz: command.exact ? 'exact' : 'default' } as const;
  const patches = await Promise.all(files.map((file) => readBatchPatch(file, options)));
  const progress = createProgress(process.stderr, files.length, paletteFor(process.stderr));
  const receipts: Receipt[] = [];
  const batchProgress = async (_token: unknown, { index, receipt }: { index: number; receipt: Receipt }) => {
    receipts[index] = receipt;
    progress.tick(receipt);
  };
  const summary = await withLocalWorkspace({ ...command, output: { batchProgress } }, (handlers, workspaceId) => {
    const params = ApplyBatchParamsSchema.parse({ workspaceId, patches, concurrency: command.concurrency, partialResultToken: 'cli' });
    return handlers.applyBatch(params, new AbortController().signal);
  }).finally(() => progress.done());
  const rows = files.map((file, index) => ({ file, receipt: receipts[index]! }));
  process.stdout.write(command.json ? jsonReport(rows, summary) : renderBatch(rows, summary, paletteFor(process.stdout)));
  return summary.applied + summary.dryRun === summary.total ? 0 : 1;
}

/** The summary with every receipt in patch order (`receipts[i]` is the receipt of `files[i]`). */
function jsonReport(rows: readonly { file: string; receipt: Receipt }[], summary: BatchSummary): string {
  const report = { ...summary, files: rows.map((row) => row.file), receipts: rows.map((row) => row.receipt) };
  return `${JSON.stringify(report, null, 2)}\n`;
}
