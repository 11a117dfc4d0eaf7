/** The input of a JSON `apply_patch` tool (Anthropic, OpenAI function tools): `{patch: string}`. */
import { z } from 'zod';

export const PATCH_DESCRIPTION =
  'The whole patch as unified diff text: `--- a/path` and `+++ b/path` headers, then `@@ -old,count +new,count @@` hunks of context (" "), removed ("-") and added ("+") lines.';

export const ApplyPatchToolInput = z.object({ patch: z.string().describe(PATCH_DESCRIPTION) }).strict();
export type ApplyPatchToolInput = z.infer<typeof ApplyPatchToolInput>;

/**
 * A tool input's JSON Schema: an object schema, typed as the providers' SDKs take one (the
 * Anthropic SDK's `input_schema` requires `type: 'object'` and a mutable `required`).
 */
export interface ObjectJsonSchema {
  type: 'object';
  properties?: Record<string, unknown>;
  required?: string[];
  [key: string]: unknown;
}

/** The JSON Schema of {@link ApplyPatchToolInput}, as providers take it (no `$schema` key). */
export function applyPatchInputJsonSchema(): ObjectJsonSchema {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(ApplyPatchToolInput, { io: 'input' });
  return { ...schema, type: 'object' };
}
