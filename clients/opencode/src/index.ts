// mimo-sidecar for OpenCode: the plugin OpenCode loads (named in opencode.json's "plugin" list).
// It starts the sidecar once per OpenCode process and manages every session's context with it:
// see host.ts for what each hook does, and README.md for the install and the settings.

import { dirname, join } from 'node:path';
import type { Hooks, Plugin } from '@opencode-ai/plugin';
import { MimoHost } from './host.js';
import { describe, openCodeLogger } from './log.js';
import type { OpenCodeModel } from './limits.js';
import type { HostMessage } from './messages.js';
import type { OpenCodeApi } from './opencode_api.js';
import { readOptions } from './options.js';

const plugin: Plugin = async (input, options) => {
  const client = input.client as unknown as OpenCodeApi;
  let read;
  try {
    read = readOptions(options);
  } catch (error) {
    openCodeLogger(client).log('error', `${describe(error)}; the plugin is off`);
    return {};
  }
  const settings = read.settings;
  const log = openCodeLogger(client, join(dirname(settings.logFile), 'plugin.log'));
  for (const warning of read.warnings) log.log('warn', warning);
  const host = new MimoHost(settings, client, log, input.project?.id);
  const tools = await host.start();
  const hooks: Hooks = {
    tool: tools,
    config: async (config) => host.configured(config as { compaction?: { auto?: boolean; reserved?: number } }),
    'chat.params': async (call) => host.modelSeen(call.model as unknown as OpenCodeModel),
    'experimental.chat.messages.transform': async (_input, output) => {
      await host.transform(output.messages as unknown as HostMessage[]);
    },
    'experimental.session.compacting': async (call, output) => host.compacting(call.sessionID, output),
    event: async ({ event }) => host.event(event as unknown as { type: string; properties: Record<string, unknown> }),
    dispose: async () => host.dispose(),
  };
  return hooks;
};

export default plugin;
