/**
 * `patchd apply --batch PATH…`: every patch file (directories expand to their files) through
 * the daemon's `patch/applyBatch` flow, in-process. A file that holds no patch is a rejected
 * row with its reason; the rest still run. A progress bar on stderr when it is a terminal;
 * then a table (or, with `--json`, one receipt per line as each patch finishes). Exit 0 when
 * every patch applied (or would apply), 1 otherwise.
 */
import type { BatchPatch } from '../../protocol/batch.ts';
import type { Receipt } from '../../protocol/receipt.ts';
import { applyBatch } from '../server/applyBatch.ts';
import { mapLimited } from '../workspace/limited.ts';
import { applyParams, succeeded } from './apply.ts';
import type { ApplyCommand } from './applyOptions.ts';
import { listBatchFiles, readBatchFile } from './batchFiles.ts';
import { renderBatch } from './batchRender.ts';
import { isUnreadable, type PatchSource } from './input.ts';
import { unreadableReceipt, withLocalWorkspace } from './local.ts';
import { createProgress } from './progress.ts';
import { paletteFor } from './render.ts';
import type { Settings } from './settings.ts';

export async function runBatch(command: ApplyCommand, settings: Settings): Promise<number> {
  const files = await listBatchFiles(command.sources);
  const sources = await mapLimited(files, (file) => readBatchFile(file, command.format));
  const receipts: Receipt[] = [];
  const progress = createProgress(process.stderr, files.length, paletteFor(process.stderr));
  const finish = (index: number, receipt: Receipt): void => {
    receipts[index] = receipt;
    progress.tick(receipt);
    if (command.json) process.stdout.write(`${JSON.stringify({ file: files[index], ...receipt })}\n`);
  };
  const runnable: { index: number; patch: BatchPatch }[] = [];
  sources.forEach((source, index) => {
    if (isUnreadable(source)) finish(index, unreadableReceipt(command.format, source.reason));
    else runnable.push({ index, patch: batchPatch(command, source) });
  });
  try {
    if (runnable.length > 0) {
      await withLocalWorkspace(command.directory, settings, (run) => applyBatch(
        { workspaceId: 'cli', patches: runnable.map((item) => item.patch), concurrency: command.concurrency, partialResultToken: 'cli' },
        { ...run, onReceipt: (index, receipt) => finish(runnable[index]!.index, receipt) },
      ));
    }
  } finally {
    progress.done();
  }
  if (!command.json) {
    const rows = files.map((file, index) => ({ file, receipt: receipts[index]! }));
    process.stdout.write(renderBatch(rows, paletteFor(process.stdout), process.stdout.isTTY === true ? process.stdout.columns : undefined));
  }
  return receipts.every(succeeded) ? 0 : 1;
}

function batchPatch(command: ApplyCommand, source: PatchSource): BatchPatch {
  const { workspaceId: _, ...patch } = applyParams(command, source);
  return patch;
}
