/**
 * patchd entry point: argv → command. For `serve`, stdout is claimed for the wire before any
 * other module loads (a stray byte there would corrupt the framing).
 *
 * The one-shot commands (apply, log, undo, diff, help) pay for every module they load and
 * compile, so the build also bundles them into one file with V8's code cache (`cli/oneShot/`,
 * see `build/bundleOneShot.mjs` and `cli/oneShotBundle.ts`); compiled, they run from there —
 * unless the bundle is stale (below). `serve` and `mcp` keep the plain layout: the worker pool
 * finds its worker file next to its own module.
 */
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [command, ...args] = process.argv.slice(2);

if (command === 'serve') {
  const wire = (await import('./server/stdoutGuard.ts')).claimStdout();
  const { serve } = await import('./cli/serve.ts');
  const failed = await serve(args, wire);
  if (failed !== undefined) process.exit(failed);
} else {
  const code = command === 'mcp' ? await (await import('./mcp/command.ts')).runMcp(args) : await (await oneShotCommands()).runCommand(command, args);
  // Flush stdout before exiting; idle worker threads must not keep the CLI alive.
  process.stdout.write('', () => process.exit(code));
}

async function oneShotCommands(): Promise<typeof import('./cli/command.ts')> {
  const bundle = fileURLToPath(new URL('./cli/oneShot/', import.meta.url));
  if (!bundleIsCurrent(bundle)) return import('./cli/command.ts');
  return (await import('./cli/oneShotBundle.ts')).compileBundle(bundle).load();
}

/**
 * Whether the bundle in `directory` was built from the modules beside it: a tsc run after the
 * build (a bare `tsc -w`) rewrites some, and the bundle must not run instead of them. Its
 * `inputs.json` lists them; any one newer than that list, or gone, makes the bundle stale (about
 * 0.5 ms of stats). An installed package is trusted without a look: npm writes its files in no
 * particular order, and nobody compiles into node_modules.
 */
function bundleIsCurrent(directory: string): boolean {
  const list = `${directory}inputs.json`;
  const built = statSync(list, { throwIfNoEntry: false });
  if (built === undefined) return false;
  if (directory.includes(`${path.sep}node_modules${path.sep}`)) return true;
  const inputs = JSON.parse(readFileSync(list, 'utf8')) as string[];
  return inputs.every((input) => (statSync(directory + input, { throwIfNoEntry: false })?.mtimeMs ?? Infinity) <= built.mtimeMs);
}
