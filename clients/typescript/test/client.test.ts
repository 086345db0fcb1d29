// The typed client against the real sidecar (`npm test`; CI runs it). The sidecar is the Python
// one of this repository: $MIMO_SIDECAR_PYTHON, else ../../.venv/bin/python.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CancellationTokenSource } from 'vscode-jsonrpc/node';
import {
  CLIENT_METHODS,
  SIDECAR_METHODS,
  Sidecar,
  SidecarTimeout,
  SidecarUnavailable,
  isSidecarError,
  type Message,
  type ProgressParams,
  type StatusNotification,
} from '../src/index.js';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const python = process.env.MIMO_SIDECAR_PYTHON ?? join(repo, '.venv', 'bin', 'python');
const SID = 'ses_tsClient01';
const MODEL = { contextWindow: 200_000, providerId: 'anthropic', modelId: 'claude-sonnet-4' };

// The rule both clients name their methods by (client/methods.py): `session/open` -> sessionOpen.
const words = (method: string) => method.replace(/^\$\//, '').split(/[/]/);
const camel = (method: string) =>
  words(method)
    .map((w, i) => (i === 0 ? w : w[0]!.toUpperCase() + w.slice(1)))
    .join('');
const handlerName = (method: string) => {
  const name = camel(method);
  return `on${name[0]!.toUpperCase()}${name.slice(1)}`;
};

let n = 0;
const id = () => `msg_g0199${(0x1000000000 + n++).toString(16).padStart(11, '0')}TsClient0`;
function message(role: 'user' | 'assistant', parts: { type: string; [k: string]: unknown }[], extra: object = {}): Message {
  const mid = id();
  return {
    info: { id: mid, sessionID: SID, role, time: { created: 1_760_000_000_000 + n * 1000 }, ...extra },
    parts: parts.map((p, i) => ({ id: `prt_${mid.slice(-12)}${i}`, sessionID: SID, messageID: mid, ...p })),
  };
}
const source = Array.from({ length: 400 }, (_, i) => `export const value${i} = compute(${i});`).join('\n');
function session(): Message[] {
  const out: Message[] = [message('user', [{ type: 'text', text: 'Make the CSV export keep the header row.' }])];
  for (let k = 0; k < 6; k += 1) {
    out.push(
      message('assistant', [
        { type: 'text', text: `Reading part ${k} of the exporter.` },
        {
          type: 'tool',
          callID: `call_${k}`,
          tool: 'read',
          state: { status: 'completed', input: { filePath: `src/export${k}.ts` }, output: source, title: 'r', metadata: {}, time: { start: 1, end: 2 } },
        },
      ], { finish: 'tool-calls', tokens: { input: 185_000 + k, output: 100, reasoning: 0, cache: { read: 0, write: 0 } } }),
    );
  }
  return out;
}

describe('the typed client', () => {
  const statuses: StatusNotification[] = [];
  const progress: ProgressParams[] = [];
  const tokens: string[] = [];
  let sidecar: Sidecar;
  let memoryRoot: string;

  before(async () => {
    memoryRoot = mkdtempSync(join(tmpdir(), 'mimo-ts-client-'));
    sidecar = Sidecar.spawn({ python });
    sidecar.onRebuildStatus((s) => statuses.push(s));
    sidecar.onProgress((p) => progress.push(p));
    sidecar.onWindowWorkDoneProgressCreate((p) => tokens.push(p.token));
    const init = await sidecar.initialize({
      processId: process.pid,
      capabilities: { window: { workDoneProgress: true } },
      initializationOptions: { memoryRoot, config: { checkpoint: { writer_wait_ms: { without_watermark: 20_000 } } } },
    });
    assert.equal(init.serverInfo.name, 'mimo-sidecar');
    assert.equal(sidecar.timeouts.insertMs, 30_000 + 20_000 + 30_000); // follows the configured waits
    await sidecar.initialized();
  });

  after(async () => {
    assert.equal(await sidecar.close(), 0);
  });

  it('has one method per protocol method, named by the rule', () => {
    const methods: readonly string[] = JSON.parse(readFileSync(join(repo, 'schemas', 'methods.json'), 'utf8'))
      .filter((m: { direction: string }) => m.direction === 'client-to-sidecar')
      .map((m: { method: string }) => m.method);
    assert.deepEqual([...CLIENT_METHODS], methods); // the generated table is the registry's
    for (const method of CLIENT_METHODS) {
      assert.equal(typeof (Sidecar.prototype as unknown as Record<string, unknown>)[camel(method)], 'function', method);
    }
    for (const method of SIDECAR_METHODS) {
      assert.equal(typeof (Sidecar.prototype as unknown as Record<string, unknown>)[handlerName(method)], 'function', method);
    }
  });

  it('runs a rebuild with the writer kit, typed from end to end', async () => {
    const opened = await sidecar.sessionOpen({ sessionId: SID, messages: session(), createCheckpoint: true, requestPrefix: { system: ['You are a coding agent.'], tools: [{ name: 'read', description: 'Read a file', input_schema: { type: 'object' } }] } });
    assert.deepEqual(opened, { sessionId: SID, revision: 1, checkpointCreated: true });
    const ask = message('user', [{ type: 'text', text: 'And keep the quoting as it is.' }]);
    assert.equal((await sidecar.sessionSync({ sessionId: SID, baseRevision: 1, upsertMessages: [ask] })).revision, 2);

    const computed = await sidecar.rebuildCompute({ sessionId: SID, model: MODEL });
    assert.equal(computed.trigger.shouldRebuild, true);
    const before = await sidecar.requestBuild({ sessionId: SID, format: 'anthropic' });

    const prepared = await sidecar.checkpointPrepare({ sessionId: SID, format: 'anthropic' });
    assert.equal(prepared.started, true);
    assert.equal(prepared.watermark, computed.watermark?.messageId);
    const inserting = sidecar.rebuildInsert({ sessionId: SID, reason: 'auto' }); // a cold start: it waits
    while (!statuses.some((s) => s.state === 'busy')) await new Promise((r) => setTimeout(r, 20));
    const checkpoint = `# Session checkpoint\n\nTopic: CSV export header row\n\n## §1 Active intent\n- Keep the header row; keep the quoting.\n`;
    const committed = await sidecar.checkpointCommit({ sessionId: SID, watermark: prepared.watermark, content: checkpoint });
    assert.equal(committed.watermark, prepared.watermark);
    const inserted = await inserting;
    assert.equal(inserted.outcome, 'rebuilt');
    assert.equal(inserted.wait?.result, 'success');
    assert.deepEqual(statuses.map((s) => s.state), ['busy', 'idle']);
    assert.equal(statuses[0]?.message, 'Preparing conversation context\u2026');
    assert.deepEqual(progress.map((p) => p.value.kind), ['begin', 'end']);
    assert.deepEqual(tokens, [progress[0]?.token]);

    const after = await sidecar.requestBuild({ sessionId: SID, format: 'anthropic' });
    assert.ok(after.estimatedTokens < before.estimatedTokens);
    assert.ok(after.messages.length < before.messages.length);
    const got = await sidecar.sessionGet({ sessionId: SID });
    assert.equal(got.watermark, prepared.watermark);
    assert.equal(got.writer.lastOutcome, 'success');
  });

  it('serves the model tools: definitions in a format, a call the model made', async () => {
    const listed = await sidecar.toolsList({ sessionId: SID, format: 'anthropic', prefix: 'mimo_' });
    assert.deepEqual(listed.tools.map((t) => t.name), ['mimo_history', 'mimo_memory', 'mimo_task']);
    assert.ok(listed.tools.every((t) => typeof t.input_schema === 'object'));
    const bare = await sidecar.toolsList();
    assert.equal(bare.format, 'ai-sdk');
    assert.deepEqual(bare.tools.map((t) => t.name), ['history', 'memory', 'task']);

    const called = await sidecar.toolsCall({ sessionId: SID, name: 'mimo_history', prefix: 'mimo_', arguments: { operation: 'result', callID: 'call_0' } });
    assert.equal(called.isError, false);
    assert.ok(called.content[0]?.text.startsWith('Tool call call_0: read'));
    assert.ok(called.content[0]?.text.includes('export const value399 = compute(399);')); // the whole result
    const mistaken = await sidecar.toolsCall({ sessionId: SID, name: 'task', arguments: { operation: 'nothing' } });
    assert.equal(mistaken.isError, true); // the model's mistake: an answer, not an error
    await assert.rejects(sidecar.toolsCall({ sessionId: SID, name: 'history', prefix: 'mimo_' }), (error: unknown) => {
      assert.ok(isSidecarError(error));
      assert.equal(error.code, 1011);
      assert.equal(error.data?.name, 'UnknownTool');
      assert.equal(error.data?.tool, 'history');
      return true;
    });
  });

  it('reports errors with their code and name, and cancels', async () => {
    await assert.rejects(sidecar.sessionGet({ sessionId: 'ses_nobody' }), (error: unknown) => {
      assert.ok(isSidecarError(error));
      assert.equal(error.code, 1001);
      assert.equal(error.data?.name, 'SessionNotFound');
      assert.equal(error.data?.field, 'sessionId');
      return true;
    });
    const wrong = { sessionId: SID, baseRevision: '3' } as unknown as Parameters<Sidecar['sessionSync']>[0];
    await assert.rejects(sidecar.sessionSync(wrong), (error: unknown) => isSidecarError(error) && error.code === -32602);

    const started = await sidecar.checkpointWriterStarted({ sessionId: SID });
    assert.equal(started.state, 'in-flight');
    const revision = (await sidecar.sessionGet({ sessionId: SID })).revision;
    const cancel = new CancellationTokenSource();
    const manual = sidecar.rebuildInsert({ sessionId: SID, reason: 'manual' }, cancel.token);
    while (statuses.length < 3) await new Promise((r) => setTimeout(r, 20));
    cancel.cancel();
    await assert.rejects(manual, (error: unknown) => isSidecarError(error) || (error as { code?: number }).code === -32800);
    assert.equal((await sidecar.sessionGet({ sessionId: SID })).revision, revision); // nothing inserted

    sidecar.timeouts = { ...sidecar.timeouts, insertMs: 300 };
    await assert.rejects(sidecar.rebuildInsert({ sessionId: SID, reason: 'overflow' }), SidecarTimeout);
    assert.equal((await sidecar.sessionGet({ sessionId: SID })).revision, revision);
    const finished = await sidecar.checkpointWriterFinished({ sessionId: SID, outcome: 'failure', retryable: true });
    assert.equal(finished.writer.lastOutcome, 'failure');

    const configured = await sidecar.sidecarConfigure({ config: { checkpoint: { push_caps: { focus_task: 5 } } } });
    assert.equal(configured.warnings?.length, 1);
    assert.equal(sidecar.timeouts.insertMs, 30_000 + 300_000 + 30_000);
    assert.deepEqual(await sidecar.sessionClose({ sessionId: SID }), { closed: true });

    await sidecar.sessionOpen({ sessionId: 'ses_tsEmpty' });
    await assert.rejects(sidecar.requestBuild({ sessionId: 'ses_tsEmpty' }), (error: unknown) => {
      assert.ok(isSidecarError(error));
      assert.equal(error.code, 1012);
      assert.equal(error.data?.name, 'EmptyRequest');
      return true;
    });
  });
});

describe('a sidecar process that fails', () => {
  it('rejects, never throws, when the interpreter does not exist', async () => {
    const logged: string[] = [];
    const missing = Sidecar.spawn({ python: join(tmpdir(), 'no-such-python-here'), onLog: (l) => logged.push(l) });
    await assert.rejects(
      missing.initialize({ processId: process.pid, capabilities: {}, initializationOptions: { memoryRoot: mkdtempSync(join(tmpdir(), 'mimo-ts-fail-')) } }),
      (error: unknown) => error instanceof SidecarUnavailable && /ENOENT/.test(error.message),
    );
    assert.ok(missing.failure instanceof SidecarUnavailable);
    await assert.rejects(missing.sessionGet({ sessionId: SID }), SidecarUnavailable); // later requests too
    assert.ok(logged.some((l) => l.includes('ENOENT')));
    await missing.close(); // resolves: nothing to wait for
  });

  it('rejects the requests of a killed sidecar instead of hanging or throwing', async () => {
    const doomed = Sidecar.spawn({ python });
    await doomed.initialize({ processId: process.pid, capabilities: {}, initializationOptions: { memoryRoot: mkdtempSync(join(tmpdir(), 'mimo-ts-fail-')) } });
    const gone = new Promise((resolve) => doomed.process!.once('exit', resolve));
    doomed.process!.kill('SIGKILL');
    await gone;
    await assert.rejects(doomed.sessionGet({ sessionId: SID }));
    await assert.rejects(doomed.sessionGet({ sessionId: SID }));
    await doomed.close();
  });
});
