/**
 * `patchd apply`: one patch (or, with `--batch`, many) through the daemon's own `patch/apply`
 * flow, run in-process — or, with `--socket`, by a running shared daemon. Exit 0 applied (or
 * would apply), 1 rejected or partial, 2 a usage mistake or an internal error.
 *
 * A one-shot command pays for every module it loads, so what only some runs need (batches,
 * the socket client, the terminal prompt, diff and stat views) is imported where it is used.
 */
import type { ApplyParams } from '../../protocol/patch.ts';
import type { Receipt } from '../../protocol/receipt.ts';
import { applyPatch } from '../server/applyPatch.ts';
import { UsageError } from './args.ts';
import { APPLY_OPTIONS, parseApplyArgs, type ApplyCommand } from './applyOptions.ts';
import { APPLY_USAGE, APPLY_USAGE_LINE, applyAbout, commandHelp } from './help.ts';
import { isUnreadable, patchSourceOf, readPatchText, type PatchSource } from './input.ts';
import { unreadableReceipt, withLocalWorkspace } from './local.ts';
import { paletteFor, renderReceipt } from './render.ts';
import { readSettings, type Settings } from './settings.ts';

export async function runApply(args: readonly string[]): Promise<number> {
  try {
    const command = parseApplyArgs(args);
    if (command === 'help') {
      process.stdout.write(commandHelp(APPLY_USAGE, applyAbout(), APPLY_OPTIONS));
      return 0;
    }
    const settings = readSettings({ stateDir: command.stateDir }, 'warn');
    if (command.batch) {
      const { runBatch } = await import('./batch.ts');
      return await runBatch(command, settings);
    }
    const receipt = await applyOne(command, settings);
    await printReceipt(command, receipt);
    return succeeded(receipt) ? 0 : 1;
  } catch (error) {
    return reportFailure('apply', APPLY_USAGE_LINE, error);
  }
}

/** Prints a usage mistake (with the usage) or an internal error, in one sentence; returns exit code 2. */
export function reportFailure(command: string, usage: string, error: unknown): number {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(error instanceof UsageError ? `patchd ${command}: ${message}\n${usage}\n` : `patchd ${command}: internal error: ${message}\n`);
  return 2;
}

export function succeeded(receipt: Receipt): boolean {
  return receipt.status === 'applied' || receipt.status === 'dry_run';
}

async function applyOne(command: ApplyCommand, settings: Settings): Promise<Receipt> {
  const file = command.sources[0]!;
  const source = patchSourceOf(await readPatchText(file), command.format, file === '-' ? 'stdin' : file);
  if (isUnreadable(source)) return unreadableReceipt(command.format, source.reason);
  if (command.socket !== undefined) {
    const { applyThroughDaemon } = await import('./remote.ts');
    return applyThroughDaemon(command.socket, command, source);
  }
  const interactive = command.interactive ? await import('./interactive.ts') : undefined;
  if (interactive !== undefined && !interactive.hasTerminal()) throw new UsageError('--interactive needs a terminal to ask on');
  return withLocalWorkspace(command.directory, settings, (run) => applyPatch(applyParams(command, source), interactive ? { ...run, approval: interactive.terminalGate() } : run));
}

/** The `patch/apply` params of one patch as the command line asks for it. */
export function applyParams(command: ApplyCommand, source: PatchSource): ApplyParams {
  const input = 'patch' in source ? { patch: source.patch } : 'edits' in source ? { edits: [...source.edits] } : { operations: [...source.operations] };
  const { format, dryRun, reverse, strip } = command;
  return { workspaceId: 'cli', ...input, format, dryRun, reverse, strip, fuzz: command.exact ? 'exact' : 'default' };
}

async function printReceipt(command: ApplyCommand, receipt: Receipt): Promise<void> {
  const { stdout, stderr } = process;
  if (command.json) return void stdout.write(`${JSON.stringify(receipt, null, 2)}\n`);
  const colors = paletteFor(stdout);
  if (command.check || command.quiet) {
    // git apply --check, patch -s: silent when the patch applies (or would).
    if (!succeeded(receipt)) stderr.write(renderReceipt(receipt, paletteFor(stderr)));
    return;
  }
  if (command.stat && succeeded(receipt)) return void stdout.write((await import('./diffView.ts')).renderStat(receipt.files, colors));
  stdout.write(renderReceipt(receipt, colors));
  if (receipt.status === 'dry_run' && stdout.isTTY === true) stdout.write((await import('./diffView.ts')).renderDiffs(receipt.files, colors));
}
