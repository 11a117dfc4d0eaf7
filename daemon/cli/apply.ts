/**
 * `patchd apply`: runs one patch in-process through the same handlers and `patch/apply` flow
 * the server uses (same validation, pools, workspace, receipt). Exit 0 applied or dry run,
 * 1 rejected or partial, 2 usage or internal error.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { prettifyError, ZodError } from 'zod';
import { ApplyParamsSchema, FormatNameSchema, type FormatName, type Receipt, type V4AOperation } from '../../protocol/index.ts';
import { PatchdHandlers } from '../server/handlers.ts';
import { createLogger } from '../server/logger.ts';
import { createRegistry, DEFAULT_TASK_TIMEOUT_MS, resolveTaskTimeoutMs } from './runtime.ts';
import { USAGE } from './help.ts';
import { paletteFor, renderReceipt } from './render.ts';

interface ApplyCommand {
  readonly source: string;
  readonly directory: string;
  readonly format: FormatName;
  readonly dryRun: boolean;
  readonly exact: boolean;
  readonly json: boolean;
}

class UsageError extends Error {}

export async function runApply(args: readonly string[]): Promise<number> {
  try {
    const command = parseApplyArgs(args);
    const receipt = await applyOnce(command, await readPatch(command));
    process.stdout.write(command.json ? `${JSON.stringify(receipt, null, 2)}\n` : renderReceipt(receipt, paletteFor(process.stdout)));
    return receipt.status === 'applied' || receipt.status === 'dry_run' ? 0 : 1;
  } catch (error) {
    process.stderr.write(error instanceof UsageError ? `patchd apply: ${error.message}\n${USAGE}\n` : `patchd apply: ${messageOf(error)}\n`);
    return 2;
  }
}

function parseApplyArgs(args: readonly string[]): ApplyCommand {
  const { values, positionals } = parseOrThrow(args);
  if (positionals.length > 1) throw new UsageError('give at most one PATCHFILE');
  const format = FormatNameSchema.safeParse(values.format ?? 'auto');
  if (!format.success) throw new UsageError(`unknown format ${JSON.stringify(values.format)}`);
  return {
    source: positionals[0] ?? '-',
    directory: values.directory ?? '.',
    format: format.data,
    dryRun: values['dry-run'] ?? false,
    exact: values.exact ?? false,
    json: values.json ?? false,
  };
}

function parseOrThrow(args: readonly string[]) {
  try {
    return parseArgs({
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: {
        directory: { type: 'string', short: 'C' },
        format: { type: 'string' },
        'dry-run': { type: 'boolean' },
        exact: { type: 'boolean' },
        json: { type: 'boolean' },
      },
    });
  } catch (error) {
    throw new UsageError(messageOf(error));
  }
}

/** Patch text, or V4A operations when `--format v4a` is given a JSON array. */
async function readPatch(command: ApplyCommand): Promise<{ patch: string } | { operations: V4AOperation[] }> {
  if (command.source === '-' && process.stdin.isTTY === true) throw new UsageError('no patch given (pass PATCHFILE or pipe the patch to stdin)');
  const text = command.source === '-' ? await readStdin() : await readFile(command.source, 'utf8');
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
  const log = createLogger(process.stderr, 'warn');
  const registry = createRegistry({ taskTimeoutMs: resolveTaskTimeoutMs(undefined) ?? DEFAULT_TASK_TIMEOUT_MS, log });
  const handlers = new PatchdHandlers({ registry, sessionId: 'cli', log, sendFileProgress: async () => {} });
  try {
    const { workspaceId } = await handlers.openWorkspace({ root: command.directory });
    const params = ApplyParamsSchema.parse({
      workspaceId, ...input, format: command.format, dryRun: command.dryRun, fuzz: command.exact ? 'exact' : 'default',
    });
    return await handlers.applyPatch(params, new AbortController().signal);
  } finally {
    await registry.closeAll();
  }
}

function messageOf(error: unknown): string {
  if (error instanceof ZodError) return `invalid input:\n${prettifyError(error)}`;
  return error instanceof Error ? error.message : String(error);
}
