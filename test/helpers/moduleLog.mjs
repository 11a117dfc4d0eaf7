// `node --import` this file to record the URL of every module the process loads, one per line,
// in the file named by $PATCHD_TEST_MODULE_LOG (a test-side hook; the product knows nothing of it).
// ES modules are recorded as they load; modules loaded with `require` (which these hooks do not
// see on Node 20) from the CommonJS module cache when the process exits.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';

const log = process.env.PATCHD_TEST_MODULE_LOG;
const hooks = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, url + '\\n');
  return next(url, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
const required = createRequire(import.meta.url).cache;
process.on('exit', () => {
  const urls = Object.keys(required).map((file) => pathToFileURL(file).href);
  if (urls.length > 0) appendFileSync(log, `${urls.join('\n')}\n`);
});
