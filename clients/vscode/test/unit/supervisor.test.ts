// The supervisor and the API over the real sidecar (no VS Code): lazy start, requests, warnings
// in the log, the writer wait's status and progress, a killed process restarted with its sessions
// restored or lost, the restart limit, a refused initialize, and the end of the window.

import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import type { ProgressParams, SessionInfo, StatusNotification } from 'mimo-sidecar-client';
import type { MimoSidecarApi, MimoSidecarApiError, RestartEvent, SidecarState } from '../../src/api.js';
import { createApi, type ApiEvents } from '../../src/apiImpl.js';
import { Emitter } from '../../src/emitter.js';
import { SessionRegistry } from '../../src/sessions.js';
import { LaunchRefused, Supervisor, type LaunchSpec } from '../../src/supervisor.js';
import { capture, CHECKPOINT, memoryRoot, MODEL, session, spec, waitFor, type Captured } from './fixtures.js';

interface Rig {
  api: MimoSidecarApi;
  supervisor: Supervisor;
  log: Captured;
  events: ApiEvents;
  states: SidecarState[];
  /** How many starts the supervisor prepared. */
  launches: () => number;
}

// Every supervisor a test made is stopped after it, passed or failed (a live child keeps Node up).
const made: Supervisor[] = [];
afterEach(async () => {
  await Promise.all(made.splice(0).map((s) => s.stop()));
});

function rig(options: { spec?: () => Promise<LaunchSpec>; maxRestarts?: number } = {}): Rig {
  const log = capture();
  const registry = new SessionRegistry();
  const events: ApiEvents = { restart: new Emitter<RestartEvent>(), status: new Emitter<StatusNotification>(), progress: new Emitter<ProgressParams>() };
  const root = memoryRoot();
  let launches = 0;
  const out: Partial<Rig> = { log, events, states: [], launches: () => launches };
  const supervisor = new Supervisor({
    prepare: async () => {
      launches += 1;
      return options.spec ? options.spec() : spec(root);
    },
    maxRestarts: () => options.maxRestarts ?? 5,
    log,
    backoffMs: () => 50,
    afterStart: async (sidecar, generation, previousExit) => {
      if (generation === 1) return;
      const event = await registry.restoreAll(sidecar, generation, previousExit ?? '', log.info);
      return () => events.restart.fire(event);
    },
    onRebuildStatus: (s) => events.status.fire(s),
    onProgress: (p) => events.progress.fire(p),
    onLogMessage: (m) => log.warn(`sidecar config: ${m.message}`),
  });
  supervisor.onDidChangeState((s) => out.states!.push(s));
  out.supervisor = supervisor;
  made.push(supervisor);
  out.api = createApi(supervisor, registry, events, log);
  return out as Rig;
}

async function rejection(promise: Promise<unknown>): Promise<MimoSidecarApiError> {
  try {
    await promise;
  } catch (error) {
    return error as MimoSidecarApiError;
  }
  assert.fail('expected a rejection');
}

describe('the supervisor and the API over the real sidecar', () => {
  it('starts on the first call, not before, and serves the session methods', async () => {
    const { api, supervisor, states, launches } = rig();
    assert.equal(api.state.state, 'stopped');
    assert.equal(launches(), 0);
    const opened = await api.sessionOpen(session('ses_lazy'));
    assert.equal(opened.revision, 1);
    assert.equal(api.state.state, 'running');
    assert.equal(typeof api.state.pid, 'number');
    assert.deepEqual(states.map((s) => s.state), ['starting', 'running']);
    const info = await api.sessionGet({ sessionId: 'ses_lazy' });
    assert.equal(info.messageCount, 8);
    const computed = await api.rebuildCompute({ sessionId: 'ses_lazy', model: MODEL, preview: true });
    assert.equal(computed.trigger.shouldRebuild, true);
    assert.deepEqual(api.openSessions(), ['ses_lazy']);
    assert.equal(launches(), 1);
    const how = await supervisor.stop();
    assert.equal(how, 'exit code 0'); // shutdown, then exit: the sidecar's clean exit
  });

  it('rejects with the sidecar error, its reason, code and field', async () => {
    const { api } = rig();
    const missing = await rejection(api.sessionGet({ sessionId: 'ses_nobody' }));
    assert.equal(missing.name, 'MimoSidecarError');
    assert.equal(missing.reason, 'SessionNotFound');
    assert.equal(missing.code, 1001);
    assert.equal(missing.field, 'sessionId');
    const invalid = await rejection(api.sessionSync({ sessionId: 'ses_nobody', baseRevision: '1' as unknown as number }));
    assert.equal(invalid.reason, 'InvalidParams');
    assert.match(invalid.message, /baseRevision/);
    const reserved = await rejection(api.request('sidecar/configure', { config: {} }));
    assert.equal(reserved.reason, 'InvalidRequest');
  });

  it('logs the warnings answers carry, with the method and session', async () => {
    const { api, log } = rig();
    await api.sessionOpen(session('ses_warn'));
    // a model without limits: the trigger says overflow handling is off, in trigger.warnings
    await api.rebuildCompute({ sessionId: 'ses_warn', model: null, usage: { input: 10, output: 1 } });
    const warned = log.lines.filter((l) => l.level === 'warn').map((l) => l.text);
    assert.ok(warned.some((w) => w.startsWith('rebuild/compute ses_warn: ')), warned.join('\n'));
  });

  it('reports the writer wait as rebuild/status and $/progress, and the insert follows the writer', async () => {
    const { api, events } = rig();
    const sid = 'ses_wait';
    await api.sessionOpen(session(sid));
    const statuses: StatusNotification[] = [];
    const progress: ProgressParams[] = [];
    events.status.event((s) => statuses.push(s));
    events.progress.event((p) => progress.push(p));
    const computed = await api.rebuildCompute({ sessionId: sid, model: MODEL });
    assert.equal(computed.trigger.shouldRebuild, true);
    const prepared = await api.checkpointPrepare({ sessionId: sid, format: 'anthropic' });
    assert.equal(prepared.started, true);
    const busy = waitFor<StatusNotification>((done) => events.status.event((s) => s.state === 'busy' && done(s)), 20_000, 'busy status');
    // the progress begins once the client answered window/workDoneProgress/create: wait for it
    const begun = waitFor<ProgressParams>((done) => events.progress.event((p) => p.value.kind === 'begin' && done(p)), 20_000, 'progress');
    const inserting = api.rebuildInsert({ sessionId: sid, reason: 'auto' });
    const status = await busy;
    assert.equal(status.message, 'Preparing conversation context…');
    await begun;
    await api.checkpointCommit({ sessionId: sid, watermark: prepared.watermark, content: CHECKPOINT });
    const inserted = await inserting;
    assert.equal(inserted.outcome, 'rebuilt');
    assert.equal(inserted.wait?.result, 'success');
    assert.match(JSON.stringify(inserted.message), /the CSV header row/);
    assert.deepEqual(statuses.map((s) => s.state), ['busy', 'idle']);
    assert.deepEqual(progress.map((p) => p.value.kind), ['begin', 'end']);
    assert.equal(progress[0]?.value.message, 'Preparing conversation context…');
  });

  it('restarts a killed sidecar, restores the sessions given restore and refuses the lost ones', async () => {
    const { api, states, events } = rig();
    const stored = session('ses_kept');
    await api.sessionOpen(stored, { restore: () => stored });
    await api.sessionOpen(session('ses_gone'));
    const before = api.state;
    const restarted = waitFor<RestartEvent>((done) => events.restart.event(done), 20_000, 'restart');
    // a request in flight when the process dies: an insert waiting for a writer
    await api.checkpointPrepare({ sessionId: 'ses_gone' });
    const inFlight = rejection(api.rebuildInsert({ sessionId: 'ses_gone', reason: 'auto' }));
    await waitFor<StatusNotification>((done) => events.status.event((s) => s.state === 'busy' && done(s)));
    process.kill(before.pid as number, 'SIGKILL');
    const exitedError = await inFlight;
    assert.equal(exitedError.reason, 'SidecarExited');
    const event = await restarted;
    assert.equal(event.exit, 'signal SIGKILL');
    assert.equal(event.generation, 2);
    assert.deepEqual(event.restored, ['ses_kept']);
    assert.deepEqual(event.lost.map((l) => l.sessionId), ['ses_gone']);
    assert.equal(api.state.state, 'running');
    assert.notEqual(api.state.pid, before.pid);
    assert.equal(api.state.restarts, 1);
    assert.ok(states.some((s) => s.state === 'restarting'));
    const info = await api.sessionGet({ sessionId: 'ses_kept' });
    assert.equal(info.messageCount, stored.messages?.length);
    const lost = await rejection(api.sessionGet({ sessionId: 'ses_gone' }));
    assert.equal(lost.reason, 'SessionLost');
    assert.match(lost.message, /ses_gone/);
    assert.deepEqual(api.openSessions(), ['ses_kept']);
    // opening it again ends the loss
    await api.sessionOpen(session('ses_gone'));
    assert.equal((await api.sessionGet({ sessionId: 'ses_gone' })).revision, 1);
  });

  it('reopens a parent before the session forked from it, whatever order they were opened in', async () => {
    const { api, events } = rig();
    const parent = session('ses_parent');
    const child = { ...session('ses_child'), parent: { sessionId: 'ses_parent' } };
    await api.sessionOpen(parent, { restore: () => parent });
    await api.sessionOpen(child, { restore: () => child });
    // the parent closed and opened again: the registry now holds it after its child
    await api.sessionClose({ sessionId: 'ses_parent' });
    await api.sessionOpen(parent, { restore: () => parent });
    assert.deepEqual(api.openSessions(), ['ses_child', 'ses_parent']);
    const restarted = waitFor<RestartEvent>((done) => events.restart.event(done), 20_000, 'restart');
    process.kill(api.state.pid as number, 'SIGKILL');
    const event = await restarted;
    assert.deepEqual(event.restored, ['ses_parent', 'ses_child']);
    assert.deepEqual(event.lost, []);
    assert.equal((await api.sessionGet({ sessionId: 'ses_child' })).parentId, 'ses_parent');
  });

  it('counts a session whose restore fails as lost, with the reason', async () => {
    const { api, events } = rig();
    await api.sessionOpen(session('ses_broken'), {
      restore: () => {
        throw new Error('the storage is gone');
      },
    });
    await api.sessionOpen(session('ses_other'), { restore: () => session('ses_elsewhere') });
    const restarted = waitFor<RestartEvent>((done) => events.restart.event(done), 20_000, 'restart');
    process.kill(api.state.pid as number, 'SIGKILL');
    const event = await restarted;
    assert.deepEqual(event.restored, []);
    assert.deepEqual(event.lost, [
      { sessionId: 'ses_broken', why: 'restoring it failed: the storage is gone' },
      { sessionId: 'ses_other', why: 'its restore returned params for "ses_elsewhere", not for this session' },
    ]);
    const lost = await rejection(api.rebuildCompute({ sessionId: 'ses_broken' }));
    assert.equal(lost.reason, 'SessionLost');
    assert.match(lost.message, /the storage is gone/);
  });

  it('waits for a restart on request, and the sessions come back', async () => {
    const { api } = rig();
    const stored = session('ses_manual');
    await api.sessionOpen(stored, { restore: () => stored });
    const before = api.state.pid;
    // a call made while the old process is being shut down is served by the new one
    const during = waitFor<Promise<SessionInfo>>((done) =>
      api.onDidChangeState((s) => s.state === 'restarting' && done(api.sessionGet({ sessionId: 'ses_manual' }))),
    );
    const state = await api.restart();
    const info = await (await during);
    assert.equal(state.state, 'running');
    assert.notEqual(state.pid, before);
    assert.equal(state.restarts, 0); // on request: no crash counted
    assert.equal(info.messageCount, stored.messages?.length);
  });

  it('gives up after maxRestarts exits, says so, and starts again on restart()', async () => {
    const { api, supervisor, log } = rig({ maxRestarts: 1 });
    await api.start();
    process.kill(api.state.pid as number, 'SIGKILL');
    await waitFor<void>((done) => supervisor.onDidChangeState((s) => s.state === 'running' && done()));
    process.kill(api.state.pid as number, 'SIGKILL');
    await waitFor<void>((done) => supervisor.onDidChangeState((s) => s.state === 'failed' && done()));
    assert.match(api.state.detail ?? '', /exited 2 times within 3 minutes .*maxRestarts is 1/);
    const refused = await rejection(api.sessionGet({ sessionId: 'ses_x' }));
    assert.equal(refused.reason, 'SidecarUnavailable');
    assert.match(log.text('error'), /maxRestarts is 1/);
    const state = await api.restart();
    assert.equal(state.state, 'running');
    assert.equal(state.generation, 3);
  });

  it('fails with the field named when initialize refuses the config, and does not retry', async () => {
    const root = memoryRoot();
    const { api, launches } = rig({ spec: async () => spec(root, { config: { compaction: { trigger_ratio: 7 } } }) });
    const refused = await rejection(api.start());
    assert.equal(refused.reason, 'SidecarUnavailable');
    assert.match(refused.message, /compaction\.trigger_ratio/);
    assert.equal(api.state.state, 'failed');
    const again = await rejection(api.sessionGet({ sessionId: 'ses_x' }));
    assert.equal(again.reason, 'SidecarUnavailable');
    assert.equal(launches(), 1); // a refused config is the user's to fix: no retry loop
  });

  it('fails at once when no command can be found', async () => {
    const { api } = rig({
      spec: async () => {
        throw new LaunchRefused('No mimo-sidecar could be started. Tried: python3 -m mimo_sidecar (PATH): not found');
      },
    });
    const refused = await rejection(api.sessionGet({ sessionId: 'ses_x' }));
    assert.equal(refused.reason, 'SidecarUnavailable');
    assert.match(refused.message, /Tried: python3/);
    assert.equal(api.state.state, 'failed');
  });

  it('sends a config change with sidecar/configure and returns its warnings', async () => {
    const { api, supervisor, log } = rig();
    await api.start();
    const warnings = await supervisor.configure({ checkpoint: { push_caps: { memory: 1234 } }, no_such_key: 1 });
    assert.ok(warnings?.some((w) => w.includes('no_such_key')), JSON.stringify(warnings));
    assert.match(log.text('warn'), /sidecar config: .*no_such_key/);
    await api.sessionOpen(session('ses_cfg'));
    const computed = await api.rebuildCompute({ sessionId: 'ses_cfg', model: MODEL, preview: true });
    const memory = computed.preview?.report.sections.find((s) => s.key === 'project_memory');
    assert.equal(memory?.cap, 1234);
  });

  it('writes the sidecar log to the logger, its exit line included', async () => {
    const { api, supervisor, log } = rig();
    await api.start();
    await supervisor.stop();
    assert.match(log.text('sidecar'), /exiting with code 0/);
  });
});
