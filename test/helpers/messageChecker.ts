/**
 * Watches both directions of a connection and validates every message against protocol/:
 * request params, response results, `$/progress` receipts and `file/changed` notifications.
 */
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import {
  ApplyBatchRequest, ApplyPatchRequest, CloseWorkspaceRequest, FileChangedNotification, InitializeRequest, OpenWorkspaceRequest,
  ProgressNotification, ReadFileRequest, ShutdownRequest,
} from '../../protocol/index.ts';
import { FrameReader, type JsonRpcFrame } from './frames.ts';

interface MethodSchemas {
  readonly params?: z.ZodType;
  readonly result: z.ZodType;
}

const METHODS = new Map<string, MethodSchemas>([
  ...[InitializeRequest, OpenWorkspaceRequest, CloseWorkspaceRequest, ApplyPatchRequest, ApplyBatchRequest, ReadFileRequest].map(
    (definition): [string, MethodSchemas] => [definition.method, definition],
  ),
  [ShutdownRequest.method, ShutdownRequest],
]);

export class MessageChecker {
  /** Everything that did not match the protocol. */
  readonly problems: string[] = [];
  /** How many messages were checked. */
  checked = 0;
  readonly #methodsById = new Map<string | number, string>();

  /** Watches the client → daemon direction. */
  watchRequests(stream: Readable): void {
    this.#watch(stream, (frame) => this.#checkRequest(frame));
  }

  /** Watches the daemon → client direction. */
  watchResponses(stream: Readable): void {
    this.#watch(stream, (frame) => this.#checkResponse(frame));
  }

  #watch(stream: Readable, check: (frame: JsonRpcFrame) => void): void {
    const reader = new FrameReader();
    stream.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(Buffer.from(chunk))) check(frame);
      this.problems.push(...reader.violations.splice(0));
    });
  }

  #checkRequest(frame: JsonRpcFrame): void {
    const schemas = frame.method === undefined ? undefined : METHODS.get(frame.method);
    if (frame.id !== undefined && frame.id !== null && frame.method !== undefined) this.#methodsById.set(frame.id, frame.method);
    if (schemas?.params !== undefined) this.#validate(`${frame.method} params`, schemas.params, frame.params);
  }

  #checkResponse(frame: JsonRpcFrame): void {
    if (frame.method === '$/progress') return this.#validate(ProgressNotification.method, ProgressNotification.params, frame.params);
    if (frame.method === FileChangedNotification.method) return this.#validate(frame.method, FileChangedNotification.params, frame.params);
    const method = frame.id === undefined || frame.id === null ? undefined : this.#methodsById.get(frame.id);
    const schemas = method === undefined ? undefined : METHODS.get(method);
    if (frame.error !== undefined) return void this.checked++;
    if (schemas === undefined) return void this.problems.push(`response to an unknown request: ${JSON.stringify(frame).slice(0, 200)}`);
    this.#validate(`${method} result`, schemas.result, frame.result);
  }

  #validate(what: string, schema: z.ZodType, value: unknown): void {
    this.checked++;
    const parsed = schema.safeParse(value);
    if (!parsed.success) this.problems.push(`${what}: ${parsed.error.message}`);
  }
}
