/** Row (h3)'s measurement, run in a child process with the heap flags its parent chose (see engineParse.ts): prints 8n ÷ n per shape as JSON. */
import { parseScalingRatios } from './engineParse.ts';

process.stdout.write(`${JSON.stringify(parseScalingRatios(Number(process.argv[2])))}\n`);
