// A stand-in checkpoint writer: fills the checkpoint.md template from the conversation, without a
// model. Demo aid only: a real host sends `checkpoint/prepare`'s messages to its model and commits
// the reply (see the README, "A real model in the writer's place").
//
// A small, deterministic port of the Python stand-in (mimo_sidecar/testing/standin_writer.py), with
// fewer rules. It reads a prepared writer request in the AI SDK format (the default) and:
//
// - takes the template from the instructions (the text between <checkpoint-template> tags), so the
//   headings and their italic lines are exactly the sidecar's;
// - Topic: the first user ask (first line);
// - §1 Active intent: the latest user ask, and the first one when they differ;
// - §3 Work in flight: the newest assistant text and the last three tool calls;
// - §4 Constraints and preferences: user sentences with a rule word (don't, never, always, must...);
// - §6 Errors seen: tool calls whose result is an error, or whose output has an error-looking line;
// - §8 Files touched: the paths of edit/write/patch calls;
// - §10 Since the last checkpoint: counts and the user asks.
//
// Unlike a model (and the Python stand-in) it rewrites the file from the template every time
// instead of updating the current one. The same messages give the same bytes.

const INSTRUCTIONS_LEAD = 'You are the checkpoint writer of this coding session.';
const BOUNDARY_LABELS = ['Summary of previous conversation from checkpoint files:', 'Summary of the previous conversation (compacted):'];
const TEMPLATE = /<checkpoint-template>\n([\s\S]*?)\n<\/checkpoint-template>/;
const RULE_CUE = /\b(don't|do not|never|always|must|prefer|avoid)\b/i;
const ERROR_LINE = /^\s*(?:error\b|\w*Error\b|Traceback|FAIL\b|✗)|\b[1-9]\d* (?:fail|failed|failing)\b/i;
const WRITE_TOOLS = new Set(['edit', 'write', 'patch', 'multiedit', 'apply_patch', 'str_replace']);
const ARG_KEYS = ['command', 'filePath', 'file_path', 'path', 'pattern', 'url', 'query'];

const fold = (text, max) => {
  const one = String(text).replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
};
const quote = (text, max = 300) => `“${fold(text, max)}”`;

function blocks(message) {
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  return Array.isArray(message.content) ? message.content : [];
}

// The conversation as asks, assistant texts and tool calls (with their results), in order.
function read(messages) {
  const asks = [];
  const said = [];
  const calls = [];
  const byId = new Map();
  for (const message of messages) {
    if (message.role === 'user') {
      const texts = blocks(message).filter((b) => b.type === 'text').map((b) => b.text);
      if (texts.some((t) => BOUNDARY_LABELS.some((label) => t.startsWith(label)))) continue;
      const ask = texts.find((t) => t.trim() && !t.startsWith(INSTRUCTIONS_LEAD));
      if (ask) asks.push(ask.trim());
    } else if (message.role === 'assistant') {
      for (const b of blocks(message)) {
        if (b.type === 'text' && b.text.trim()) said.push(b.text.trim());
        if (b.type === 'tool-call') {
          const call = { name: b.toolName, input: b.input ?? {}, error: null, output: '' };
          calls.push(call);
          byId.set(b.toolCallId, call);
        }
      }
    } else if (message.role === 'tool') {
      for (const b of blocks(message)) {
        const call = b.type === 'tool-result' ? byId.get(b.toolCallId) : undefined;
        if (!call) continue;
        const out = b.output ?? {};
        const value = Array.isArray(out.value)
          ? out.value.filter((v) => typeof v.text === 'string').map((v) => v.text).join('\n')
          : String(out.value ?? '');
        if (out.type === 'error-text') call.error = value;
        else call.output = value;
      }
    }
  }
  return { asks, said, calls };
}

function summary(call) {
  const key = ARG_KEYS.find((k) => typeof call.input[k] === 'string' && call.input[k]);
  return key ? `${call.name} \`${fold(call.input[key], 100)}\`` : call.name;
}

function errorOf(call) {
  if (call.error !== null) return fold(call.error, 200);
  const line = call.output.split('\n').find((l) => ERROR_LINE.test(l));
  return line ? fold(line, 200) : null;
}

function sections({ asks, said, calls }) {
  const bodies = {};
  if (asks.length) {
    bodies[1] = [`- Latest ask: ${quote(asks.at(-1))}`];
    if (asks.length > 1) bodies[1].push(`- The session began with: ${quote(asks[0])}`);
  }
  bodies[3] = [
    ...(said.length ? [`- Last said: ${quote(said.at(-1))}`] : []),
    ...calls.slice(-3).map((c) => `- Ran: ${summary(c)}${errorOf(c) ? ` → ${errorOf(c)}` : ''}`),
  ];
  const sentences = asks.flatMap((a) => a.split(/(?<=[.!?])\s+|\n+/));
  bodies[4] = [...new Set(sentences.filter((s) => RULE_CUE.test(s)).map((s) => `- ${fold(s, 240)}`))];
  bodies[6] = calls.filter(errorOf).map((c) => `- ${summary(c)}: ${errorOf(c)}`);
  const files = new Map();
  for (const c of calls) {
    const path = c.input.filePath ?? c.input.file_path ?? c.input.path;
    if (WRITE_TOOLS.has(c.name) && typeof path === 'string' && c.error === null) files.set(path, (files.get(path) ?? 0) + 1);
  }
  bodies[8] = [...files].map(([path, n]) => `- \`${path}\`: changed ${n}×`);
  const failed = calls.filter(errorOf).length;
  bodies[10] = [
    `- ${asks.length} user message(s), ${calls.length} tool call(s), ${failed} of them failed or reported errors.`,
    ...asks.slice(-6).map((a) => `- User: ${quote(a, 200)}`),
  ];
  return bodies;
}

// The new checkpoint.md for a prepared writer request (`checkpoint/prepare`'s result).
export function standinCheckpoint(prepared) {
  const template = TEMPLATE.exec(prepared.instructions)?.[1];
  if (!template) throw new Error('the instructions carry no <checkpoint-template> block');
  const conversation = read(prepared.messages);
  const topic = conversation.asks.length ? fold(conversation.asks[0].split('\n')[0], 120) : '(no user request yet)';
  const bodies = sections(conversation);
  const out = [];
  let number = null;
  for (const line of template.split('\n')) {
    const heading = /^## §(\d+)\b/.exec(line);
    if (heading) number = Number(heading[1]);
    if (line.startsWith('Topic:')) {
      out.push(`Topic: ${topic}`);
    } else if (number !== null && line.startsWith('_') && line.endsWith('_')) {
      out.push(line, ...(bodies[number] ?? [])); // the section's italic line, then its body
    } else {
      out.push(line);
    }
  }
  return out.join('\n');
}
