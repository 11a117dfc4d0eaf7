/** A one-line progress bar on a terminal (stderr): drawn at most ten times a second, erased when done. */
import type { Receipt } from '../../protocol/index.ts';
import type { Palette } from './render.ts';

export interface Progress {
  /** One more patch finished. */
  tick(receipt: Receipt): void;
  /** Erases the bar. */
  done(): void;
}

const WIDTH = 30;
const REDRAW_MS = 100;

/** A bar on `stream` when it is a terminal; otherwise a progress that shows nothing. */
export function createProgress(stream: NodeJS.WriteStream, total: number, colors: Palette): Progress {
  if (stream.isTTY !== true) return { tick: () => {}, done: () => {} };
  let finished = 0;
  let failed = 0;
  let drawnAt = 0;
  const draw = (): void => {
    const filled = Math.round((finished / total) * WIDTH);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(WIDTH - filled)}`;
    stream.write(`\r\u001b[2K${bar} ${finished}/${total}  ${colors.green(`✓ ${finished - failed}`)}  ${colors.red(`✗ ${failed}`)}`);
    drawnAt = Date.now();
  };
  return {
    tick(receipt) {
      finished += 1;
      if (receipt.status === 'rejected' || receipt.status === 'partial') failed += 1;
      if (finished === total || Date.now() - drawnAt >= REDRAW_MS) draw();
    },
    done() {
      stream.write('\r\u001b[2K');
    },
  };
}
