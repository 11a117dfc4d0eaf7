/**
 * The CLI's word on what crash recovery did: one line on stderr per commit log segment it found
 * damaged, then one per commit a killed patchd left unfinished, as opening the workspace finished
 * it — in this process (`local.ts`) or in the shared daemon the patch went to (`remote.ts`, from
 * `workspace/open`'s `damagedLog` and `recovered`). The user's last
 * command may have died without a word, and files may have just been put back. Said whatever the
 * command's own output (`--json`, `-s`, `--check`) and log level: it is not that output, and
 * stderr is where the CLI speaks of anything else. A batch may have drawn its progress bar there
 * already (for files that hold no patch): the line takes its place, the bar's next redraw comes below.
 * Imported only when there is something to tell: most runs recover nothing.
 */
import {
  DAMAGED_LOG_NOTICE, describeDamagedSegment, describedDamagedSegment, describeRecovery, RECOVERED_MESSAGE, type DescribedDamagedSegment, type DescribedRecovery,
} from '../workspace/recoveryText.ts';
import type { DamagedSegment } from '../workspace/workspace.ts';

/** What an open has to tell: the wire's `workspace/open` result (`remote.ts`), or this process's Workspace, whose damaged segments carry their byte ranges rather than the bytes lost. */
export interface Told {
  readonly damagedLog: readonly (DescribedDamagedSegment | DamagedSegment)[];
  readonly recovered: readonly DescribedRecovery[];
}

export function tellRecovered({ damagedLog, recovered }: Told): void {
  const lines = [
    ...damagedLog.map((segment) => `${DAMAGED_LOG_NOTICE}: ${describeDamagedSegment('keptAs' in segment ? describedDamagedSegment(segment) : segment)}`),
    ...recovered.map((report) => `${RECOVERED_MESSAGE} ${report.transactionId}: ${describeRecovery(report)}`),
  ];
  const { stderr } = process;
  const clearLine = stderr.isTTY === true ? '\r\u001b[2K' : '';
  for (const line of lines) stderr.write(`${clearLine}patchd: ${line}\n`);
}
