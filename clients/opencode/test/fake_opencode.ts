// A stand-in for the part of OpenCode the plugin talks to, for the unit tests of its own logic
// (the end-to-end test, e2e/, runs the real binary): sessions stored in memory with OpenCode's
// message shape and ID scheme, and a `session.prompt` that does what OpenCode's loop does with a
// prompt: it makes the prompt a user message, lets the plugin's transform hook rewrite the
// messages, and answers from a model the test gives (seeing what the hook handed over).

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HostMessage, HostPart } from '../src/messages.js';
import type { OpenCodeModel } from '../src/limits.js';
import type { Answer, OpenCodeApi, PromptBody } from '../src/opencode_api.js';

export const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
export const PYTHON = process.env.MIMO_SIDECAR_PYTHON ?? join(REPO, '.venv', 'bin', 'python');
export const SIDECAR = [PYTHON, '-m', 'mimo_sidecar'];

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
let counter = 0;
let lastMs = 0;

/** An ID in OpenCode's scheme (the sidecar's legacy v1): ascending with the clock. */
export function openCodeId(prefix: 'msg' | 'prt' | 'ses', ms = Date.now()): string {
  counter = ms === lastMs ? counter + 1 : 0;
  lastMs = ms;
  const n = (BigInt(ms) * 4096n + BigInt(counter)) & 0xffff_ffff_ffffn;
  let tail = '';
  for (let i = 0; i < 14; i++) tail += ALPHABET[Math.floor(Math.random() * ALPHABET.length)];
  return `${prefix}_${n.toString(16).padStart(12, '0')}${tail}`;
}

export const MODEL: OpenCodeModel = { id: 'm1', providerID: 'fake', limit: { context: 40_000, output: 2_000 } };

export type Model = (messages: HostMessage[], body: PromptBody) => string;

export class FakeOpenCode implements OpenCodeApi {
  readonly sessions = new Map<string, HostMessage[]>();
  readonly toasts: string[] = [];
  readonly logs: { level: string; message: string }[] = [];
  readonly prompts: { sessionId: string; body: PromptBody; sent: HostMessage[] }[] = [];
  readonly deleted: string[] = [];
  /** The plugin's transform hook, called as OpenCode calls it before a model call. */
  transform: (messages: HostMessage[]) => Promise<void> = async () => undefined;

  // Message times a second apart, in the recent past (IDs minted from them stay behind the real
  // clock, from which the sidecar mints a boundary's ID, as OpenCode's own are).
  private clock = Date.now() - 600_000;

  constructor(private readonly model: Model = () => 'a reply') {}

  tick(): number {
    this.clock = Math.min(this.clock + 1000, Date.now());
    return this.clock;
  }

  app = {
    log: async (options: { body: { level: string; message: string } }) => {
      this.logs.push({ level: options.body.level, message: options.body.message });
      return true;
    },
  };

  tui = {
    showToast: async (options: { body: { message: string } }) => {
      this.toasts.push(options.body.message);
      return true;
    },
  };

  config = {
    providers: async (): Promise<Answer<{ providers: { id: string; models: Record<string, OpenCodeModel> }[] }>> => ({
      data: { providers: [{ id: MODEL.providerID, models: { [MODEL.id]: MODEL } }] },
    }),
  };

  session = {
    messages: async (options: { path: { id: string } }): Promise<Answer<HostMessage[]>> => {
      const stored = this.sessions.get(options.path.id);
      return stored ? { data: structuredClone(stored) } : { error: { name: 'NotFound' } };
    },
    message: async (options: { path: { id: string; messageID: string } }): Promise<Answer<HostMessage>> => {
      const found = this.sessions.get(options.path.id)?.find((m) => m.info.id === options.path.messageID);
      return found ? { data: structuredClone(found) } : { error: { name: 'NotFound' } };
    },
    create: async (options: { body: { parentID?: string } }): Promise<Answer<{ id: string }>> => {
      const id = openCodeId('ses');
      this.sessions.set(id, []);
      return { data: { id, ...(options.body.parentID ? { parentID: options.body.parentID } : {}) } };
    },
    prompt: async (options: { path: { id: string }; body: PromptBody }) => {
      const sessionId = options.path.id;
      const stored = this.sessions.get(sessionId)!;
      stored.push(this.user(sessionId, options.body.parts[0]!.text));
      const sent = structuredClone(stored);
      await this.transform(sent);
      this.prompts.push({ sessionId, body: options.body, sent });
      const reply = this.assistant(sessionId, [{ type: 'text', text: this.model(sent, options.body) }], 'stop', 100);
      stored.push(reply);
      return { data: structuredClone(reply) } as Answer<{ info: HostMessage['info']; parts: HostPart[] }>;
    },
    delete: async (options: { path: { id: string } }): Promise<Answer<boolean>> => {
      this.deleted.push(options.path.id);
      return { data: this.sessions.delete(options.path.id) };
    },
  };

  // -- building sessions -------------------------------------------------------------------------
  user(sessionId: string, text: string, extraParts: Partial<HostPart>[] = []): HostMessage {
    const at = this.tick();
    const id = openCodeId('msg', at);
    return {
      info: { id, sessionID: sessionId, role: 'user', time: { created: at }, agent: 'build', model: { providerID: MODEL.providerID, modelID: MODEL.id } },
      parts: [{ id: openCodeId('prt', at), sessionID: sessionId, messageID: id, type: 'text', text }, ...extraParts.map((p) => ({ id: openCodeId('prt', at), sessionID: sessionId, messageID: id, type: 'text', ...p }))],
    };
  }

  assistant(sessionId: string, parts: Partial<HostPart>[], finish: string, used: number): HostMessage {
    const now = this.tick();
    const id = openCodeId('msg', now);
    return {
      info: {
        id, sessionID: sessionId, role: 'assistant', time: { created: now, completed: now }, providerID: MODEL.providerID, modelID: MODEL.id,
        mode: 'build', finish, cost: 0, tokens: { input: used, output: 40, reasoning: 0, cache: { read: 0, write: 0 } },
      },
      parts: parts.map((p) => ({ id: openCodeId('prt', now), sessionID: sessionId, messageID: id, type: 'text', ...p }) as HostPart),
    };
  }

  /** One step that read a file: its call and its result in one inline tool part. */
  readStep(sessionId: string, callID: string, output: string, used: number): HostMessage {
    const now = this.clock;
    return this.assistant(sessionId, [{
      type: 'tool', callID, tool: 'read',
      state: { status: 'completed', input: { filePath: `/p/${callID}.txt` }, output, title: callID, metadata: {}, time: { start: now, end: now } },
    }], 'tool-calls', used);
  }
}
