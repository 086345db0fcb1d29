// The part of OpenCode's client (the SDK client a plugin receives) that the plugin uses, typed by
// what it reads. The real client is far larger; the unit tests give a small one of their own.

import type { LogApi } from './log.js';
import type { HostMessage, HostPart } from './messages.js';
import type { OpenCodeModel } from './limits.js';

export interface Answer<T> {
  data?: T;
  error?: unknown;
}

export interface PromptBody {
  parts: { type: 'text'; text: string }[];
  tools?: Record<string, boolean>;
  model?: { providerID: string; modelID: string };
  agent?: string;
}

export interface OpenCodeApi extends LogApi {
  session: {
    messages(options: { path: { id: string } }): Promise<Answer<HostMessage[]>>;
    message(options: { path: { id: string; messageID: string } }): Promise<Answer<HostMessage>>;
    create(options: { body: { parentID?: string; title?: string } }): Promise<Answer<{ id: string }>>;
    prompt(options: { path: { id: string }; body: PromptBody }): Promise<Answer<{ info: HostMessage['info']; parts: HostPart[] }>>;
    delete(options: { path: { id: string } }): Promise<Answer<boolean>>;
  };
  config: {
    providers(): Promise<Answer<{ providers: { id: string; models: Record<string, OpenCodeModel> }[] }>>;
  };
  tui: {
    showToast(options: {
      body: { title?: string; message: string; variant: 'info' | 'success' | 'warning' | 'error'; duration?: number };
    }): Promise<unknown>;
  };
}

/** The data of an answer, or an error naming what failed. */
export function dataOf<T>(answer: Answer<T>, what: string): T {
  if (answer.error !== undefined || answer.data === undefined) {
    const detail = answer.error === undefined ? 'no data' : JSON.stringify(answer.error);
    throw new Error(`${what} failed: ${detail}`);
  }
  return answer.data;
}
