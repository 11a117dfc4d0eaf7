/**
 * The JSON-RPC error a connection writes itself, for input it hands to nobody (a body that is
 * not JSON, not a JSON-RPC message, or too large to read): the daemon's `frameGuard.ts` and the
 * MCP stdio transport alike.
 */

export interface ErrorReply {
  readonly jsonrpc: '2.0';
  readonly id: string | number | null;
  readonly error: { readonly code: number; readonly message: string };
}

export function errorReply(id: string | number | null, code: number, message: string): ErrorReply {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** The id of a value read as a message, to answer it by; null (as JSON-RPC answers an id it cannot read) when it has none that is a string or a number. */
export function replyIdOf(value: unknown): string | number | null {
  const id = (value as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
