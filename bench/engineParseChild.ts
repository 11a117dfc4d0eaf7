/** Row (h3)'s measurement, run in a child process (see engineParse.ts): prints 8n ÷ n per shape as JSON. */
import { parseScalingRatios } from './engineParse.ts';

process.stdout.write(`${JSON.stringify(await parseScalingRatios(Number(process.argv[2])))}\n`);
