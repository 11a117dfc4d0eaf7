/**
 * A one-shot `patchd` command (`apply`, `undo`, …) that SIGKILLs itself inside its commit,
 * standing in for a CLI killed there (Ctrl-C, which a one-shot command does not catch, kill -9,
 * the OOM killer); injected from the test, never from the product. Spawn it with `DYING_CLI` in
 * place of the CLI's own entry and `PATCHD_TEST_DIE_AT` set to `rename:<n>` (die right before the
 * commit's rename n, from 0) or `done` (die right before it is logged done, every rename made). A
 * command whose commit never gets there runs on and exits 3.
 */
import { fileURLToPath } from 'node:url';

export const DYING_CLI: readonly string[] = ['--import', import.meta.resolve('tsx'), fileURLToPath(import.meta.url)];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [point, count] = (process.env.PATCHD_TEST_DIE_AT ?? '').split(':');
  if (point !== 'done' && !(point === 'rename' && Number.isInteger(Number(count)))) throw new Error('PATCHD_TEST_DIE_AT is neither rename:<n> nor done');
  const die = (): void => void process.kill(process.pid, 'SIGKILL');
  const { openWorkspacesWith } = await import('./workspaceInjection.ts');
  openWorkspacesWith({
    hooks: {
      beforeRename: (index) => (point === 'rename' && index === Number(count) ? die() : undefined),
      beforeDone: () => (point === 'done' ? die() : undefined),
    },
  });
  const { runCommand } = await import('../../daemon/cli/command.ts');
  const [command, ...args] = process.argv.slice(2);
  await runCommand(command, args);
  process.stderr.write(`dyingCli: finished without being killed at ${process.env.PATCHD_TEST_DIE_AT}\n`);
  process.exit(3);
}
