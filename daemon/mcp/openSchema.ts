/**
 * An output schema that stays open to extra fields: the same zod schema with every object made
 * loose (`additionalProperties` not false). An MCP client rejects a result that fails a closed
 * `outputSchema`, so a daemon newer than the schema a client listed must not break it.
 */
import { z } from 'zod';

export function openSchema(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) {
    return z.looseObject(Object.fromEntries(Object.entries(schema.shape as Record<string, z.ZodType>).map(([key, value]) => [key, openSchema(value)])));
  }
  if (schema instanceof z.ZodArray) return z.array(openSchema(schema.element as z.ZodType));
  if (schema instanceof z.ZodOptional) return openSchema(schema.unwrap() as z.ZodType).optional();
  if (schema instanceof z.ZodNullable) return openSchema(schema.unwrap() as z.ZodType).nullable();
  return schema;
}

/** `openSchema` for an object schema, typed as one (what `registerTool` takes as `outputSchema`). */
export function openObject(schema: z.ZodObject): z.ZodObject {
  return openSchema(schema) as z.ZodObject;
}
