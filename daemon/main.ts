/**
 * patchd entry point: argv → command. For `serve`, stdout is claimed for the wire before any
 * other module loads (a stray byte there would corrupt the framing).
 *
 * The one-shot commands (apply, log, undo, diff, help) pay for every module they load, so the
 * build also bundles them into a few files (`cli/oneShot/`, see `npm run build`); compiled, they
 * run from there. `serve` and `mcp` keep the plain layout: the worker pool finds its worker
 * file next to its own module.
 */
import { existsSync } from 'node:fs';
import { claimStdout } from './server/stdoutGuard.ts';

const [command, ...args] = process.argv.slice(2);

if (command === 'serve') {
  const wire = claimStdout();
  const { serve } = await import('./cli/serve.ts');
  const failed = await serve(args, wire);
  if (failed !== undefined) process.exit(failed);
} else {
  const code = command === 'mcp' ? await (await import('./mcp/command.ts')).runMcp(args) : await (await oneShotCommands()).runCommand(command, args);
  // Flush stdout before exiting; idle worker threads must not keep the CLI alive.
  process.stdout.write('', () => process.exit(code));
}

async function oneShotCommands(): Promise<typeof import('./cli/command.ts')> {
  const bundled = new URL('./cli/oneShot/command.js', import.meta.url);
  return existsSync(bundled) ? import(bundled.href) : import('./cli/command.ts');
}
