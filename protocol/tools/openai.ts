/** OpenAI Responses API definitions of `apply_patch`: a custom tool constrained by the Lark grammar, and the JSON function-tool variant. */
import { UNIFIED_DIFF_LARK_GRAMMAR } from './grammar.ts';
import { CUSTOM_TOOL_GUIDANCE, JSON_TOOL_GUIDANCE } from './guidance.ts';
import { applyPatchInputJsonSchema, type ObjectJsonSchema } from './input.ts';

export const APPLY_PATCH_DESCRIPTION =
  'Apply a unified diff to files in the workspace, atomically: every file changes or none does. Line numbers are hints; context decides where a hunk goes.';

export interface OpenAICustomTool {
  readonly type: 'custom';
  readonly name: string;
  readonly description: string;
  readonly format: { readonly type: 'grammar'; readonly syntax: 'lark'; readonly definition: string };
}

export interface OpenAIFunctionTool {
  readonly type: 'function';
  readonly name: string;
  readonly description: string;
  readonly parameters: ObjectJsonSchema;
  readonly strict: boolean;
}

/** `tools: [openai.customTool]`: the model emits the diff body itself; the call's `input` is the patch text. */
export const customTool: OpenAICustomTool = {
  type: 'custom',
  name: 'apply_patch',
  description: `${APPLY_PATCH_DESCRIPTION} The input is the diff text itself.`,
  format: { type: 'grammar', syntax: 'lark', definition: UNIFIED_DIFF_LARK_GRAMMAR },
};

/** `tools: [openai.functionTool]`: the call's `arguments` are `{"patch": "..."}`. */
export const functionTool: OpenAIFunctionTool = {
  type: 'function',
  name: 'apply_patch',
  description: APPLY_PATCH_DESCRIPTION,
  parameters: applyPatchInputJsonSchema(),
  strict: true,
};

export const customToolGuidance = CUSTOM_TOOL_GUIDANCE;
export const functionToolGuidance = JSON_TOOL_GUIDANCE;
