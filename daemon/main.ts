/**
 * patchd entry point: argv → command. For `serve`, stdout is claimed for the wire before any
 * other module loads (a stray byte there would corrupt the framing).
 */
import { claimStdout } from './server/stdoutGuard.ts';

const [command, ...args] = process.argv.slice(2);

if (command === 'serve') {
  const wire = claimStdout();
  const { serve } = await import('./cli/serve.ts');
  const failed = await serve(args, wire);
  if (failed !== undefined) process.exit(failed);
} else {
  const { runCommand } = await import('./cli/command.ts');
  const code = await runCommand(command, args);
  // Flush stdout before exiting; idle worker threads must not keep the CLI alive.
  process.stdout.write('', () => process.exit(code));
}
