/**
 * Requests the MCP client sent that have no response yet. When stdin closes, the client may
 * still be reading stdout: the server answers what it was asked before it stops.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

type RequestId = string | number;

export interface PendingRequests {
  /** Resolves once every request received so far has been answered. */
  answered(): Promise<void>;
}

/** Watches a connected transport (call after `server.connect`, which installs `onmessage`). */
export function trackPendingRequests(transport: Transport): PendingRequests {
  const pending = new Set<RequestId>();
  let waiters: (() => void)[] = [];
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isRequest(message)) pending.add(message.id);
    receive?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    if (!isRequest(message) && 'id' in message && message.id !== undefined && pending.delete(message.id) && pending.size === 0) {
      for (const wake of waiters) wake();
      waiters = [];
    }
  };
  return {
    answered: () => (pending.size === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve))),
  };
}

function isRequest(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId; method: string } {
  return 'method' in message && 'id' in message;
}
