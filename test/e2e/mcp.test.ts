/**
 * `patchd mcp`: the real command spawned by the MCP SDK's own client over stdio, and once raw
 * to check that stdout carries MCP frames only and that the server exits when stdin closes.
 */
import '../helpers/testState.ts';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { OUTPUT_LIMITS } from '../../daemon/server/outputThrottle.ts';
import { ERROR_HINTS, ReadFileResultSchema, ReceiptSchema, SessionDiffResultSchema } from '../../protocol/index.ts';
import { createTempTree, type TempTree } from '../helpers/tempTree.ts';

const BIN = fileURLToPath(new URL('../../bin/patchd.js', import.meta.url));

const FILES = {
  'greet.txt': 'hello\nworld\n',
  'codex.txt': 'alpha\nbeta\ngamma\n',
  'sr.txt': 'one\ntwo\nthree\n',
  'pkg/shell.txt': 'left\nright\n',
  'nearest.txt': 'function area(r) {\n  return 3.14 * r * r;\n}\n',
  'undo.txt': 'first\nsecond\n',
};

const DIALECTS: readonly (readonly [string, string, string, string])[] = [
  ['unified', '--- a/greet.txt\n+++ b/greet.txt\n@@ -1,2 +1,2 @@\n hello\n-world\n+there\n', 'greet.txt', 'hello\nthere\n'],
  ['codex', '*** Begin Patch\n*** Update File: codex.txt\n@@\n alpha\n-beta\n+BETA\n gamma\n*** End Patch\n', 'codex.txt', 'alpha\nBETA\ngamma\n'],
  ['search-replace', 'sr.txt\n```\n<<<<<<< SEARCH\ntwo\n=======\nTWO\n>>>>>>> REPLACE\n```\n', 'sr.txt', 'one\nTWO\nthree\n'],
  ['shell', "cd pkg && apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: shell.txt\n@@\n-right\n+RIGHT\n*** End Patch\nEOF\n", 'pkg/shell.txt', 'left\nRIGHT\n'],
];

function text(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function env(): Record<string, string> {
  return Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
}

describe('patchd mcp through the SDK client', () => {
  let tree: TempTree;
  let client: Client;
  const transportErrors: Error[] = [];

  before(async () => {
    tree = createTempTree(FILES, { 'secret.txt': 'outside\n' });
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '-C', tree.root], env: env(), stderr: 'pipe' });
    client = new Client({ name: 'patchd-test', version: '1.0.0' });
    client.onerror = (error) => transportErrors.push(error);
    await client.connect(transport);
  });

  after(async () => {
    await client?.close();
    tree?.[Symbol.dispose]();
  });

  const call = async (name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;

  test('lists apply_patch, read_file, undo and session_diff with input schemas from the protocol and open output schemas', async () => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    const applyPatch = byName.get('apply_patch');
    assert.deepEqual(applyPatch?.inputSchema.required, ['patch']);
    assert.deepEqual(Object.keys(applyPatch?.inputSchema.properties ?? {}).sort(), ['dry_run', 'patch']);
    assert.deepEqual(byName.get('read_file')?.inputSchema.required, ['path']);
    assert.deepEqual(byName.get('undo')?.inputSchema.required, ['transaction_id']);
    assert.deepEqual(byName.get('session_diff')?.inputSchema.properties ?? {}, {});
    assert.deepEqual([...byName.keys()].sort(), ['apply_patch', 'read_file', 'session_diff', 'undo']);
    for (const tool of tools) {
      assert.ok(tool.outputSchema !== undefined, `${tool.name} has an output schema`);
      assert.notEqual((tool.outputSchema as { additionalProperties?: unknown }).additionalProperties, false, `${tool.name}'s output schema is open`);
    }
  });

  for (const [dialect, patch, path, expected] of DIALECTS) {
    test(`apply_patch applies a ${dialect} patch; structuredContent is the Receipt`, async () => {
      const result = await call('apply_patch', { patch });
      assert.notEqual(result.isError, true, text(result));
      const receipt = ReceiptSchema.parse(result.structuredContent);
      assert.equal(receipt.status, 'applied');
      assert.equal(receipt.format, dialect);
      assert.match(text(result), new RegExp(`^applied: 1 file changed \\(${dialect}\\)\\n  update ${path} \\(\\+1 -1\\)`));
      assert.match(text(result), new RegExp(`transaction_id: ${receipt.transactionId}`));
      assert.equal(tree.text(path), expected);
    });
  }

  test('apply_patch takes V4A operations and edits given as JSON text, as patchd apply does', async () => {
    const operations = await call('apply_patch', { patch: JSON.stringify([{ type: 'create_file', path: 'v4a.txt', diff: '+made by V4A\n' }]) });
    assert.notEqual(operations.isError, true, text(operations));
    assert.match(tree.text('v4a.txt') ?? '', /^made by V4A\n?$/);
    const edits = await call('apply_patch', { patch: JSON.stringify({ edits: [{ path: 'v4a.txt', oldText: 'made by V4A', newText: 'edited' }] }) });
    assert.notEqual(edits.isError, true, text(edits));
    assert.match(tree.text('v4a.txt') ?? '', /^edited\n?$/);
  });

  test('dry_run shows the diff and writes nothing', async () => {
    const before = tree.fingerprint();
    const result = await call('apply_patch', { patch: '--- a/sr.txt\n+++ b/sr.txt\n@@\n one\n-TWO\n+2\n', dry_run: true });
    assert.equal(ReceiptSchema.parse(result.structuredContent).status, 'dry_run');
    assert.match(text(result), /^dry run, nothing written: the patch would change 1 file/);
    assert.match(text(result), /^-TWO\n\+2$/m);
    assert.equal(tree.fingerprint(), before);
  });

  test('a patch whose context is not there comes back as a model-readable error: code, hint and nearest text verbatim', async () => {
    const before = tree.fingerprint();
    const result = await call('apply_patch', { patch: '--- a/nearest.txt\n+++ b/nearest.txt\n@@\n function area(radius) {\n-  return 3.14 * radius * radius;\n+  return Math.PI * radius * radius;\n }\n' });
    assert.equal(result.isError, true);
    const receipt = ReceiptSchema.parse(result.structuredContent);
    assert.equal(receipt.error?.code, 'context_not_found');
    const nearest = receipt.error?.nearest;
    assert.ok(nearest !== undefined, 'the receipt names the nearest text');
    assert.ok(text(result).includes('error: context_not_found in nearest.txt, hunk 1\n'), text(result));
    assert.ok(text(result).includes(`hint: ${ERROR_HINTS.context_not_found}\n`));
    assert.ok(text(result).includes(`nearest text (line ${nearest.line}, `) && text(result).includes(nearest.text), text(result));
    assert.equal(tree.fingerprint(), before);
  });

  test('an escape is refused by apply_patch and read_file, and nothing outside changes', async () => {
    const before = tree.fingerprint();
    const patched = await call('apply_patch', { patch: '--- a/../outside/secret.txt\n+++ b/../outside/secret.txt\n@@\n-outside\n+pwned\n' });
    assert.equal(patched.isError, true);
    assert.equal(ReceiptSchema.parse(patched.structuredContent).error?.code, 'path_escape');
    assert.match(text(patched), /^error: path_escape/m);
    const read = await call('read_file', { path: '../outside/secret.txt' });
    assert.equal(read.isError, true);
    assert.match(text(read), new RegExp(`^error: path_escape\\n.*\\nhint: ${ERROR_HINTS.path_escape.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n$`));
    assert.equal(tree.fingerprint(), before);
  });

  test('read_file returns the text, and {path, content, sha256} as structuredContent', async () => {
    const result = await call('read_file', { path: 'nearest.txt' });
    assert.notEqual(result.isError, true);
    assert.equal(text(result), FILES['nearest.txt']);
    const file = ReadFileResultSchema.parse(result.structuredContent);
    assert.equal(file.path, 'nearest.txt');
    assert.match(file.sha256, /^[0-9a-f]{64}$/);
  });

  test('a directory named as a file: is_directory for read_file; not_found for apply_patch (as Codex has it), with a hint that fits', async () => {
    const read = await call('read_file', { path: 'pkg' });
    assert.equal(read.isError, true);
    assert.match(text(read), /^error: is_directory\npkg is a directory, not a file\.\nhint: That path names a directory/);
    const patched = await call('apply_patch', { patch: '--- a/pkg\n+++ b/pkg\n@@ -1 +1 @@\n-left\n+right\n' });
    assert.equal(ReceiptSchema.parse(patched.structuredContent).error?.code, 'not_found');
    assert.match(text(patched), /^pkg is a directory, not a file\.\nhint: No file is at that path\./m);
  });

  test('session_diff shows what changed; undo by transaction_id puts it back; an unknown id is a model-readable error', async () => {
    const applied = await call('apply_patch', { patch: '--- a/undo.txt\n+++ b/undo.txt\n@@\n first\n-second\n+SECOND\n' });
    const { transactionId } = ReceiptSchema.parse(applied.structuredContent);
    const during = await call('session_diff', {});
    const session = SessionDiffResultSchema.parse(during.structuredContent);
    assert.ok(session.files.some((file) => file.path === 'undo.txt' && file.op === 'update'));
    assert.match(text(during), /^diff --git a\/undo\.txt b\/undo\.txt$/m);
    assert.match(text(during), /^-second\n\+SECOND$/m);

    const undone = await call('undo', { transaction_id: transactionId });
    assert.notEqual(undone.isError, true, text(undone));
    const receipt = ReceiptSchema.parse(undone.structuredContent);
    assert.deepEqual([receipt.status, receipt.format], ['applied', 'undo']);
    assert.match(text(undone), /^applied: 1 file changed \(undo\)\n  update undo\.txt \(\+1 -1\)/);
    assert.equal(tree.text('undo.txt'), FILES['undo.txt']);
    const after = SessionDiffResultSchema.parse((await call('session_diff', {})).structuredContent);
    assert.ok(!after.files.some((file) => file.path === 'undo.txt'), 'a file back where it began is not in the session diff');

    const unknown = await call('undo', { transaction_id: 'no-such-transaction' });
    assert.equal(unknown.isError, true);
    assert.equal(ReceiptSchema.parse(unknown.structuredContent).error?.code, 'unknown_transaction');
    assert.match(text(unknown), /^error: unknown_transaction\n/m);
  });

  test('an input that breaks the schema is a tool error, not a crash', async () => {
    const result = await call('apply_patch', { dry_run: true });
    assert.equal(result.isError, true);
    assert.match(text(result), /patch/);
    assert.equal((await call('read_file', { path: 'greet.txt' })).isError, undefined);
  });

  test('a request of 12 MB (over the 10 MiB the SDK transport read) is answered, and the server goes on serving', async () => {
    const lines = '-a line that is not in the file at all\n'.repeat(320_000);
    const count = lines.length / 39;
    const result = await call('apply_patch', { patch: `--- a/greet.txt\n+++ b/greet.txt\n@@ -1,${count} +1,1 @@\n${lines}+replaced\n` });
    assert.equal(result.isError, true);
    assert.equal(ReceiptSchema.parse(result.structuredContent).error?.code, 'context_not_found');
    assert.equal((await call('read_file', { path: 'greet.txt' })).isError, undefined);
  });

  test('no frame the SDK could not read', () => {
    assert.deepEqual(transportErrors, []);
  });
});

interface RawAnswer {
  readonly jsonrpc: string;
  readonly id?: number;
  readonly result?: { readonly structuredContent?: unknown };
}

/** `patchd mcp` over raw stdio: its answers as they come, its log, and how it exited. */
class RawHost implements Disposable {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stdout = '';
  stderr = '';

  constructor(root: string) {
    this.child = spawn(process.execPath, [BIN, 'mcp', '-C', root], { env: env(), stdio: 'pipe' });
    this.child.stdout.setEncoding('utf8').on('data', (text: string) => (this.stdout += text));
    this.child.stderr.setEncoding('utf8').on('data', (text: string) => (this.stderr += text));
    // patchd mcp exits at most 2.5 s after stdin closes (DESIGN: within 3 s); 60 s here only stops a hung child, however loaded the machine.
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 60_000);
    this.exited = once(this.child, 'exit').then(([code, signal]) => {
      clearTimeout(killer);
      return { code: code as number | null, signal: signal as NodeJS.Signals | null };
    });
  }

  [Symbol.dispose](): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  async initialize(): Promise<void> {
    this.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    await this.answered(1);
    this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  /** Writes the frames in one write: small, they reach the server together and are read in one go. */
  send(...frames: object[]): void {
    this.child.stdin.write(lines(frames));
  }

  /** Writes the frames in one write, then closes stdin. */
  end(...frames: object[]): void {
    this.child.stdin.end(lines(frames));
  }

  /** The complete frames written to stdout so far, parsed. */
  get answers(): RawAnswer[] {
    return this.stdout.split('\n').slice(0, -1).map((line) => JSON.parse(line) as RawAnswer);
  }

  /** The `msg` of each log line so far, in order. */
  get logged(): string[] {
    return this.stderr.split('\n').slice(0, -1).filter((line) => line.startsWith('{')).map((line) => (JSON.parse(line) as { msg: string }).msg);
  }

  async answered(id: number): Promise<void> {
    while (!this.answers.some((answer) => answer.id === id)) {
      await Promise.race([once(this.child.stdout, 'data'), this.exited.then(() => assert.fail(`exited before answering ${id}: ${this.stderr}`))]);
    }
  }
}

const lines = (frames: readonly object[]): string => frames.map((frame) => `${JSON.stringify(frame)}\n`).join('');

/** A stop in order: told, then the workspace and the daemon closed (never the grace period's exit), exit 0. */
async function assertStoppedInOrder(host: RawHost): Promise<void> {
  assert.deepEqual(await host.exited, { code: 0, signal: null }, host.stderr);
  const log = host.logged;
  assert.ok(log.indexOf('stopping') >= 0 && log.indexOf('stopping') < log.indexOf('stopped'), `stopping, then stopped:\n${host.stderr}`);
  assert.doesNotMatch(host.stderr, /grace period over/);
}

test('raw: stdout carries only MCP frames, a request sent as stdin closes is answered, and the server exits 0 having closed its workspace', async () => {
  using tree = createTempTree({ 'a.txt': 'one\n' });
  using host = new RawHost(tree.root);
  await host.initialize();
  host.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'apply_patch', arguments: { patch: '--- a/a.txt\n+++ b/a.txt\n@@\n-one\n+two\n' } } });
  await host.answered(2);
  host.end({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'a.txt' } } });
  await assertStoppedInOrder(host);

  assert.ok(host.stdout.endsWith('\n'), 'stdout ends with a complete frame');
  const messages = host.answers;
  assert.ok(messages.every((message) => message.jsonrpc === '2.0'));
  assert.deepEqual(messages.map((message) => message.id), [1, 2, 3]);
  assert.equal(ReceiptSchema.parse(messages[1]?.result?.structuredContent).status, 'applied');
  assert.equal(ReadFileResultSchema.parse(messages[2]?.result?.structuredContent).content, 'two\n');
});

test('raw: SIGTERM (how hosts stop a server) closes the workspace and exits 0', async () => {
  using tree = createTempTree({ 'a.txt': 'one\n' });
  using host = new RawHost(tree.root);
  await host.initialize();
  host.child.kill('SIGTERM');
  await assertStoppedInOrder(host);
});

const applyCall = (id: number, path: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'apply_patch', arguments: { patch: `--- a/${path}\n+++ b/${path}\n@@\n-one\n+two\n` } } });

test('raw: a call the host cancels is owed no answer (the SDK sends none): stdin closed, the server answers the rest and stops in order at once, without waiting out its grace period', async () => {
  using tree = createTempTree({ 'a.txt': 'one\n', 'b.txt': 'one\n' });
  using host = new RawHost(tree.root);
  await host.initialize();
  // Read in one go: the cancellation reaches the server's SDK before the patch it cancels could be answered.
  host.end(applyCall(2, 'b.txt'), { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2, reason: 'the user pressed stop' } }, applyCall(3, 'a.txt'));
  await assertStoppedInOrder(host);
  assert.deepEqual(host.answers.map((answer) => answer.id), [1, 3], 'the cancelled call is not answered');
  assert.equal(ReceiptSchema.parse(host.answers[1]?.result?.structuredContent).status, 'applied');
  // Cancelled before the tool reached the daemon: never sent there, nothing written.
  assert.deepEqual([tree.text('a.txt'), tree.text('b.txt')], ['two\n', 'one\n']);
});

test('raw: an id reused while its first request runs (a ping answered at once beside a patch) leaves the patch owed: stdin closed, both are answered before the server stops', async () => {
  using tree = createTempTree({ 'a.txt': 'one\n' });
  using host = new RawHost(tree.root);
  await host.initialize();
  host.end(applyCall(2, 'a.txt'), { jsonrpc: '2.0', id: 2, method: 'ping' });
  await assertStoppedInOrder(host);
  const answers = host.answers.filter((answer) => answer.id === 2);
  assert.equal(answers.length, 2, `both requests with id 2 answered:\n${host.stdout}`);
  assert.ok(answers.some((answer) => answer.result?.structuredContent !== undefined && ReceiptSchema.parse(answer.result.structuredContent).status === 'applied'), 'the patch was answered');
  assert.equal(tree.text('a.txt'), 'two\n');
});

test('session_diff of a session longer than retention keeps is a model-readable unknown_transaction, not a failed call', async () => {
  using tree = createTempTree({ 'a.txt': 'a0\n' });
  const stateRoot = path.join(tree.base, 'state');
  mkdirSync(stateRoot);
  writeFileSync(path.join(stateRoot, 'retention.json'), `${JSON.stringify({ maxTransactions: 2, maxAgeMs: 3_600_000 })}\n`);
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '-C', tree.root, '--state-dir', stateRoot], env: env(), stderr: 'pipe' });
  const client = new Client({ name: 'patchd-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    for (let index = 0; index < 4; index++) {
      const applied = (await client.callTool({ name: 'apply_patch', arguments: { patch: `--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a${index}\n+a${index + 1}\n` } })) as CallToolResult;
      assert.equal(ReceiptSchema.parse(applied.structuredContent).status, 'applied');
    }
    const session = (await client.callTool({ name: 'session_diff', arguments: {} })) as CallToolResult;
    assert.equal(session.isError, true);
    assert.match(text(session), /^error: unknown_transaction\n/m);
    assert.match(text(session), /past retention/);
  } finally {
    await client.close();
  }
});

/**
 * A host that writes faster than it reads. The server must stop reading its requests while the
 * answers it has not taken are over the bound, and answer every one once it reads: all counted
 * (bytes that left the host, requests the server ran, answers), never timed.
 */
describe('patchd mcp and a host that does not read its answers', () => {
  const MIB = 1024 * 1024;
  /** 64 KiB; a read_file answer carries it twice (text and structuredContent): over 128 KiB. */
  const BIG = `${'x'.repeat(1023)}\n`.repeat(64);
  const ANSWER_BYTES_AT_LEAST = 2 * BIG.length;
  /** Each request is padded (JSON whitespace) to this size, so that a few fill any pipe. */
  const REQUEST_BYTES = 64 * 1024;
  /**
   * What lies between host and server and is not the server's doing, each way: the socket
   * pair's buffer (about 200 KiB on Linux) and Node's read buffer and chunk, with room to spare.
   */
  const PIPE_SLACK = 2 * MIB;
  /**
   * Requests the server may have taken while the host reads nothing: a full set running, answers
   * up to the limit and the pipe's worth beyond it, and the one that crossed it.
   */
  const BOUND_REQUESTS = OUTPUT_LIMITS.maxRunningRequests + Math.ceil((OUTPUT_LIMITS.maxUnsentBytes + PIPE_SLACK) / ANSWER_BYTES_AT_LEAST) + 1;
  /** Bytes that may leave the host while it reads nothing: those requests, and what the pipe holds. */
  const BOUND_BYTES = BOUND_REQUESTS * REQUEST_BYTES + PIPE_SLACK;
  const PAUSED = '"msg":"mcp output backlog over the limit: reading paused"';
  const HANG_GUARD = { timeout: 300_000 };

  /** A read_file request for big.txt, padded to REQUEST_BYTES, newline included. */
  function paddedRead(id: number): string {
    const line = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'read_file', arguments: { path: 'big.txt' } } });
    return `${line.slice(0, -1)}${' '.repeat(REQUEST_BYTES - line.length - 1)}}\n`;
  }

  /**
   * `patchd mcp` over raw stdio, driven by a host that writes one line at a time (the next once
   * the kernel took the last), so `taken` counts exactly the bytes that left it: those the server
   * read, and those the socket pair holds. It reads stdout only while `reading`.
   */
  class SlowHost implements Disposable {
    readonly child: ChildProcessWithoutNullStreams;
    readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
    stderr = '';
    taken = 0;
    /** Ids answered, each with whether its answer was big.txt whole. */
    readonly answers = new Map<number, boolean>();
    #partial = '';
    #queue: string[] = [];
    #writing = false;
    #ending = false;

    constructor(root: string) {
      this.child = spawn(process.execPath, [BIN, 'mcp', '-C', root], { env: { ...env(), PATCHD_LOG_LEVEL: 'debug' }, stdio: 'pipe' });
      this.child.stdin.on('error', () => {});
      this.child.stderr.setEncoding('utf8').on('data', (text: string) => (this.stderr += text));
      this.child.stdout.setEncoding('utf8').on('data', (text: string) => this.#read(text));
      const killer = setTimeout(() => this.child.kill('SIGKILL'), 240_000);
      this.exited = once(this.child, 'exit').then(([code, signal]) => {
        clearTimeout(killer);
        return { code: code as number | null, signal: signal as NodeJS.Signals | null };
      });
    }

    async initialize(): Promise<void> {
      this.send(`${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'slow', version: '1' } } })}\n`);
      await this.until(() => this.answers.has(0), [this.child.stdout, 'data']);
      this.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
      await this.until(() => this.allTaken, [this.child.stdin, 'taken']);
    }

    [Symbol.dispose](): void {
      if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    }

    set reading(on: boolean) {
      if (on) this.child.stdout.resume();
      else this.child.stdout.pause();
    }

    /** Queues lines, written one at a time. */
    send(...lines: string[]): void {
      this.#queue.push(...lines);
      this.#feed();
    }

    /** Hands every queued line to the pipe at once and closes it after them. */
    flushAndEnd(): void {
      const rest = this.#queue.splice(0);
      for (const line of rest) this.child.stdin.write(line);
      this.child.stdin.end();
      this.#ending = true;
    }

    get queued(): number {
      return this.#queue.length;
    }

    /** Every line sent has left the host. */
    get allTaken(): boolean {
      return this.#queue.length === 0 && !this.#writing;
    }

    /** `file/read` requests the server's daemon has finished, from its debug log. */
    get readsRun(): number {
      return this.#logLines().filter((line) => line.includes('"msg":"request","method":"file/read"')).length;
    }

    /** The fields of the first log line holding `text`, or undefined. */
    logged(text: string): Record<string, unknown> | undefined {
      const line = this.#logLines().find((entry) => entry.includes(text));
      return line === undefined ? undefined : (JSON.parse(line) as Record<string, unknown>);
    }

    /** The complete lines of stderr so far. */
    #logLines(): string[] {
      return this.stderr.split('\n').slice(0, -1);
    }

    /** Waits for `condition`, checking it each time one of `wakers` ([emitter, event]) fires. */
    async until(condition: () => boolean, ...wakers: (readonly [NodeJS.EventEmitter, string])[]): Promise<void> {
      const all = [...wakers, [this.child, 'exit'] as const];
      while (!condition()) {
        await new Promise<void>((resolve) => {
          const wake = (): void => {
            for (const [emitter, event] of all) emitter.off(event, wake);
            resolve();
          };
          for (const [emitter, event] of all) emitter.on(event, wake);
        });
        if (this.child.exitCode !== null || this.child.signalCode !== null) assert.ok(condition(), `the server exited first: ${this.stderr.slice(-2000)}`);
      }
    }

    #feed(): void {
      if (this.#writing || this.#ending) return;
      const line = this.#queue.shift();
      if (line === undefined) return;
      this.#writing = true;
      this.child.stdin.write(line, (error) => {
        this.#writing = false;
        if (error) return;
        this.taken += line.length;
        this.child.stdin.emit('taken');
        this.#feed();
      });
    }

    #read(text: string): void {
      this.#partial += text;
      for (let end = this.#partial.indexOf('\n'); end !== -1; end = this.#partial.indexOf('\n')) {
        const reply = JSON.parse(this.#partial.slice(0, end)) as { id: number; result?: { structuredContent?: { content?: string } } };
        this.#partial = this.#partial.slice(end + 1);
        this.answers.set(reply.id, reply.result?.structuredContent?.content === BIG);
      }
    }
  }

  const reads = (from: number, count: number): string[] => Array.from({ length: count }, (_, index) => paddedRead(from + index));

  function assertEveryReadAnswered(host: SlowHost, count: number): void {
    const ids = [...host.answers.keys()].filter((id) => id >= 1000).sort((a, b) => a - b);
    assert.deepEqual(ids, Array.from({ length: count }, (_, index) => 1000 + index), 'every request answered once');
    assert.ok(ids.every((id) => host.answers.get(id) === true), 'every answer whole');
  }

  test('a burst whose answers fit the bound is read whole while the host reads nothing (a host that writes it all before reading is not held)', HANG_GUARD, async () => {
    using tree = createTempTree({ 'big.txt': BIG });
    using host = new SlowHost(tree.root);
    await host.initialize();
    host.reading = false;
    const count = Math.floor((OUTPUT_LIMITS.maxUnsentBytes * 0.75) / ANSWER_BYTES_AT_LEAST);
    assert.ok(count > OUTPUT_LIMITS.maxRunningRequests, 'more requests than may run at once');
    host.send(...reads(1000, count));
    await host.until(() => host.allTaken || host.stderr.includes(PAUSED), [host.child.stdin, 'taken'], [host.child.stderr, 'data']);
    assert.ok(!host.stderr.includes(PAUSED), 'the answers stayed under the bound');
    await host.until(() => host.readsRun === count, [host.child.stderr, 'data']);
    assert.equal(host.answers.size, 1, 'nothing read yet but the initialize answer');
    host.reading = true;
    await host.until(() => host.answers.size === count + 1, [host.child.stdout, 'data']);
    assertEveryReadAnswered(host, count);
    host.child.stdin.end();
    assert.deepEqual(await host.exited, { code: 0, signal: null }, host.stderr.slice(-2000));
  });

  test('past the bound the server stops reading: what leaves the host stays bounded while it reads nothing; stdin closed then, every request is answered once it reads, and the server exits 0', HANG_GUARD, async () => {
    using tree = createTempTree({ 'big.txt': BIG });
    using host = new SlowHost(tree.root);
    await host.initialize();
    host.reading = false;
    const before = host.taken;
    const count = 2 * Math.ceil(BOUND_BYTES / REQUEST_BYTES);
    host.send(...reads(1000, count));
    // The old transport never paused: every request then left the host, to be answered from the server's memory.
    await host.until(() => host.stderr.includes(PAUSED) || host.allTaken, [host.child.stdin, 'taken'], [host.child.stderr, 'data']);
    const atPause = host.taken - before;
    assert.ok(atPause <= BOUND_BYTES, `${atPause} bytes of ${count * REQUEST_BYTES} left the host while it read nothing (bound ${BOUND_BYTES})`);

    // Every request the server took has run: it has nothing left to do but wait for the host.
    await host.until(() => host.logged(PAUSED) !== undefined, [host.child.stderr, 'data']);
    const handedOn = host.logged(PAUSED)!.requestsHandedOn as number;
    await host.until(() => host.readsRun >= handedOn - 1, [host.child.stderr, 'data']);
    const idle = host.taken - before;
    assert.ok(idle <= BOUND_BYTES, `${idle} bytes left the host once the server was idle (bound ${BOUND_BYTES})`);
    assert.ok(host.queued > 0, 'requests still wait in the host');
    assert.equal(host.answers.size, 1, 'nothing read yet but the initialize answer');

    host.flushAndEnd();
    host.reading = true;
    assert.deepEqual(await host.exited, { code: 0, signal: null }, host.stderr.slice(-2000));
    assertEveryReadAnswered(host, count);
    assert.ok(host.stderr.includes('"msg":"mcp output backlog taken: reading resumed"'));
  });

  test('a host that goes away while the server is paused (its stdout closed: EPIPE) ends the server', HANG_GUARD, async () => {
    using tree = createTempTree({ 'big.txt': BIG });
    using host = new SlowHost(tree.root);
    await host.initialize();
    host.reading = false;
    host.send(...reads(1000, 2 * Math.ceil(BOUND_BYTES / REQUEST_BYTES)));
    await host.until(() => host.stderr.includes(PAUSED) || host.allTaken, [host.child.stdin, 'taken'], [host.child.stderr, 'data']);
    assert.ok(host.stderr.includes(PAUSED), 'the server paused');
    // stdin stays open: paused, the server could not see it end; the failed output alone must stop it.
    host.child.stdout.destroy();
    assert.deepEqual(await host.exited, { code: 0, signal: null }, host.stderr.slice(-2000));
    assert.match(host.stderr, /"msg":"stopping","reason":"output closed"/);
  });
});
