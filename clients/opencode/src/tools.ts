// The sidecar's model tools (history, memory, task) as OpenCode tools.
//
// OpenCode offers a plugin's tools to the model beside its own (`Hooks.tool`), each declared with
// zod argument schemas (`tool.schema`, the zod of @opencode-ai/plugin). The sidecar describes its
// tools in JSON Schema (`tools/list`); `argsOf` turns each input schema into zod, for the subset the
// sidecar's schemas use, and refuses anything else with an error that names the property (a
// sidecar whose tools grew a construct the plugin cannot declare must not be offered half of it).
// Each call goes to `tools/call` for the session the model is in.

import { tool, type ToolContext, type ToolDefinition as OpenCodeTool } from '@opencode-ai/plugin';
import type { z as Zod, ZodType } from 'zod';
import type { ToolDefinition } from './supervisor.js';

// The zod OpenCode reads the schemas with: @opencode-ai/plugin's (its version is ours, package.json).
const z: typeof Zod = tool.schema;
type ZodSchema = ZodType;
type Shape = Record<string, ZodType>;

/** The answer of one call, for the model; `isError` answers are thrown, so OpenCode marks them. */
export type CallTool = (sessionId: string, name: string, args: Record<string, unknown>) => Promise<{ text: string; isError: boolean }>;

export class ToolSchemaError extends Error {}

/** The zod argument shape of a JSON Schema `{type: "object", properties, required}`. */
export function argsOf(name: string, schema: Record<string, unknown>): Shape {
  if (schema.type !== 'object' || typeof schema.properties !== 'object' || schema.properties === null) {
    throw new ToolSchemaError(`${name}: the input schema is not an object with properties`);
  }
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const shape: Shape = {};
  for (const [key, value] of Object.entries(schema.properties as Record<string, Record<string, unknown>>)) {
    const field = fieldOf(`${name}.${key}`, value);
    shape[key] = required.has(key) ? field : field.optional();
  }
  return shape;
}

function fieldOf(where: string, schema: Record<string, unknown>): ZodSchema {
  const known = new Set(['type', 'description', 'enum', 'minimum', 'maximum']);
  const unknown = Object.keys(schema).filter((key) => !known.has(key));
  if (unknown.length > 0) throw new ToolSchemaError(`${where}: cannot declare ${unknown.join(', ')}`);
  let field: ZodSchema;
  if (Array.isArray(schema.enum)) {
    if (schema.type !== 'string' || !schema.enum.every((v) => typeof v === 'string') || schema.enum.length === 0) {
      throw new ToolSchemaError(`${where}: only a non-empty enum of strings is supported`);
    }
    field = z.enum(schema.enum as [string, ...string[]]);
  } else if (schema.type === 'string') {
    field = z.string();
  } else if (schema.type === 'integer' || schema.type === 'number') {
    let number = schema.type === 'integer' ? z.number().int() : z.number();
    if (typeof schema.minimum === 'number') number = number.min(schema.minimum);
    if (typeof schema.maximum === 'number') number = number.max(schema.maximum);
    field = number;
  } else if (schema.type === 'boolean') {
    field = z.boolean();
  } else {
    throw new ToolSchemaError(`${where}: type ${JSON.stringify(schema.type)} is not supported`);
  }
  if ((schema.minimum !== undefined || schema.maximum !== undefined) && schema.type !== 'integer' && schema.type !== 'number') {
    throw new ToolSchemaError(`${where}: minimum/maximum on a ${String(schema.type)}`);
  }
  return typeof schema.description === 'string' ? field.describe(schema.description) : field;
}

/** OpenCode tools for the sidecar's definitions, each answered through `call`. */
export function openCodeTools(definitions: readonly ToolDefinition[], call: CallTool): Record<string, OpenCodeTool> {
  const tools: Record<string, OpenCodeTool> = {};
  for (const definition of definitions) {
    const args = argsOf(definition.name, definition.inputSchema);
    tools[definition.name] = tool({
      description: definition.description,
      args,
      async execute(input: Record<string, unknown>, context: ToolContext) {
        const answer = await call(context.sessionID, definition.name, stripUndefined(input));
        if (answer.isError) throw new Error(answer.text);
        return answer.text;
      },
    } as Parameters<typeof tool>[0]) as OpenCodeTool;
  }
  return tools;
}

/** zod leaves absent optional arguments out; a JSON round trip would too. */
function stripUndefined(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined));
}
