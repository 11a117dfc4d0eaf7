/**
 * Run by externalWriter.test.ts as a separate process: an outside writer in a tight,
 * synchronous loop. It writes a unique content (alternately in place and as an editor does,
 * temp + rename), waits until something replaces it, notes what, waits 0–3 ms (so its writes
 * land anywhere in patchd's next commit), and writes the next — until the stop file appears.
 * Then it prints its log as JSON on stdout.
 * argv: <file> <stopFile>
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

export interface OutsideWrite {
  readonly sha256: string;
  readonly how: 'in place' | 'temp + rename';
  /** The sha256 of what replaced it; absent when it was still there at the end. */
  readonly replacedBy?: string;
  /** Already replaced when read back right after writing: it landed inside a rename already under way. */
  readonly replacedAtOnce: boolean;
}

/** The content of outside write number `k`. */
export const outsideWrite = (k: number) => `## patches\noutside write ${k}\n`;

const sha = (text: string) => createHash('sha256').update(text).digest('hex');
const pause = new Int32Array(new SharedArrayBuffer(4));

function writeOnce(file: string, text: string, inPlace: boolean): void {
  if (inPlace) return writeFileSync(file, text);
  writeFileSync(`${file}.swp`, text);
  renameSync(`${file}.swp`, file);
}

/** Writes until `stopFile` exists; each write waits (polling every 0.1 ms) until it is replaced. */
function writeInLoop(file: string, stopFile: string): OutsideWrite[] {
  const log: OutsideWrite[] = [];
  for (let k = 1; !existsSync(stopFile); k++) {
    const text = outsideWrite(k);
    const inPlace = k % 2 === 0;
    writeOnce(file, text, inPlace);
    let now = readFileSync(file, 'utf8');
    const replacedAtOnce = now !== text;
    while (now === text && !existsSync(stopFile)) {
      Atomics.wait(pause, 0, 0, 0.1);
      now = readFileSync(file, 'utf8');
    }
    const how = inPlace ? 'in place' : 'temp + rename';
    log.push(now === text ? { sha256: sha(text), how, replacedAtOnce } : { sha256: sha(text), how, replacedBy: sha(now), replacedAtOnce });
    Atomics.wait(pause, 0, 0, Math.random() * 3);
  }
  return log;
}

const [file, stopFile] = process.argv.slice(2);
if (file !== undefined && stopFile !== undefined) process.stdout.write(JSON.stringify(writeInLoop(file, stopFile)));
