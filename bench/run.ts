/** `npm run bench`: every benchmark, printed as tables with ratios against peers and the floor. */
import { benchConcurrency } from './concurrency.ts';
import { benchDaemon } from './daemon.ts';
import { benchEngine } from './engine.ts';

const sections: Array<() => string | Promise<string>> = [benchEngine, benchDaemon, benchConcurrency];
for (const section of sections) {
  process.stdout.write(`${await section()}\n\n`);
}
