/** Every command but `serve` (which `main.ts` starts itself, after claiming stdout). */
import { runApply } from './apply.ts';
import { helpText, USAGE, versionText } from './help.ts';

export async function runCommand(command: string | undefined, args: readonly string[]): Promise<number> {
  switch (command) {
    case 'apply':
      return runApply(args);
    case 'mcp':
      return (await import('../mcp/command.ts')).runMcp(args);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(helpText());
      return 0;
    case '--version':
    case '-v':
      process.stdout.write(versionText());
      return 0;
    default:
      process.stderr.write(`patchd: unknown command ${JSON.stringify(command)}\n${USAGE}\n`);
      return 2;
  }
}
