/** Anthropic Messages API definition of `apply_patch`: a JSON tool whose input is `{patch: string}`. */
import { JSON_TOOL_GUIDANCE } from './guidance.ts';
import { applyPatchInputJsonSchema, type ObjectJsonSchema } from './input.ts';
import { APPLY_PATCH_DESCRIPTION } from './openai.ts';

export interface AnthropicTool {
  readonly name: string;
  readonly description: string;
  readonly input_schema: ObjectJsonSchema;
}

/** `tools: [anthropic.tool]`: a `tool_use` block's `input` is `{"patch": "..."}`. */
export const tool: AnthropicTool = {
  name: 'apply_patch',
  description: `${APPLY_PATCH_DESCRIPTION} Input: {"patch": "<unified diff>"}.`,
  input_schema: applyPatchInputJsonSchema(),
};

export const guidance = JSON_TOOL_GUIDANCE;
