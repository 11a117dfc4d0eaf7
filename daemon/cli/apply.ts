/**
 * `patchd apply`: runs one patch (or, with `--batch`, many) in-process through the same
 * handlers and flows the server uses (same validation, pools, workspace, receipts). Exit 0
 * applied or dry run, 1 rejected or partial, 2 usage or internal error.
 */
import { readFile } from 'node:fs/promises';
import { prettifyError, ZodError } from 'zod';
import { ApplyParamsSchema, type Receipt, type V4AOperation } from '../../protocol/index.ts';
import { runBatch } from './batch.ts';
import { USAGE } from './help.ts';
import { withLocalWorkspace } from './local.ts';
import { parseApplyArgs, UsageError, type ApplyCommand } from './options.ts';
import { paletteFor, renderReceipt } from './render.ts';

export async function runApply(args: readonly string[]): Promise<number> {
  try {
    const command = parseApplyArgs(args);
    if (command.batch) return await runBatch(command);
    const receipt = await applyOnce(command, await readPatch(command));
    process.stdout.write(command.json ? `${JSON.stringify(receipt, null, 2)}\n` : renderReceipt(receipt, paletteFor(process.stdout)));
    return receipt.status === 'applied' || receipt.status === 'dry_run' ? 0 : 1;
  } catch (error) {
    process.stderr.write(error instanceof UsageError ? `patchd apply: ${error.message}\n${USAGE}\n` : `patchd apply: ${messageOf(error)}\n`);
    return 2;
  }
}

/** Patch text, or V4A operations when `--format v4a` is given a JSON array. */
async function readPatch(command: ApplyCommand): Promise<{ patch: string } | { operations: V4AOperation[] }> {
  const source = command.sources[0] ?? '-';
  if (source === '-' && process.stdin.isTTY === true) throw new UsageError('no patch given (pass PATCHFILE or pipe the patch to stdin)');
  const text = source === '-' ? await readStdin() : await readFile(source, 'utf8');
  if (command.format !== 'v4a') return { patch: text };
  try {
    return { operations: JSON.parse(text) as V4AOperation[] };
  } catch {
    throw new UsageError('with --format v4a the input must be a JSON array of operations');
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function applyOnce(command: ApplyCommand, input: { patch: string } | { operations: V4AOperation[] }): Promise<Receipt> {
  return withLocalWorkspace(command, async (handlers, workspaceId) => {
    const params = ApplyParamsSchema.parse({
      workspaceId, ...input, format: command.format, dryRun: command.dryRun, fuzz: command.exact ? 'exact' : 'default',
    });
    return handlers.applyPatch(params, new AbortController().signal);
  });
}

export function messageOf(error: unknown): string {
  if (error instanceof ZodError) return `invalid input:\n${prettifyError(error)}`;
  return error instanceof Error ? error.message : String(error);
}
