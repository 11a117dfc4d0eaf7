/**
 * Requests the MCP client sent that have no response yet. When stdin closes, the client may
 * still be reading stdout: the server answers what it was asked before it stops.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { UnansweredRequests } from '../server/unansweredRequests.ts';

type RequestId = string | number;

/** Watches a connected transport (call after `server.connect`, which installs `onmessage`). */
export function trackPendingRequests(transport: Transport): Pick<UnansweredRequests<RequestId>, 'allAnswered'> {
  const pending = new UnansweredRequests<RequestId>();
  const receive = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isRequest(message)) pending.add(message.id);
    receive?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message, options) => {
    await send(message, options);
    if (!isRequest(message) && 'id' in message && message.id !== undefined) pending.answered(message.id);
  };
  return pending;
}

function isRequest(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId; method: string } {
  return 'method' in message && 'id' in message;
}
