/** `patchd apply --socket PATH`: the patch goes to a running shared daemon (`patchd serve --socket PATH`). */
import path from 'node:path';
import type { Receipt } from '../../protocol/receipt.ts';
import { UsageError } from './args.ts';
import type { ApplyCommand } from './applyOptions.ts';
import type { PatchSource } from './input.ts';

export async function applyThroughDaemon(socket: string, command: ApplyCommand, source: PatchSource): Promise<Receipt> {
  // Loaded only here: the in-process path speaks no JSON-RPC.
  const { PatchClient, ConnectionClosedError, RpcError } = await import('../../client/index.ts');
  const client = await PatchClient.connect({ socket }).catch((error: unknown) => {
    throw error instanceof ConnectionClosedError ? new UsageError(`no patchd daemon answers at ${socket} (start one with: patchd serve --socket ${socket})`) : error;
  });
  try {
    const workspace = await client.openWorkspace(path.resolve(command.directory)).catch((error: unknown) => {
      throw error instanceof RpcError && error.data?.code === 'bad_root' ? new UsageError(error.message) : error;
    });
    try {
      // The daemon tells what its opening recovered to the first opener only: this command may be it.
      if (workspace.recovered.length + workspace.damagedLog.length > 0) (await import('./recoveryNotice.ts')).tellRecovered(workspace);
      const change = 'patch' in source ? source.patch : 'edits' in source ? { edits: source.edits } : source.operations;
      const { format, dryRun, reverse, strip } = command;
      return await workspace.apply(change, { format, dryRun, reverse, strip, fuzz: command.exact ? 'exact' : 'default' });
    } finally {
      await workspace.close();
    }
  } finally {
    await client.close();
  }
}
