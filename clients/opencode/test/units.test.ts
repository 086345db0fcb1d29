// The plugin's pure parts: its options, OpenCode's compaction line, the session mirror's sync
// batches, the transient parts of a call, the state store.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openCodeLine, sidecarLimits } from '../src/limits.js';
import { withMarks, markMap, type HostMessage } from '../src/messages.js';
import { Mirror } from '../src/mirror.js';
import { OptionsError, readOptions } from '../src/options.js';
import { emptyRecord, StateStore } from '../src/store.js';
import { unsentParts, withoutTransient, withTransient } from '../src/view.js';
import { FakeOpenCode, openCodeId } from './fake_opencode.js';

describe('options', () => {
  const env = { XDG_DATA_HOME: '/data', HOME: '/home/u' };

  it('has defaults under OpenCode data directory, and the sidecar command on PATH', () => {
    const { settings, warnings } = readOptions(undefined, env);
    assert.deepEqual(settings.command, ['mimo-sidecar']);
    assert.equal(settings.memoryRoot, '/data/opencode/mimo-sidecar/memory');
    assert.equal(settings.stateDir, '/data/opencode/mimo-sidecar/sessions');
    assert.equal(settings.toolPrefix, 'mimo_');
    assert.equal(settings.writer.enabled, true);
    assert.deepEqual(warnings, []);
  });

  it("passes the sidecar's config keys through as they are", () => {
    const config = { compaction: { trigger_ratio: '80%' }, checkpoint: { push_caps: { memory: 8000 } } };
    assert.deepEqual(readOptions({ config }, env).settings.config, config);
  });

  it('reads python, tools, the writer model; warns of unknown keys', () => {
    const { settings, warnings } = readOptions(
      { python: '/venv/bin/python', tools: false, writer: { model: 'anthropic/claude-haiku', colour: 1 }, shiny: true },
      env,
    );
    assert.deepEqual(settings.command, ['/venv/bin/python', '-m', 'mimo_sidecar']);
    assert.equal(settings.toolPrefix, null);
    assert.deepEqual(settings.writer.model, { providerID: 'anthropic', modelID: 'claude-haiku' });
    assert.deepEqual(warnings, ['plugin option shiny: unknown, ignored', 'plugin option writer.colour: unknown, ignored']);
  });

  it('refuses a value of the wrong type, naming the key', () => {
    const cases: [unknown, string][] = [
      [{ command: 'mimo-sidecar' }, 'command'],
      [{ command: [] }, 'command'],
      [{ memoryRoot: 'relative/dir' }, 'memoryRoot'],
      [{ config: [1] }, 'config'],
      [{ toolPrefix: '9x' }, 'toolPrefix'],
      [{ writer: { model: 'no-slash' } }, 'writer.model'],
      [{ writer: { enabled: 'yes' } }, 'writer.enabled'],
      [{ startTimeoutMs: -1 }, 'startTimeoutMs'],
      [[1], '(options)'],
    ];
    for (const [options, key] of cases) {
      assert.throws(() => readOptions(options, env), (e: unknown) => e instanceof OptionsError && e.key === key, key);
    }
  });
});

describe("OpenCode's compaction line", () => {
  it('is the context less the output cap, or the input limit less what is reserved', () => {
    assert.equal(openCodeLine({ id: 'm', providerID: 'p', limit: { context: 40_000, output: 2_000 } }), 38_000);
    assert.equal(openCodeLine({ id: 'm', providerID: 'p', limit: { context: 200_000, output: 64_000 } }), 168_000); // output capped at 32k
    assert.equal(openCodeLine({ id: 'm', providerID: 'p', limit: { context: 200_000, output: 0 } }), 168_000);
    assert.equal(openCodeLine({ id: 'm', providerID: 'p', limit: { context: 400_000, input: 272_000, output: 128_000 } }), 252_000);
    assert.equal(openCodeLine({ id: 'm', providerID: 'p', limit: { context: 400_000, input: 272_000, output: 128_000 } }, { reserved: 50_000 }), 222_000);
    assert.equal(openCodeLine({ id: 'm', providerID: 'p', limit: { context: 0, output: 0 } }), 0);
  });

  it('is the input limit the sidecar is given, so that its trigger comes first', () => {
    assert.deepEqual(sidecarLimits({ id: 'm1', providerID: 'fake', limit: { context: 40_000, output: 2_000 } }), {
      contextWindow: 40_000, inputLimit: 38_000, maxOutputTokens: 2_000, providerId: 'fake', modelId: 'm1',
    });
    assert.equal(sidecarLimits({ id: 'm', providerID: 'p', limit: { context: 0, output: 0 } }), undefined);
  });
});

describe('the mirror', () => {
  const oc = new FakeOpenCode();
  const sid = 'ses_mirror1';
  const ask = oc.user(sid, 'Fix it');
  const step = oc.readStep(sid, 'call_1', 'file body', 1000);
  const boundary: HostMessage = {
    info: { id: openCodeId('msg'), sessionID: sid, role: 'user' },
    parts: [{ id: openCodeId('prt'), type: 'checkpoint' }],
  };

  it('opens with the boundaries in creation order and then sends only what changed', () => {
    const mirror = new Mirror(sid);
    const opened = mirror.opening([ask, step], [boundary]);
    assert.deepEqual(opened.map((m) => m.info.id), [ask.info.id, step.info.id, boundary.info.id]);
    assert.equal(mirror.batch([ask, step]), null, 'nothing changed');

    const grown = structuredClone(step);
    grown.parts.push({ id: openCodeId('prt'), type: 'text', text: 'Done.' });
    const next = oc.assistant(sid, [{ type: 'text', text: 'And more.' }], 'stop', 1200);
    const batch = mirror.batch([ask, grown, next])!;
    assert.deepEqual(batch.upsertMessages?.map((m) => m.info.id), [next.info.id]);
    assert.deepEqual(batch.upsertParts?.map((u) => u.part.id), [grown.parts[1]!.id]);
    mirror.applied(batch);
    assert.equal(mirror.batch([ask, grown, next]), null);

    const shrunk = structuredClone(grown);
    shrunk.parts.pop();
    assert.deepEqual(mirror.batch([ask, shrunk, next])!.removeParts, [{ messageId: step.info.id, partId: grown.parts[1]!.id }]);
  });

  it('never sends a boundary back, and compares a marked part with its mark', () => {
    const mirror = new Mirror(sid);
    mirror.opening([ask, step], []);
    const mark = { messageId: step.info.id, callId: 'call_1', partId: step.parts[0]!.id, compactedAt: 1234 };
    mirror.inserted(boundary, [mark]);
    // OpenCode's copy has no mark: sent as it is, it would undo the sidecar's
    assert.equal(mirror.batch([ask, step, boundary]), null);
    const changedInfo = structuredClone(step);
    changedInfo.info.finish = 'stop';
    const batch = mirror.batch([ask, changedInfo])!;
    const sent = batch.upsertMessages![0]! as unknown as HostMessage;
    assert.equal((sent.parts[0]!.state as { time: { compacted: number } }).time.compacted, 1234);
  });

  it('sends the removals OpenCode reports', () => {
    const mirror = new Mirror(sid);
    mirror.opening([ask, step], []);
    mirror.messageRemoved(step.info.id);
    const batch = mirror.batch([ask])!;
    assert.deepEqual(batch.removeMessages, [step.info.id]);
    mirror.applied(batch);
    assert.equal(mirror.batch([ask]), null);
  });

  it('sets marks on copies only', () => {
    const marked = withMarks(step, markMap([{ messageId: step.info.id, callId: 'call_1', compactedAt: 9 }]));
    assert.notEqual(marked, step);
    assert.equal((step.parts[0]!.state as { time: Record<string, unknown> }).time.compacted, undefined);
  });
});

describe("a call's transient parts", () => {
  const oc = new FakeOpenCode();
  const sid = 'ses_transient1';
  const ask = oc.user(sid, 'Plan it');
  const reminder = { id: openCodeId('prt'), sessionID: sid, messageID: ask.info.id, type: 'text', text: '<system-reminder>plan mode</system-reminder>', synthetic: true };
  const sent = [{ info: ask.info, parts: [...ask.parts, reminder] }];

  it('are kept out of the sidecar and put back on their message', () => {
    const transient = unsentParts(sent, (m, p) => m === ask.info.id && p === ask.parts[0]!.id);
    assert.deepEqual(transient, { messageId: ask.info.id, parts: [reminder] });
    assert.deepEqual(withoutTransient(sent, transient)[0]!.parts, ask.parts);
    const view = withTransient([{ info: { id: 'b', sessionID: sid, role: 'user' }, parts: [] }, ask], transient);
    assert.deepEqual(view[1]!.parts.at(-1), reminder);
    assert.equal(ask.parts.length, 1, 'the view is a copy');
  });

  it("go on the view's newest user message when theirs is not in the view", () => {
    const transient = { messageId: 'gone', parts: [reminder] };
    const boundary: HostMessage = { info: { id: 'b', sessionID: sid, role: 'user' }, parts: [] };
    const answer: HostMessage = { info: { id: 'c', sessionID: sid, role: 'assistant' }, parts: [] };
    assert.deepEqual(withTransient([boundary, answer], transient)[0]!.parts, [reminder]);
  });
});

describe('the state store', () => {
  it('keeps a session record and replaces it whole', async () => {
    const store = new StateStore(mkdtempSync(join(tmpdir(), 'mimo-store-')));
    const record = emptyRecord('ses_store1');
    assert.deepEqual(await store.load('ses_store1'), record);
    record.watermark = 'msg_1';
    const first = store.save(structuredClone(record));
    record.rebuilds.push({ boundary: { info: { id: 'msg_2', sessionID: 'ses_store1', role: 'user' }, parts: [] }, marks: [] });
    await Promise.all([first, store.save(record)]);
    assert.deepEqual(await store.load('ses_store1'), record, 'the later save wins');
    await store.remove('ses_store1');
    assert.deepEqual(await store.load('ses_store1'), emptyRecord('ses_store1'));
  });

  it('refuses a file that is not a record, and an ID that is no file name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mimo-store-'));
    const store = new StateStore(dir);
    writeFileSync(join(dir, 'ses_bad.json'), JSON.stringify({ version: 2 }));
    await assert.rejects(store.load('ses_bad'), /not a session record/);
    assert.throws(() => store.file('../escape'), /not a session ID/);
    assert.equal(readFileSync(join(dir, 'ses_bad.json'), 'utf8'), '{"version":2}', 'left as it was');
  });
});
