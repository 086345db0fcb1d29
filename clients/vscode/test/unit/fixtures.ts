// What the tests share: the sidecar of this repository, a memory root, and a small session in
// MiMo's inline shape whose last step crosses the trigger line of a 200 000-token window.

import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Message, OpenParams } from 'mimo-sidecar-client';
import { pythonModule } from '../../src/interpreter.js';
import type { LaunchSpec, Logger } from '../../src/supervisor.js';

// out/test/*.mjs -> the repository root
export const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
/** The Python with mimo-sidecar: $MIMO_SIDECAR_PYTHON, else the repository's .venv (`make venv`). */
export const python = process.env.MIMO_SIDECAR_PYTHON ?? join(repo, '.venv', 'bin', 'python');
if (!existsSync(python)) {
  throw new Error(`no Python with mimo-sidecar at ${python}: run \`make venv\` at the repository root, or set MIMO_SIDECAR_PYTHON`);
}

export const MODEL = { contextWindow: 200_000, providerId: 'anthropic', modelId: 'claude-sonnet-4' };

export function memoryRoot(): string {
  return mkdtempSync(join(tmpdir(), 'mimo-vscode-test-'));
}

export interface Captured extends Logger {
  lines: { level: 'info' | 'warn' | 'error' | 'sidecar'; text: string }[];
  text(level?: string): string;
}

export function capture(): Captured {
  const lines: Captured['lines'] = [];
  return {
    lines,
    info: (text) => lines.push({ level: 'info', text }),
    warn: (text) => lines.push({ level: 'warn', text }),
    error: (text) => lines.push({ level: 'error', text }),
    sidecar: (text) => lines.push({ level: 'sidecar', text }),
    text: (level) => lines.filter((l) => !level || l.level === level).map((l) => l.text).join('\n'),
  };
}

export function spec(root: string, extra: Partial<LaunchSpec> = {}): LaunchSpec {
  return { command: pythonModule(python), version: 'test', memoryRoot: root, config: {}, logLevel: 'INFO', ...extra };
}

let counter = 0;
/** A MiMo v2 message ID: ascending with creation. */
function messageId(): string {
  counter += 1;
  return `msg_g0199${(0x1000000000 + counter).toString(16).padStart(11, '0')}VsCodeExt`;
}

const source = Array.from({ length: 400 }, (_, i) => `export const value${i} = compute(${i});`).join('\n');

/** A user ask and six `read` steps; the last one's usage (185 005 tokens) is over the 180 000 line. */
export function session(sessionId: string): OpenParams {
  const messages: Message[] = [];
  const at = (k: number) => 1_760_000_000_000 + k * 1000;
  const add = (role: 'user' | 'assistant', parts: Record<string, unknown>[], extra: Record<string, unknown> = {}) => {
    const id = messageId();
    messages.push({
      info: { id, sessionID: sessionId, role, time: { created: at(messages.length) }, ...extra },
      parts: parts.map((p, i) => ({ id: `prt_${id.slice(-14)}${i}`, sessionID: sessionId, messageID: id, ...p })) as unknown as Message['parts'],
    });
  };
  add('user', [{ type: 'text', text: 'Make the CSV export keep the header row.' }]);
  for (let k = 0; k < 6; k += 1) {
    add(
      'assistant',
      [
        { type: 'text', text: `Reading part ${k} of the exporter.` },
        {
          type: 'tool',
          callID: `call_${sessionId}_${k}`,
          tool: 'read',
          state: { status: 'completed', input: { filePath: `src/export${k}.ts` }, output: source, title: 'read', metadata: {}, time: { start: at(k) + 10, end: at(k) + 20 } },
        },
      ],
      { finish: 'tool-calls', providerID: 'anthropic', modelID: 'claude-sonnet-4', tokens: { input: 185_000 + k, output: 100, reasoning: 0, cache: { read: 0, write: 0 } } },
    );
  }
  add('user', [{ type: 'text', text: 'Keep going: the header row first, then the rows.' }]);
  return { sessionId, messages, createCheckpoint: true };
}

export const CHECKPOINT = '# Session checkpoint\n\nTopic: the CSV header row\n\n## §1 Active intent\n- Keep the header row in the CSV export.\n';

export function waitFor<T>(register: (resolve: (value: T) => void) => void, ms = 20_000, what = 'an event'): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
    register((value) => {
      clearTimeout(timer);
      resolve(value);
    });
  });
}
