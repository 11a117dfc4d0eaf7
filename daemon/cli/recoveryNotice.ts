/**
 * The CLI's word on what crash recovery did: one line on stderr per commit a killed patchd left
 * unfinished, as opening the workspace finished it — in this process (`local.ts`) or in the shared
 * daemon the patch went to (`remote.ts`, from `workspace/open`'s `recovered`). The user's last
 * command may have died without a word, and files may have just been put back. Said whatever the
 * command's own output (`--json`, `-s`, `--check`) and log level: it is not that output, and
 * stderr is where the CLI speaks of anything else. A batch may have drawn its progress bar there
 * already (for files that hold no patch): the line takes its place, the bar's next redraw comes below.
 * Imported only when there is something to tell: most runs recover nothing.
 */
import { describeRecovery, RECOVERED_MESSAGE, type DescribedRecovery } from '../workspace/recoveryText.ts';

export function tellRecovered(reports: readonly DescribedRecovery[]): void {
  const { stderr } = process;
  const clearLine = stderr.isTTY === true ? '\r\u001b[2K' : '';
  for (const report of reports) stderr.write(`${clearLine}patchd: ${RECOVERED_MESSAGE} ${report.transactionId}: ${describeRecovery(report)}\n`);
}
