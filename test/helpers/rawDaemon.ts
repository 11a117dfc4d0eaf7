/**
 * A daemon spawned without the client, to test the wire itself: send any bytes, and read
 * stdout as a strict sequence of `Content-Length` frames (anything else is a violation).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { daemonArgs } from '../../client/daemonProcess.ts';
import { FrameReader, type JsonRpcFrame } from './frames.ts';

export type { JsonRpcFrame } from './frames.ts';

export class RawDaemon implements AsyncDisposable {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every frame read from stdout, in order. */
  readonly frames: JsonRpcFrame[] = [];
  /** Resolves once the daemon exited and its output is all read. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr = '';
  readonly #reader = new FrameReader();
  #waiters: (() => void)[] = [];

  /** `args`: how to start the daemon up to `serve` (e.g. `RUNAWAY_DAEMON`). */
  constructor(env: NodeJS.ProcessEnv = {}, args: readonly string[] = daemonArgs()) {
    this.child = spawn(process.execPath, args, { stdio: 'pipe', env: { ...process.env, ...env } });
    // 'close', not 'exit': by then every byte the daemon wrote to stdout has been read into `frames`.
    this.exited = new Promise((resolve) => this.child.once('close', (code, signal) => resolve({ code, signal })));
    this.child.stdout.on('data', (chunk: Buffer) => this.#onStdout(chunk));
    this.child.stderr.setEncoding('utf8').on('data', (text: string) => (this.stderr += text));
    this.child.stdin.on('error', () => {});
  }

  /** Kills the daemon if it still runs (a failed test must not leave it holding the test process open), and reads what is left of its stdout (a test may have paused it), so that it closes. */
  async [Symbol.asyncDispose](): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    this.child.stdout.resume();
    await this.exited;
  }

  /** Descriptions of stdout bytes that were not a well-formed frame. */
  get violations(): readonly string[] {
    return this.#reader.violations;
  }

  /** Bytes on stdout that never formed a complete frame. */
  get leftover(): number {
    return this.#reader.leftover;
  }

  /** Sends bytes as they are (a frame, half of one, or anything at all). */
  write(bytes: string | Buffer): void {
    this.child.stdin.write(bytes);
  }

  /** Sends one message, framed. */
  send(message: object): void {
    this.sendBody(JSON.stringify(message));
  }

  /** Sends any body under a correct Content-Length header. */
  sendBody(body: string): void {
    const bytes = Buffer.from(body, 'utf8');
    this.child.stdin.write(Buffer.concat([Buffer.from(`Content-Length: ${bytes.length}\r\n\r\n`, 'ascii'), bytes]));
  }

  /** Sends a request and waits for its response. */
  async request(id: number, method: string, params?: unknown): Promise<JsonRpcFrame> {
    this.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return this.waitFor((frame) => frame.id === id && frame.method === undefined);
  }

  /**
   * The first frame (already read or still to come) that matches; rejects if the daemon exits
   * without sending one. No clock of its own: a slow machine only makes it wait longer.
   */
  async waitFor(match: (frame: JsonRpcFrame) => boolean): Promise<JsonRpcFrame> {
    let exited = false;
    void this.exited.then(() => {
      exited = true;
      for (const wake of this.#waiters.splice(0)) wake();
    });
    for (;;) {
      const found = this.frames.find(match);
      if (found !== undefined) return found;
      if (exited) throw new Error(`the daemon exited without a matching frame; stderr:\n${this.stderr}`);
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  #onStdout(chunk: Buffer): void {
    this.frames.push(...this.#reader.push(chunk));
    for (const wake of this.#waiters.splice(0)) wake();
  }
}
