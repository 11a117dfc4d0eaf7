/**
 * Lifecycle: `initialize`, `shutdown` and the `exit` notification.
 *
 * A client sends `initialize` first and reads the server's protocol version and formats.
 * `shutdown` answers `null` and makes the daemon refuse further requests (-32600,
 * `data.code` `shutting_down`); the `exit` notification (or closing the daemon's stdin) then
 * ends the process with exit code 0 after its workspaces and worker pools are closed. `exit`
 * without `shutdown` does the same, with 0 too (not LSP's 1): so does closing stdin without it,
 * and patchd's other codes mean patchd failed (65 unreadable input, 70 a fault in patchd).
 * Once stdin has closed, answers the client leaves unread for 2.5 s are dropped (the daemon logs
 * what it left unsent) and the daemon closes its workspaces and exits all the same.
 *
 * On a shared daemon (`patchd serve --socket PATH`) both concern only the sending client's
 * connection: `shutdown` refuses that client's later requests, `exit` closes its connection,
 * and the daemon goes on serving the others until it gets SIGINT or SIGTERM.
 */
import { z } from 'zod';
import { defineNotification0, defineRequest, defineRequest0 } from './define.ts';

/** The protocol version this package speaks (`initialize.protocolVersion`). */
export const PROTOCOL_VERSION = 1;

/** Who is calling; logged by the daemon, otherwise informational. Open to added fields, like {@link InitializeParamsSchema}. */
export const ClientInfoSchema = z.object({
  name: z.string().max(200),
  version: z.string().max(200).optional(),
});

/**
 * Params of `initialize`. Unlike every other request's, open: keys it does not know are dropped,
 * not refused, so that a newer client (sending, say, capabilities) can still complete the
 * handshake with an older daemon and read its `protocolVersion`.
 */
export const InitializeParamsSchema = z.object({
  clientInfo: ClientInfoSchema.optional(),
});

/** Result of `initialize`. */
export const InitializeResultSchema = z.object({
  /** `{name: "patchd", version}` — the daemon's package version. */
  serverInfo: z.object({ name: z.string(), version: z.string() }),
  /** {@link PROTOCOL_VERSION} of the daemon; a client should refuse a version it does not know. */
  protocolVersion: z.number().int(),
  /** Every accepted `format` name except `auto`. */
  formats: z.array(z.string()).max(100),
});

export type ClientInfo = z.infer<typeof ClientInfoSchema>;
export type InitializeParams = z.infer<typeof InitializeParamsSchema>;
export type InitializeResult = z.infer<typeof InitializeResultSchema>;

/** `initialize`: the handshake. Params may be omitted. */
export const InitializeRequest = defineRequest('initialize', InitializeParamsSchema, InitializeResultSchema);

/** `shutdown`: replies `null`; the daemon refuses later requests and waits for `exit`. */
export const ShutdownRequest = defineRequest0('shutdown', z.null());

/** `exit`: ends the daemon (exit code 0) after its pools are closed. */
export const ExitNotification = defineNotification0('exit');
