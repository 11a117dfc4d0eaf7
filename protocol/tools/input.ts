/** The input of a JSON `apply_patch` tool (Anthropic, OpenAI function tools): `{patch: string}`. */
import { z } from 'zod';

export const PATCH_DESCRIPTION =
  'The whole patch as unified diff text: `--- a/path` and `+++ b/path` headers, then `@@ -old,count +new,count @@` hunks of context (" "), removed ("-") and added ("+") lines.';

export const ApplyPatchToolInput = z.object({ patch: z.string().describe(PATCH_DESCRIPTION) }).strict();
export type ApplyPatchToolInput = z.infer<typeof ApplyPatchToolInput>;

/** The JSON Schema of {@link ApplyPatchToolInput}, as providers take it (no `$schema` key). */
export function applyPatchInputJsonSchema(): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(ApplyPatchToolInput, { io: 'input' });
  return schema;
}
