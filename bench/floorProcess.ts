/**
 * `node dist/bench/floorProcess.js ROOT FIRST COUNT IN_FLIGHT`: the parallel fsync floor in a
 * process of its own, so that it can run with another libuv threadpool size than the bench
 * (which an ES module cannot change for itself); prints the files per second.
 */
import { parallelFloor } from './floor.ts';

const [root, first, count, inFlight] = process.argv.slice(2);
const rate = await parallelFloor(root!, Number(first), Number(count), Number(inFlight));
process.stdout.write(`${rate}\n`);
