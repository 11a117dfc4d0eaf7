/** `npm run bench`: every benchmark, printed as tables with ratios against peers and the floor. */
import { benchEngine } from './engine.ts';

const sections: Array<() => string | Promise<string>> = [benchEngine];
for (const section of sections) {
  process.stdout.write(`${await section()}\n\n`);
}
