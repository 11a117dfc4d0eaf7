/**
 * Helpers that declare a method once: its name, its zod schemas and the matching
 * vscode-jsonrpc message type, so the daemon and the client cannot disagree on a shape.
 */
import { NotificationType, NotificationType0, ParameterStructures, RequestType, RequestType0 } from 'vscode-jsonrpc';
import type { z } from 'zod';

/** A request with named params: method string, params and result schemas, typed `RequestType`. */
export interface RequestDefinition<P extends z.ZodType, R extends z.ZodType> {
  readonly method: string;
  readonly params: P;
  readonly result: R;
  readonly type: RequestType<z.infer<P>, z.infer<R>, void>;
}

/** A request without params (`RequestType0`). */
export interface Request0Definition<R extends z.ZodType> {
  readonly method: string;
  readonly result: R;
  readonly type: RequestType0<z.infer<R>, void>;
}

/** A notification with named params. */
export interface NotificationDefinition<P extends z.ZodType> {
  readonly method: string;
  readonly params: P;
  readonly type: NotificationType<z.infer<P>>;
}

/** A notification without params (`NotificationType0`). */
export interface Notification0Definition {
  readonly method: string;
  readonly type: NotificationType0;
}

/** Declares a request whose params are sent by name. */
export function defineRequest<P extends z.ZodType, R extends z.ZodType>(method: string, params: P, result: R): RequestDefinition<P, R> {
  return { method, params, result, type: new RequestType(method, ParameterStructures.byName) };
}

/** Declares a parameterless request. */
export function defineRequest0<R extends z.ZodType>(method: string, result: R): Request0Definition<R> {
  return { method, result, type: new RequestType0(method) };
}

/** Declares a notification whose params are sent by name. */
export function defineNotification<P extends z.ZodType>(method: string, params: P): NotificationDefinition<P> {
  return { method, params, type: new NotificationType(method, ParameterStructures.byName) };
}

/** Declares a parameterless notification. */
export function defineNotification0(method: string): Notification0Definition {
  return { method, type: new NotificationType0(method) };
}
