/**
 * `patchd apply --interactive`: the patch is planned, its diff shown on the terminal, and it is
 * written only after a "y". The question goes to the controlling terminal, so the patch itself
 * may still come from a pipe.
 */
import { closeSync, createReadStream, openSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import type { ApproveParams, ApproveResult } from '../../protocol/index.ts';
import { ApprovalGate, DEFAULT_APPROVAL_TIMEOUT_MS } from '../server/approval.ts';

const TERMINAL = '/dev/tty';

/** Whether there is a terminal to ask on. */
export function hasTerminal(): boolean {
  try {
    closeSync(openSync(TERMINAL, 'r'));
    return true;
  } catch {
    return false;
  }
}

/** Shows the planned change on stderr and asks y/n on the terminal; anything but y/yes declines. */
export async function askOnTerminal({ files }: ApproveParams): Promise<ApproveResult> {
  for (const file of files) process.stderr.write(file.diff === '' ? `${file.op} ${file.path}\n` : file.diff);
  const input = createReadStream(TERMINAL);
  const prompt = createInterface({ input, output: process.stderr, terminal: false });
  try {
    const count = `${files.length} file${files.length === 1 ? '' : 's'}`;
    const answer = await prompt.question(`Apply this change to ${count}? [y/N] `);
    return /^y(es)?$/i.test(answer.trim()) ? { approved: true } : { approved: false, reason: 'declined at the terminal' };
  } finally {
    prompt.close();
    input.destroy();
  }
}

/** Asks about every patch on the terminal. */
export function terminalGate(): ApprovalGate {
  return new ApprovalGate({ policy: 'always', timeoutMs: DEFAULT_APPROVAL_TIMEOUT_MS }, askOnTerminal);
}
