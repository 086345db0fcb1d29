// A fake OpenAI-compatible model server on loopback, for the end-to-end test: OpenCode's
// `@ai-sdk/openai-compatible` provider streams `POST /v1/chat/completions` from it.
//
// Every request body it receives is kept (and, with `logPath`, appended to that file as one JSON
// line): it is exactly what the model would read, so the test judges the plugin from it alone.
// Its answers come from a script the test writes: text, or tool calls, streamed as server-sent
// events, then a last chunk with the usage, counted the way a provider counts: every character of
// the request it was sent, four to a token.

import { appendFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: string | { type: string; text?: string }[] | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  tools?: { type: 'function'; function: { name: string; description?: string; parameters?: unknown } }[];
  stream?: boolean;
}

export type Reply = { text: string } | { calls: { id: string; name: string; args: Record<string, unknown> }[] };

/** The answer to one request; `index` counts the requests from 0. */
export type Script = (request: ChatRequest, index: number) => Reply | Promise<Reply>;

/** The text of a message's content, whatever its shape. */
export function textOf(message: ChatMessage | undefined): string {
  if (!message?.content) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => part.text ?? '').join('\n');
}

/** Prompt tokens as the fake provider counts them: every character of the request, four a token. */
export function promptTokens(request: ChatRequest): number {
  return Math.ceil(JSON.stringify({ messages: request.messages, tools: request.tools ?? [] }).length / 4);
}

export class FakeModel {
  readonly requests: ChatRequest[] = [];
  private server: Server | undefined;

  constructor(
    private readonly script: Script,
    private readonly logPath?: string,
  ) {}

  /** Listen on 127.0.0.1 (a free port); the base URL for OpenCode's provider config. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      this.serve(req, res).catch((error) => {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end(`no route ${req.method} ${req.url}`);
      return;
    }
    const request = JSON.parse(body) as ChatRequest;
    const index = this.requests.length;
    this.requests.push(request);
    if (this.logPath) appendFileSync(this.logPath, `${JSON.stringify(request)}\n`);
    const reply = await this.script(request, index);

    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const base = { id: `chatcmpl-${index}`, object: 'chat.completion.chunk', created: 1_760_000_000 + index, model: request.model };
    const send = (chunk: unknown) => res.write(`data: ${JSON.stringify(chunk)}\n\n`);
    if ('text' in reply) {
      send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: reply.text }, finish_reason: null }] });
      send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    } else {
      const calls = reply.calls.map((call, i) => ({
        index: i,
        id: call.id,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.args) },
      }));
      send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', tool_calls: calls }, finish_reason: null }] });
      send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
    }
    const prompt = promptTokens(request);
    send({ ...base, choices: [], usage: { prompt_tokens: prompt, completion_tokens: 40, total_tokens: prompt + 40 } });
    res.write('data: [DONE]\n\n');
    res.end();
  }
}
