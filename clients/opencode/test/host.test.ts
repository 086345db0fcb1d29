// The plugin's hooks against the real sidecar, with a stand-in for OpenCode (fake_opencode.ts):
// a session crossing the trigger line is rebuilt with a checkpoint written through OpenCode's own
// model call, the model gets the rebuilt view in OpenCode's shape, the model tools answer, a
// sidecar that dies is replaced and the session reopened with its boundary, OpenCode's own
// compaction and transient parts pass as they are, and without a sidecar nothing changes.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { MimoHost } from '../src/host.js';
import { openCodeLogger } from '../src/log.js';
import type { HostMessage } from '../src/messages.js';
import { readOptions } from '../src/options.js';
import type { SessionRecord } from '../src/store.js';
import { FakeOpenCode, SIDECAR, openCodeId } from './fake_opencode.js';

const LABEL = 'Summary of previous conversation from checkpoint files:';
const WRITER_LEAD = 'You are the checkpoint writer of this coding session.';
const CHECKPOINT = '# Session checkpoint\n\nTopic: the exporter\n\n## §1 Active intent\n- Fix the CSV export. HOST-TEST-CHECKPOINT\n';

function output(n: number): string {
  return `OUTPUT-${n}-HEAD\n${Array.from({ length: 300 }, (_, i) => `row ${n}.${i} = value`).join('\n')}\nOUTPUT-${n}-TAIL`;
}

function texts(messages: HostMessage[]): string {
  return JSON.stringify(messages);
}

function settings(root: string, extra: Record<string, unknown> = {}) {
  return readOptions({
    command: SIDECAR,
    memoryRoot: join(root, 'memory'),
    stateDir: join(root, 'state'),
    logFile: join(root, 'sidecar.log'),
    ...extra,
  }).settings;
}

describe('the plugin with a sidecar', () => {
  const root = mkdtempSync(join(tmpdir(), 'mimo-host-'));
  const oc = new FakeOpenCode((sent) => (JSON.stringify(sent.at(-1)).includes(WRITER_LEAD) ? CHECKPOINT : 'ok'));
  const host = new MimoHost(settings(root), oc, openCodeLogger(oc), 'prj_host');
  const sid = 'ses_hostTest0001';
  let tools: Awaited<ReturnType<MimoHost['start']>>;
  let rebuiltView: HostMessage[] = [];

  before(async () => {
    oc.transform = (messages) => host.transform(messages);
    tools = await host.start();
    const stored = [oc.user(sid, 'The CSV export drops rows; find out why.')];
    [10_000, 20_000, 36_000].forEach((used, k) => stored.push(oc.readStep(sid, `call_${k + 1}`, output(k + 1), used)));
    oc.sessions.set(sid, stored);
  });

  after(async () => host.dispose());

  it("offers the sidecar's model tools as OpenCode tools", () => {
    assert.deepEqual(Object.keys(tools).sort(), ['mimo_history', 'mimo_memory', 'mimo_task']);
  });

  it('rebuilds a session past the trigger line, the checkpoint written through OpenCode', async () => {
    const sent = structuredClone(oc.sessions.get(sid)!);
    const before = sent.length;
    await host.transform(sent);
    assert.equal(host.reports.get(sid)?.outcome, 'rebuilt', JSON.stringify(host.reports.get(sid)));

    // the writer: a child session, prompted with the instructions and no tools, its history in front
    assert.equal(oc.prompts.length, 1);
    const writer = oc.prompts[0]!;
    assert.deepEqual(writer.body.tools, { '*': false });
    assert.ok(JSON.stringify(writer.sent.at(-1)).includes(WRITER_LEAD), 'the instructions are the last message');
    assert.deepEqual(oc.deleted, [writer.sessionId], 'the writer session is deleted after');

    // what the model gets: the boundary (its label first), fewer messages, the removed history gone
    assert.equal(sent[0]!.parts[0]!.text, LABEL);
    assert.ok(texts(sent).includes('HOST-TEST-CHECKPOINT'));
    assert.ok(sent.length < before, `${sent.length} messages after, ${before} before`);
    assert.ok(!texts(sent).includes('OUTPUT-1-TAIL'));
    assert.ok(texts(sent).includes('OUTPUT-3-TAIL'), 'the newest step stays, its result in full');
    assert.ok(oc.toasts.includes('Preparing conversation context…'));
    assert.ok(oc.toasts.some((t) => t.startsWith('Context rebuilt')));
    rebuiltView = sent;

    // what the plugin stored: the boundary, its marks, the writer's watermark
    const record = JSON.parse(readFileSync(join(root, 'state', `${sid}.json`), 'utf8')) as SessionRecord;
    assert.equal(record.rebuilds.length, 1);
    assert.equal(record.rebuilds[0]!.boundary.parts[0]!.type, 'checkpoint');
    assert.ok(record.rebuilds[0]!.marks.length > 0, 'the rebuild cleared results');
    // the writer read the stored history up to the watermark it covers, in OpenCode's shape
    const ids = oc.sessions.get(sid)!.map((m) => m.info.id);
    assert.ok(record.watermark && ids.includes(record.watermark));
    assert.deepEqual(writer.sent.slice(0, -1).map((m) => m.info.id), ids.slice(0, ids.indexOf(record.watermark) + 1));
  });

  it('sends the same view at the next call, without a second rebuild', async () => {
    const sent = structuredClone(oc.sessions.get(sid)!);
    await host.transform(sent);
    assert.equal(host.reports.get(sid)?.outcome, undefined);
    assert.equal(oc.prompts.length, 1, 'no second writer');
    assert.deepEqual(sent, rebuiltView);
  });

  it('answers the model tools through the sidecar, mistakes as errors for the model', async () => {
    const answer = await host.callTool(sid, 'mimo_history', { operation: 'result', callID: 'call_1' });
    assert.equal(answer.isError, false);
    assert.ok(answer.text.includes('OUTPUT-1-HEAD') && answer.text.includes('OUTPUT-1-TAIL'));
    const context = { sessionID: sid } as Parameters<NonNullable<typeof tools.mimo_task>['execute']>[1];
    const listed = await tools.mimo_task!.execute({ operation: 'list' }, context);
    assert.equal(typeof listed, 'string');
    await assert.rejects(tools.mimo_history!.execute({ operation: 'result' } as never, context), /callID/);
  });

  it('keeps what OpenCode adds to one call only out of the sidecar, and in the view', async () => {
    const sent = structuredClone(oc.sessions.get(sid)!);
    const ask = sent[0]!;
    const reminder = { id: openCodeId('prt'), sessionID: sid, messageID: ask.info.id, type: 'text', text: 'PLAN-MODE-REMINDER', synthetic: true };
    ask.parts.push(reminder);
    await host.transform(sent);
    assert.deepEqual(sent.find((m) => m.info.role === 'user' && m.parts.some((p) => p.text === 'PLAN-MODE-REMINDER'))?.parts.at(-1), reminder);
    const search = await host.callTool(sid, 'mimo_history', { operation: 'search', query: 'PLAN-MODE-REMINDER' });
    assert.ok(!search.text.includes(reminder.id), search.text);
  });

  it('starts a new sidecar when the old one dies, and reopens the session with its boundary', async () => {
    const first = host.supervisor.current()!;
    // killed just before the call, before its exit is noticed: the call finds a broken connection,
    // gives it up and goes on with a new sidecar
    first.sidecar.process!.kill('SIGKILL');
    const sent = structuredClone(oc.sessions.get(sid)!);
    await host.transform(sent);
    assert.equal(host.supervisor.incarnation, first.incarnation + 1);
    assert.equal(host.reports.get(sid)?.managed, true);
    assert.deepEqual(sent, rebuiltView, 'the same rebuilt view, from the stored boundary');
  });

  it("lets OpenCode's own compaction call through, told the checkpoint", async () => {
    const output = { context: [] as string[] };
    await host.compacting(sid, output);
    assert.ok(output.context[0]?.includes('HOST-TEST-CHECKPOINT'));
    const sent = structuredClone(oc.sessions.get(sid)!);
    const asStored = structuredClone(sent);
    await host.transform(sent);
    assert.deepEqual(sent, asStored);
  });

  it('undoes the rebuild when OpenCode goes back before it (an undo)', async () => {
    const stored = oc.sessions.get(sid)!;
    const last = stored.pop()!; // the step that existed when the boundary was inserted
    await host.event({ type: 'message.removed', properties: { sessionID: sid, messageID: last.info.id } });
    const record = JSON.parse(readFileSync(join(root, 'state', `${sid}.json`), 'utf8')) as SessionRecord;
    assert.deepEqual(record.rebuilds, []);
    const sent = structuredClone(stored);
    await host.transform(sent);
    assert.equal(host.reports.get(sid)?.managed, true);
    assert.ok(!texts(sent).includes(LABEL), 'no boundary any more');
    assert.ok(texts(sent).includes('OUTPUT-1-TAIL') && texts(sent).includes('OUTPUT-2-TAIL'), 'the cleared results are back');
    const marked = sent.flatMap((m) => m.parts).filter((p) => (p.state as { time?: { compacted?: number } } | undefined)?.time?.compacted);
    assert.deepEqual(marked, []);
  });

  it('forgets a session OpenCode deleted', async () => {
    await host.event({ type: 'session.deleted', properties: { info: { id: sid } } });
    assert.equal(existsSync(join(root, 'state', `${sid}.json`)), false);
  });
});

describe('the plugin without a sidecar', () => {
  it('leaves every message as OpenCode made it, and offers no tools', async () => {
    const root = mkdtempSync(join(tmpdir(), 'mimo-host-'));
    const oc = new FakeOpenCode();
    const host = new MimoHost(settings(root, { command: [join(root, 'no-such-program')] }), oc, openCodeLogger(oc), undefined);
    assert.deepEqual(await host.start(), {});
    const sid = 'ses_hostTest0002';
    const sent = [oc.user(sid, 'hello'), oc.readStep(sid, 'call_1', output(1), 39_000)];
    const asMade = structuredClone(sent);
    await host.transform(sent);
    assert.deepEqual(sent, asMade);
    assert.equal(host.reports.get(sid)?.reason, 'no sidecar');
    assert.ok(oc.logs.some((l) => l.level === 'error' && l.message.includes('could not be started')));
    await host.dispose();
  });
});
