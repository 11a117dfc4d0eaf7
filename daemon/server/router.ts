/**
 * Method name → validated handler call. Params are parsed with the method's zod schema from
 * `protocol/` before a handler sees them (a failure throws `ZodError`, answered -32602).
 */
import type { z } from 'zod';
import {
  ApplyBatchRequest, ApplyPatchRequest, CloseWorkspaceRequest, InitializeRequest, ListTransactionsRequest, OpenWorkspaceRequest, ReadFileRequest,
  SessionDiffRequest, ShutdownRequest, UndoRequest,
} from '../../protocol/index.ts';
import { MethodNotFoundError, ShuttingDownError } from './failures.ts';
import type { PatchdHandlers } from './handlers.ts';

type Route = (params: unknown, signal: AbortSignal) => Promise<unknown>;

export type Dispatch = (method: string, params: unknown, signal: AbortSignal) => Promise<unknown>;

export function createDispatch(handlers: PatchdHandlers): Dispatch {
  const routes = new Map<string, Route>([
    route(InitializeRequest, (params) => handlers.initialize(params)),
    route(OpenWorkspaceRequest, (params) => handlers.openWorkspace(params)),
    route(CloseWorkspaceRequest, (params) => handlers.closeWorkspace(params)),
    route(ApplyPatchRequest, (params, signal) => handlers.applyPatch(params, signal)),
    route(ApplyBatchRequest, (params, signal) => handlers.applyBatch(params, signal)),
    route(ReadFileRequest, (params) => handlers.readFile(params)),
    route(UndoRequest, (params, signal) => handlers.undo(params, signal)),
    route(SessionDiffRequest, (params) => handlers.sessionDiff(params)),
    route(ListTransactionsRequest, (params) => handlers.listTransactions(params)),
    [ShutdownRequest.method, async () => handlers.shutdown()],
  ]);
  return async (method, params, signal) => {
    const run = routes.get(method);
    if (run === undefined) throw new MethodNotFoundError(method);
    if (handlers.isShutDown && method !== ShutdownRequest.method) throw new ShuttingDownError(method);
    // Params may be omitted (or null) on the wire; schemas then report the missing fields.
    return run(params ?? {}, signal);
  };
}

function route<P extends z.ZodType>(
  definition: { readonly method: string; readonly params: P },
  run: (params: z.infer<P>, signal: AbortSignal) => unknown,
): [string, Route] {
  return [definition.method, async (params, signal) => run(definition.params.parse(params), signal)];
}
