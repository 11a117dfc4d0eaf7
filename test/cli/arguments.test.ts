/** The rules behind the CLI's usage errors, settings and input detection, in-process (the binary's view: test/e2e/cli.test.ts). */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { UsageError } from '../../daemon/cli/args.ts';
import { parseApplyArgs, type ApplyCommand } from '../../daemon/cli/applyOptions.ts';
import { patchSourceOf } from '../../daemon/cli/input.ts';
import { readSettings } from '../../daemon/cli/settings.ts';
import { resolveStateRoot } from '../../daemon/cli/stateRoot.ts';

function usageError(run: () => unknown, message: RegExp): void {
  assert.throws(run, (error: unknown) => error instanceof UsageError && message.test(error.message));
}

describe('patchd apply arguments', () => {
  test('each mistake is one plain sentence', () => {
    const cases: [string[], RegExp][] = [
      [['--bogus'], /^unknown option --bogus$/],
      [['-x'], /^unknown option -x$/],
      [['-C'], /^-C needs a value \(DIR\)$/],
      [['-C', '--dry-run'], /^-C needs a value \(DIR\)$/],
      [['--directory='], /^--directory needs a non-empty value$/],
      [['--json=1'], /^--json takes no value$/],
      [['--format', 'klingon'], /^unknown format "klingon": use one of auto, unified, codex, v4a, search-replace, edits, shell$/],
      [['-p', '-1'], /^-p\/--strip must be a whole number from 0 to 64 \(got "-1"\)$/],
      [['-p', '--json'], /^-p needs a value \(N\)$/],
      [['-p', '1.5'], /^-p\/--strip must be a whole number from 0 to 64 \(got "1\.5"\)$/],
      [['a', 'b'], /^give at most one PATCHFILE/],
      [['--concurrency', '2', 'a'], /^--concurrency only applies to --batch$/],
      [['--batch'], /^--batch needs at least one patch file or directory$/],
      [['--batch', '-'], /^--batch reads patch files, not stdin/],
      [['--batch', 'd', '--concurrency', '65'], /^--concurrency must be a whole number from 1 to 64 \(got "65"\)$/],
      [['--batch', 'd', '--stat'], /^--check and --stat take one patch/],
      [['--batch', 'd', '--socket', 's'], /^--socket takes one patch/],
      [['--socket', 's', '--state-dir', 'x'], /^--state-dir does not apply with --socket/],
    ];
    for (const [args, message] of cases) usageError(() => parseApplyArgs(args), message);
  });

  test('git and patch habits: -pN, -R, --check and --stat write nothing, -- ends the options', () => {
    const command = parseApplyArgs(['-p1', '-R', '--check', '--', '-odd.diff']) as ApplyCommand;
    assert.deepEqual([command.strip, command.reverse, command.dryRun, command.check, command.sources], [1, true, true, true, ['-odd.diff']]);
    assert.equal((parseApplyArgs(['--stat']) as ApplyCommand).dryRun, true);
    assert.deepEqual((parseApplyArgs([]) as ApplyCommand).sources, ['-']);
    assert.equal(parseApplyArgs(['--bogus-is-fine-after', '-h'].slice(1)), 'help');
  });

  test('GNU patch spellings are the same options; options of other tools say why they are not taken', () => {
    const command = parseApplyArgs(['-d', 'work', '-i', 'fix.patch', '-s', '-u', '-N', '-l', '--whitespace', 'warn']) as ApplyCommand;
    assert.deepEqual([command.directory, command.sources, command.quiet, command.format], ['work', ['fix.patch'], true, 'unified']);
    assert.deepEqual([(parseApplyArgs(['--silent']) as ApplyCommand).quiet, (parseApplyArgs(['--input=x']) as ApplyCommand).sources], [true, ['x']]);
    assert.equal((parseApplyArgs(['--directory', 'a', '-d', 'b']) as ApplyCommand).directory, 'b', 'the last spelling wins, as for any repeated option');
    usageError(() => parseApplyArgs(['--cached']), /^unknown option --cached: patchd changes the workspace's files, never git's index/);
    usageError(() => parseApplyArgs(['-r', 'x.rej']), /^unknown option -r: patchd applies a patch whole or not at all/);
    usageError(() => parseApplyArgs(['-d']), /^-d needs a value \(DIR\)$/);
    usageError(() => parseApplyArgs(['--batch', 'd', '-s']), /^-s\/--quiet prints nothing; it takes one patch/);
    usageError(() => parseApplyArgs(['--batch', '-i', 'p']), /^-i\/--input names the one patch file/);
  });
});

describe('environment settings', () => {
  test('bad values are usage errors naming the variable; empty means unset', () => {
    usageError(() => readSettings({}, 'warn', { PATCHD_TASK_TIMEOUT_MS: '30s', HOME: '/h' }), /^PATCHD_TASK_TIMEOUT_MS must be a whole number 1 or more \(got "30s"\)$/);
    usageError(() => readSettings({ taskTimeoutMs: 'abc' }, 'warn', { HOME: '/h' }), /^--task-timeout-ms must be a whole number/);
    usageError(() => readSettings({}, 'warn', { PATCHD_LOG_LEVEL: 'verbose', HOME: '/h' }), /^PATCHD_LOG_LEVEL must be one of debug, info, warn, error/);
    const settings = readSettings({ taskTimeoutMs: '500' }, 'warn', { PATCHD_TASK_TIMEOUT_MS: 'ignored-by-the-flag', PATCHD_LOG_LEVEL: '', HOME: '/h' });
    assert.deepEqual(settings, { taskTimeoutMs: 500, logLevel: 'warn', stateRoot: join('/h', '.local', 'state', 'patchd') });
  });

  test('the state root: --state-dir, then PATCHD_STATE_DIR, then $XDG_STATE_HOME/patchd (absolute only), then ~/.local/state/patchd', () => {
    const env = { HOME: '/home/u', XDG_STATE_HOME: '/xdg', PATCHD_STATE_DIR: '/p' };
    assert.equal(resolveStateRoot('/flag', env), '/flag');
    assert.equal(resolveStateRoot(undefined, env), '/p');
    assert.equal(resolveStateRoot(undefined, { ...env, PATCHD_STATE_DIR: '' }), join('/xdg', 'patchd'));
    assert.equal(resolveStateRoot(undefined, { HOME: '/home/u', XDG_STATE_HOME: 'relative' }), join('/home/u', '.local', 'state', 'patchd'));
    assert.equal(resolveStateRoot('rel', env), join(process.cwd(), 'rel'));
  });
});

describe('one input reader', () => {
  const ops = [{ type: 'update_file', path: 'a', diff: '-a\n+b\n' }];
  test('JSON by content or name; --format overrides', () => {
    assert.deepEqual(patchSourceOf(JSON.stringify(ops), 'auto', 'x.patch'), { operations: ops });
    assert.deepEqual(patchSourceOf(` {"operations": ${JSON.stringify(ops)}}`, 'auto', '-'), { operations: ops });
    assert.deepEqual(patchSourceOf('{"edits": []}', 'auto', 'x'), { edits: [] });
    assert.deepEqual(patchSourceOf(JSON.stringify(ops), 'unified', 'x.json'), { patch: JSON.stringify(ops) });
    assert.deepEqual(patchSourceOf('--- a/x\n', 'auto', 'x.diff'), { patch: '--- a/x\n' });
    assert.match((patchSourceOf('[1,', 'auto', 'x.txt') as { reason: string }).reason, /^x\.txt is not valid JSON/);
    assert.match((patchSourceOf('--- a/x\n', 'auto', 'x.json') as { reason: string }).reason, /^x\.json is not valid JSON/);
    assert.match((patchSourceOf('{"edits": []}', 'v4a', 'x') as { reason: string }).reason, /is not a patch: .*\(--format v4a\)$/);
    assert.match((patchSourceOf('{}', 'auto', 'x') as { reason: string }).reason, /^x is not a patch/);
  });
});
