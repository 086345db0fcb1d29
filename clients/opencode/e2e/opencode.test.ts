// End to end: the plugin in the real `opencode` binary, judged from what the model received.
//
// The fake model plays a coding agent reading six large files one step at a time, in a session
// whose model has a small window (40,000 tokens, 2,000 out: OpenCode's own compaction line is
// 38,000, and the plugin passes the sidecar `trigger_ratio: 75%` of it, 28,500). The trigger line
// is crossed after the fifth read; then, from the fake server's request log alone:
//   - the checkpoint writer ran as a model call through OpenCode (its request holds the history
//     and the writer's instructions, and no tools), and its reply is the checkpoint the model reads;
//   - the request after the rebuild carries the boundary, holds fewer messages and fewer tokens
//     than the one before, still holds the user's ask, holds none of the removed history, offers
//     the sidecar's model tools, and names no tool it does not offer;
//   - the fake model's `mimo_history` call for the first read is answered with that read's whole
//     result, which the rebuild had taken out of view.
// Then a second `opencode run` continues the session (a new process: a new sidecar, opened from
// OpenCode's storage and the plugin's stored boundary) and the test kills the sidecar in the middle
// of the turn: OpenCode goes on, the plugin starts another sidecar and the next request is the
// rebuilt view again. Last, a sidecar that cannot start leaves OpenCode working, unmanaged.
//
// `make opencode-e2e` runs it; with OPENCODE_E2E_LOG set, every request body the fake server
// received is written there, one JSON object a line.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { FakeModel, promptTokens, textOf, type ChatRequest, type Reply } from './fake_model.js';
import { childrenWith, makeWorld, opencodeRun, sidecarPython, type World } from './harness.js';

const LABEL = 'Summary of previous conversation from checkpoint files:';
const WRITER_LEAD = 'You are the checkpoint writer of this coding session.';
const CHECKPOINT_MARK = 'CHECKPOINT-FROM-THE-FAKE-WRITER';
const FIRST_ASK = 'Read part1.txt to part6.txt one after another, then tell me the marker of the first one.';
const SECOND_ASK = 'Now read part7.txt as well and say when it is done.';
const PARTS = 7;
const LIMIT = { context: 40_000, output: 2_000 };

function marker(n: number): string {
  return `PART-${n}-MARKER-${(n * 7919).toString(36).toUpperCase()}`;
}

/** About 6,000 tokens once OpenCode's read tool has numbered the lines. */
function partFile(n: number): string {
  const lines = [marker(n)];
  for (let i = 1; i < 420; i++) lines.push(`part ${n} line ${i}: ${'lorem ipsum '.repeat(4)}`);
  lines.push(`END-OF-PART-${n}`);
  return `${lines.join('\n')}\n`;
}

const checkpoint = [
  '# Session checkpoint',
  '',
  'Topic: reading the part files',
  '',
  '## §1 Active intent',
  `- Read part1.txt to part6.txt and report the first marker. ${CHECKPOINT_MARK}`,
  '',
].join('\n');

interface Roles {
  writer: ChatRequest[];
  main: { index: number; request: ChatRequest }[];
}

function isWriter(request: ChatRequest): boolean {
  return textOf(request.messages.at(-1)).includes(WRITER_LEAD);
}

/** OpenCode's own compaction call: the conversation as text in <conversation> tags, and a summary asked for. */
function isOpenCodeSummary(request: ChatRequest): boolean {
  const last = textOf(request.messages.at(-1));
  return last.includes('<conversation>') && /anchored summary|<prior-summary>/.test(last);
}

function roles(requests: ChatRequest[]): Roles {
  const out: Roles = { writer: [], main: [] };
  requests.forEach((request, index) => {
    if (isWriter(request)) out.writer.push(request);
    else out.main.push({ index, request });
  });
  return out;
}

function allText(request: ChatRequest): string {
  return request.messages.map((m) => `${textOf(m)}\n${JSON.stringify(m.tool_calls ?? [])}`).join('\n');
}

function toolNames(request: ChatRequest): string[] {
  return (request.tools ?? []).map((t) => t.function.name);
}

let root: string;
let baseURL: string;
let world: World;
let model: FakeModel;
let project: string;
let killHook: ((index: number) => void) | undefined;
const historyCall = { id: 'call_history_1', asked: false };
let reads = 0;

/** The agent the fake model plays (see the file's head). */
function agent(request: ChatRequest, index: number): Reply {
  killHook?.(index);
  const last = request.messages.at(-1);
  if (isWriter(request)) return { text: checkpoint };
  if (isOpenCodeSummary(request)) return { text: 'A summary of the conversation so far.' };
  if (last?.role === 'tool' && last.tool_call_id === historyCall.id) {
    return { text: `The first marker is ${textOf(last).match(/PART-1-MARKER-\w+/)?.[0] ?? 'not found'}.` };
  }
  if (!historyCall.asked && allText(request).includes(LABEL)) {
    historyCall.asked = true;
    return { calls: [{ id: historyCall.id, name: 'mimo_history', args: { operation: 'result', callID: 'call_read_1' } }] };
  }
  // The first ask reads six parts (the rebuild comes first), the second one more each.
  const lastUser = [...request.messages].reverse().find((m) => m.role === 'user');
  const wanted = textOf(lastUser).includes(SECOND_ASK) ? PARTS : 6;
  if (reads < wanted) {
    reads++;
    return { calls: [{ id: `call_read_${reads}`, name: 'read', args: { filePath: join(project, `part${reads}.txt`) } }] };
  }
  return { text: `Done reading ${reads} parts.` };
}

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'mimo-opencode-e2e-'));
  const log = process.env.OPENCODE_E2E_LOG;
  if (log) writeFileSync(log, '');
  model = new FakeModel(agent, log);
  baseURL = await model.start();
  world = makeWorld(root, baseURL, LIMIT, {
    command: [sidecarPython(), '-m', 'mimo_sidecar'],
    config: { compaction: { trigger_ratio: '75%' } },
  });
  project = world.project;
  for (let n = 1; n <= PARTS; n++) writeFileSync(join(project, `part${n}.txt`), partFile(n));
});

after(async () => {
  await model?.stop();
  if (root && !process.env.OPENCODE_E2E_KEEP) rmSync(root, { recursive: true, force: true });
});

test('a session crosses the trigger line: the model gets the rebuilt view, and its history tool works', async () => {
  const run = await opencodeRun(world, FIRST_ASK, ['--title', 'e2e session']);
  assert.equal(run.code, 0, `opencode run failed:\n${run.stderr.slice(-4000)}`);
  assert.match(run.stdout, /The first marker is PART-1-MARKER-\w+\./, run.stdout);

  const { writer, main } = roles(model.requests);
  assert.ok(!model.requests.some(isOpenCodeSummary), "OpenCode's own compaction never ran: one summary, the sidecar's");
  const rebuiltAt = main.findIndex(({ request }) => allText(request).includes(LABEL));
  assert.ok(rebuiltAt > 0, `no request after a rebuild (${main.length} main requests)`);
  const beforeRebuild = main[rebuiltAt - 1]!.request;
  const afterRebuild = main[rebuiltAt]!.request;

  // The checkpoint writer: one model call through OpenCode, between the two, with no tools: the
  // history up to the watermark (the first read's result included), its instructions last.
  assert.equal(writer.length, 1, 'one checkpoint writer call');
  const writerRequest = writer[0]!;
  assert.ok(model.requests.indexOf(writerRequest) < main[rebuiltAt]!.index);
  assert.deepEqual(toolNames(writerRequest), []);
  assert.ok(allText(writerRequest).includes(FIRST_ASK), 'the writer reads the conversation');
  assert.ok(textOf(writerRequest.messages.at(-1)).includes(WRITER_LEAD));

  // The request after the rebuild: the boundary with the writer's checkpoint, shorter than the one
  // before, the user's ask kept, the removed history gone.
  const text = allText(afterRebuild);
  assert.ok(text.includes(CHECKPOINT_MARK), "the boundary carries the writer's checkpoint");
  assert.ok(afterRebuild.messages.length < beforeRebuild.messages.length,
    `${afterRebuild.messages.length} messages after the rebuild, ${beforeRebuild.messages.length} before`);
  assert.ok(promptTokens(afterRebuild) < promptTokens(beforeRebuild));
  assert.ok(text.includes(FIRST_ASK), "the user's ask is in the rebuilt request");
  assert.ok(allText(beforeRebuild).includes(marker(1)) && !text.includes(marker(1)), 'the first read is out of view');
  assert.ok(!text.includes(`${marker(2)}\n`), 'the second read is out of view');

  // The model tools are offered, and every tool the request's texts name is one it offers.
  const offered = toolNames(afterRebuild);
  for (const name of ['mimo_history', 'mimo_memory', 'mimo_task']) assert.ok(offered.includes(name), `${name} offered`);
  const named = new Set([...text.matchAll(/\bmimo_[a-z]+\b/g)].map((m) => m[0]));
  assert.ok(named.size > 0, 'the rebuilt text points at the model tools');
  for (const name of named) assert.ok(offered.includes(name), `the text names ${name}, which the request does not offer`);

  // The history tool answers the call with the first read's whole result.
  const answered = main.find(({ request }) => request.messages.some((m) => m.role === 'tool' && m.tool_call_id === historyCall.id));
  assert.ok(answered, 'the mimo_history call was answered');
  const result = answered!.request.messages.find((m) => m.role === 'tool' && m.tool_call_id === historyCall.id)!;
  assert.ok(textOf(result).includes(marker(1)), 'the answer holds the removed result');
  assert.ok(textOf(result).includes('part 1 line 40:'), 'the answer holds more of it than its head');

  // Where OpenCode shows progress: the sidecar's status, and the rebuild, in OpenCode's log.
  assert.match(run.stderr, /mimo-sidecar: ses_\w+: Preparing conversation context…/);
  assert.match(run.stderr, /mimo-sidecar: ses_\w+: context rebuilt/);
});

test('the next run continues the rebuilt session, and survives the sidecar being killed mid-turn', async () => {
  const first = model.requests.length;
  let killed: number[] = [];
  let readAtKill = 0;
  const running = opencodeRun(world, SECOND_ASK, ['--continue']);
  // While the fake model answers the turn's first request, the sidecar is killed: the answer (a
  // read) goes on, and the request after it is the first the plugin builds without that sidecar.
  killHook = (index) => {
    if (index !== first || killed.length) return;
    killed = childrenWith(running.pid, 'mimo_sidecar');
    for (const pid of killed) process.kill(pid, 'SIGKILL');
    readAtKill = reads + 1;
  };
  const run = await running;
  killHook = undefined;
  assert.equal(run.code, 0, `opencode run failed:\n${run.stderr.slice(-4000)}`);
  assert.equal(killed.length, 1, 'one sidecar was running under opencode, and was killed');
  assert.match(run.stdout, /Done reading 7 parts\./);

  const requests = model.requests.slice(first);
  assert.ok(!requests.some(isOpenCodeSummary), "OpenCode's own compaction never ran");
  // The first request of the new process: the session opened from storage with its boundary.
  assert.ok(allText(requests[0]!).includes(LABEL), 'the new process sends the rebuilt view');
  assert.ok(allText(requests[0]!).includes(SECOND_ASK));
  assert.ok(!allText(requests[0]!).includes(`${marker(2)}\n`), 'the removed history stays removed');
  // The request after the kill: a new sidecar, the session opened again, the rebuilt view again.
  const afterKill = requests[1]!;
  assert.ok(allText(afterKill).includes(LABEL), 'the rebuilt view again after the restart');
  assert.ok(allText(afterKill).includes(marker(readAtKill)), 'the read answered across the kill is in it');
  assert.match(run.stderr, new RegExp(`mimo-sidecar: the sidecar \\(pid ${killed[0]}\\) is gone`));
  assert.match(run.stderr, /mimo-sidecar: sidecar started \(pid \d+, incarnation 2\)/);
  const state = join(world.dataDir, 'mimo-sidecar', 'sessions');
  assert.ok(existsSync(state), 'the plugin stored the boundary');
});

test('a sidecar that cannot start leaves OpenCode working, with its own history', async () => {
  const broken = makeWorld(join(root, 'broken'), baseURL, LIMIT, { command: [join(root, 'no-such-sidecar')] });
  writeFileSync(join(broken.project, 'part6.txt'), partFile(6));
  const first = model.requests.length;
  project = broken.project;
  reads = 5; // the fake model reads part6.txt, then answers
  const run = await opencodeRun(broken, 'Read part6.txt, please.', ['--title', 'unmanaged']);
  assert.equal(run.code, 0, `opencode run failed:\n${run.stderr.slice(-4000)}`);
  const requests = model.requests.slice(first);
  assert.ok(requests.length >= 2);
  for (const request of requests) {
    assert.ok(!allText(request).includes(LABEL));
    assert.ok(!toolNames(request).some((name) => name.startsWith('mimo_')), 'no model tools without a sidecar');
  }
  assert.match(run.stderr, /mimo-sidecar: the sidecar could not be started/);
});
