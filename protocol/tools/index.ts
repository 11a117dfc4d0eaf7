/**
 * `patchd/tools`: the model-facing definitions of `apply_patch` (RFC 002) — one patch language,
 * unified diff, in each provider's outer tool shape — and the prompt guidance for each.
 *
 * @example
 * import { anthropic, openai } from 'patchd/tools';
 * // OpenAI Responses: { tools: [openai.customTool], instructions: openai.customToolGuidance }
 * // Anthropic Messages: { tools: [anthropic.tool], system: anthropic.guidance }
 */
export * as anthropic from './anthropic.ts';
export * as openai from './openai.ts';
export { UNIFIED_DIFF_LARK_GRAMMAR } from './grammar.ts';
export { ApplyPatchToolInput, applyPatchInputJsonSchema, type ObjectJsonSchema } from './input.ts';
