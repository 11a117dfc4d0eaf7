/** `patchd/tools`: the request shapes each provider receives, and the guidance for each (RFC 002 verification plan). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { anthropic, ApplyPatchToolInput, openai, UNIFIED_DIFF_LARK_GRAMMAR } from '../../protocol/tools/index.ts';
import { assertSnapshot } from './snapshot.ts';

const TASK = 'Rename old_call to new_call in src/main.py.';
const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

test('OpenAI Responses: apply_patch is a custom tool whose format is the Lark grammar; the model emits the diff body', () => {
  const request = { model: 'gpt-5', instructions: openai.customToolGuidance, input: TASK, tools: [openai.customTool] };
  assert.equal(request.tools[0]?.type, 'custom');
  assert.deepEqual(request.tools[0]?.format, { type: 'grammar', syntax: 'lark', definition: UNIFIED_DIFF_LARK_GRAMMAR });
  assertSnapshot('openai-responses-custom-request.json', json(request));
});

test('OpenAI Responses: the function-tool variant takes {patch: string}, strict', () => {
  const request = { model: 'gpt-5', instructions: openai.functionToolGuidance, input: TASK, tools: [openai.functionTool] };
  assert.deepEqual(openai.functionTool.parameters, {
    type: 'object',
    properties: { patch: { type: 'string', description: (openai.functionTool.parameters.properties as { patch: { description: string } }).patch.description } },
    required: ['patch'],
    additionalProperties: false,
  });
  assertSnapshot('openai-responses-function-request.json', json(request));
});

test('Anthropic Messages: apply_patch is a JSON tool {name, description, input_schema} with a required patch string', () => {
  const request = { model: 'claude-sonnet-4-5', max_tokens: 4096, system: anthropic.guidance, tools: [anthropic.tool], messages: [{ role: 'user', content: TASK }] };
  assert.deepEqual(Object.keys(anthropic.tool), ['name', 'description', 'input_schema']);
  assert.equal(anthropic.tool.name, 'apply_patch');
  assert.deepEqual(anthropic.tool.input_schema.required, ['patch']);
  assertSnapshot('anthropic-messages-request.json', json(request));
});

/**
 * Tool input schemas as the providers' SDKs type them (@anthropic-ai/sdk `Tool.InputSchema`,
 * openai `FunctionTool.parameters`), copied from their published declarations: the definitions
 * must be assignable to them as they are. `npm test` type-checks this file first.
 */
interface AnthropicSdkInputSchema {
  type: 'object';
  properties?: unknown | null;
  required?: Array<string> | null;
  [key: string]: unknown;
}
type OpenAISdkFunctionParameters = { [key: string]: unknown } | null;

test("the definitions type-check where the providers' SDKs take them", () => {
  const anthropicInput: AnthropicSdkInputSchema = anthropic.tool.input_schema;
  const openaiParameters: OpenAISdkFunctionParameters = openai.functionTool.parameters;
  assert.equal(anthropicInput.type, 'object');
  assert.equal(openaiParameters?.type, 'object');
});

test('the JSON-tool guidance shows {"patch": "..."}; the custom-tool guidance shows the bare diff; neither teaches the envelope', () => {
  const jsonExample = /^\{"patch":.*\}$/m.exec(anthropic.guidance)?.[0];
  assert.ok(jsonExample !== undefined, 'the JSON guidance has a {"patch": ...} example line');
  const { patch } = ApplyPatchToolInput.parse(JSON.parse(jsonExample));
  assert.ok(openai.customToolGuidance.includes(patch), 'the custom-tool guidance shows the same diff, bare');
  assert.ok(!openai.customToolGuidance.includes('{"patch"'));
  assert.equal(openai.functionToolGuidance, anthropic.guidance);
  for (const text of [anthropic.guidance, openai.customToolGuidance]) assert.doesNotMatch(text, /^\*\*\* Begin Patch/m);
  assertSnapshot('guidance-json-tool.txt', anthropic.guidance);
  assertSnapshot('guidance-openai-custom-tool.txt', openai.customToolGuidance);
});
