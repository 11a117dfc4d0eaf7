// `node --import` this file to record the URL of every module the process loads, one per line,
// in the file named by $PATCHD_TEST_MODULE_LOG (a test-side hook; the product knows nothing of it).
import { register } from 'node:module';

const log = process.env.PATCHD_TEST_MODULE_LOG;
const hooks = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, url + '\\n');
  return next(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
