/**
 * A fault in the daemon is a bug: an unhandled rejection or an uncaught exception ends it with
 * exit 70 and one error line on stderr naming it (the stack inside that JSON line, never loose
 * lines) — never carrying on unaware, never Node's exit 1. A shared daemon takes its socket
 * file with it; `patchd mcp` ends the same way.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { RawDaemon } from '../helpers/rawDaemon.ts';
import { INJECTED_EXCEPTION, INJECTED_REASON, REJECTING_DAEMON, REJECTING_MCP } from '../helpers/rejectingDaemon.ts';
import { SocketDaemon } from '../helpers/socketDaemon.ts';

/** Every stderr line must be one JSON log record; returns the error-level ones. */
function errorLines(stderr: string): Record<string, unknown>[] {
  return stderr.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>).filter((record) => record.level === 'error');
}

/** Faults the daemon after it served a first request; the one error line it logs before exiting 70. */
async function faultedDaemon(env: Record<string, string>): Promise<Record<string, unknown>> {
  await using daemon = new RawDaemon(env, REJECTING_DAEMON);
  assert.ok((await daemon.request(1, 'initialize', {})).result !== undefined, 'the daemon serves first');
  daemon.child.kill('SIGUSR2');
  const exit = await daemon.exited;
  assert.equal(exit.code, 70, daemon.stderr);
  const errors = errorLines(daemon.stderr);
  assert.equal(errors.length, 1, daemon.stderr);
  return errors[0]!;
}

test('an unhandled rejection ends the daemon with exit 70 and one log line saying what it was', async () => {
  const error = await faultedDaemon({});
  assert.match(String(error.msg), /unhandled rejection \(a bug in patchd\)/);
  assert.equal(error.error, INJECTED_REASON);
});

test('an uncaught exception ends the daemon with exit 70 and one log line, not exit 1 and a loose stack', async () => {
  const error = await faultedDaemon({ PATCHD_TEST_FAULT: 'throw' });
  assert.match(String(error.msg), /uncaught exception \(a bug in patchd\)/);
  assert.equal(error.error, INJECTED_EXCEPTION);
  assert.equal(error.name, 'TypeError');
});

test('a shared daemon that faults exits 70 and removes its socket file', async () => {
  await using daemon = await SocketDaemon.start({ env: { PATCHD_TEST_FAULT: 'throw' }, entry: REJECTING_DAEMON });
  const client = await daemon.connect();
  assert.equal(client.serverInfo.name, 'patchd');
  assert.ok(existsSync(daemon.socket));
  daemon.child.kill('SIGUSR2');
  const exit = await daemon.exited;
  assert.equal(exit.code, 70, daemon.stderr);
  assert.equal(errorLines(daemon.stderr).length, 1, daemon.stderr);
  assert.ok(!existsSync(daemon.socket), 'the socket file is gone');
});

test('patchd mcp, too, ends with exit 70 and one log line on an uncaught exception', async () => {
  const root = mkdtempSync(path.join(tmpdir(), 'patchd-mcp-fault-'));
  try {
    const child = spawn(process.execPath, [...REJECTING_MCP, '-C', root], { env: { ...process.env, PATCHD_TEST_FAULT: 'throw' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    const serving = new Promise<void>((resolve) => child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
      if (stderr.includes('"mcp serving"')) resolve();
    }));
    const exited = once(child, 'exit');
    await serving;
    child.kill('SIGUSR2');
    const [code] = await exited;
    assert.equal(code, 70, stderr);
    const errors = errorLines(stderr);
    assert.equal(errors.length, 1, stderr);
    assert.match(String(errors[0]!.msg), /uncaught exception \(a bug in patchd\)/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
