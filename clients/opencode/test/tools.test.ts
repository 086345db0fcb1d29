// The model tools as OpenCode declares them: the sidecar's JSON Schemas (its real `tools/list`)
// turned into zod, and back into the JSON Schema OpenCode sends the model, must say the same
// thing; a construct the plugin cannot declare is refused, not offered half-way.

import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { tool } from '@opencode-ai/plugin';
import { Sidecar } from 'mimo-sidecar-client';
import { argsOf, openCodeTools, ToolSchemaError } from '../src/tools.js';
import type { ToolDefinition } from '../src/supervisor.js';
import { SIDECAR } from './fake_opencode.js';

type Schema = { type?: string; properties?: Record<string, Record<string, unknown>>; required?: string[] };

describe("the sidecar's tools in OpenCode's zod", () => {
  let sidecar: Sidecar;
  let definitions: ToolDefinition[];

  before(async () => {
    sidecar = Sidecar.spawn({ command: SIDECAR });
    await sidecar.initialize({ processId: process.pid, capabilities: {}, initializationOptions: { memoryRoot: mkdtempSync(join(tmpdir(), 'mimo-tools-')) } });
    definitions = (await sidecar.toolsList({ format: 'ai-sdk', prefix: 'mimo_' })).tools as unknown as ToolDefinition[];
  });

  after(async () => sidecar.close());

  it('declare the same arguments, required ones and choices as the sidecar', () => {
    assert.deepEqual(definitions.map((d) => d.name), ['mimo_history', 'mimo_memory', 'mimo_task']);
    for (const definition of definitions) {
      const expected = definition.inputSchema as Schema;
      const made = tool.schema.toJSONSchema(tool.schema.object(argsOf(definition.name, definition.inputSchema))) as Schema;
      assert.deepEqual(Object.keys(made.properties ?? {}), Object.keys(expected.properties ?? {}), definition.name);
      assert.deepEqual(made.required ?? [], expected.required ?? [], definition.name);
      for (const [key, want] of Object.entries(expected.properties ?? {})) {
        const got = made.properties![key]!;
        assert.equal(got.type, want.type, `${definition.name}.${key}`);
        assert.equal(got.description, want.description);
        assert.deepEqual(got.enum, want.enum);
        assert.equal(got.minimum, want.minimum);
        if (want.maximum !== undefined) assert.equal(got.maximum, want.maximum);
      }
    }
  });

  it('check arguments as the sidecar would', () => {
    const history = tool.schema.object(argsOf('mimo_history', definitions[0]!.inputSchema));
    assert.ok(history.safeParse({ operation: 'result', callID: 'call_1' }).success);
    assert.ok(!history.safeParse({ operation: 'rewind' }).success);
    assert.ok(!history.safeParse({ operation: 'around', before: 21 }).success);
    assert.ok(!history.safeParse({ callID: 'call_1' }).success);
  });

  it('answer each call through the call given, an error answer thrown for OpenCode to mark', async () => {
    const calls: unknown[] = [];
    const tools = openCodeTools(definitions, async (sessionId, name, args) => {
      calls.push([sessionId, name, args]);
      return args.operation === 'list' ? { text: 'ledger', isError: false } : { text: 'send id', isError: true };
    });
    const context = { sessionID: 'ses_tools1' } as Parameters<NonNullable<typeof tools.mimo_task>['execute']>[1];
    assert.equal(await tools.mimo_task!.execute({ operation: 'list', id: undefined }, context), 'ledger');
    await assert.rejects(tools.mimo_task!.execute({ operation: 'get' }, context), /send id/);
    assert.deepEqual(calls, [
      ['ses_tools1', 'mimo_task', { operation: 'list' }],
      ['ses_tools1', 'mimo_task', { operation: 'get' }],
    ]);
  });

  it('refuse a schema they cannot declare, naming the property', () => {
    const object = (property: Record<string, unknown>) => ({ type: 'object', properties: { x: property } });
    assert.throws(() => argsOf('t', object({ type: 'array', items: { type: 'string' } })), (e: unknown) => e instanceof ToolSchemaError && /t\.x: cannot declare items/.test(e.message));
    assert.throws(() => argsOf('t', object({ type: 'object' })), /t\.x: type "object" is not supported/);
    assert.throws(() => argsOf('t', object({ type: 'integer', enum: [1, 2] })), /t\.x: only a non-empty enum of strings/);
    assert.throws(() => argsOf('t', { type: 'string' }), /not an object with properties/);
  });
});
