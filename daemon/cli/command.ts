/** Every command but `serve` and `mcp`, which `main.ts` starts itself (see there). */
import { helpText, USAGE_LINE, versionText } from './help.ts';

export async function runCommand(command: string | undefined, args: readonly string[]): Promise<number> {
  switch (command) {
    case 'apply': {
      const { runApply } = await import('./apply.ts');
      return runApply(args);
    }
    case 'log':
      return (await import('./log.ts')).runLog(args);
    case 'undo':
      return (await import('./undo.ts')).runUndo(args);
    case 'diff':
      return (await import('./diff.ts')).runDiff(args);
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
      process.stderr.write(`patchd: ${command.startsWith('-') ? `unknown option ${command}` : `unknown command "${command}"`}\n${USAGE_LINE}\n`);
      return 2;
  }
}
