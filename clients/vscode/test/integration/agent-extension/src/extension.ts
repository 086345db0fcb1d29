// The integration test's agent extension: a second extension, installed from its own .vsix beside
// MiMo Sidecar's in a real VS Code (code-server), that uses the sidecar only through the API
// `activate` returns, the way an agent extension would. It runs the bundled sample session
// (examples/sample) through one rebuild with a checkpoint writer, keeps the host's storage as
// protocol.md asks, and reports each step as one JSON line in $MIMO_VSCODE_TEST_DIR/steps.jsonl
// for the driver (../run.mjs) to check. Where the driver must look at the window (the status bar
// during the writer wait), it waits for the driver's `go-<step>` file.

import { existsSync, appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { CommitResult, Message, MimoSidecarApi, MimoSidecarApiError, ModelLimits, OpenParams, RestartEvent, StatusNotification } from '../../../../src/api.js';

const dir = process.env.MIMO_VSCODE_TEST_DIR as string;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function report(name: string, ok: boolean, data: unknown): void {
  appendFileSync(join(dir, 'steps.jsonl'), `${JSON.stringify({ name, ok, data, at: Date.now() })}\n`);
}

async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    const data = await run();
    report(name, true, data);
    return data;
  } catch (error) {
    const e = error as Partial<MimoSidecarApiError>;
    report(name, false, { message: String(e.message ?? error), reason: e.reason, stack: String(e.stack ?? '') });
    throw error;
  }
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`no ${what} within ${ms} ms`);
    await sleep(100);
  }
}

function once<T>(event: (listener: (e: T) => unknown) => vscode.Disposable, accept: (e: T) => boolean, what: string, ms = 60_000): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
    const subscription = event((e) => {
      if (!accept(e)) return;
      clearTimeout(timer);
      subscription.dispose();
      resolve(e);
    });
  });
}

/** The driver's go-ahead, after it looked at the window. */
const go = (name: string) => until(`go-${name} from the driver`, () => (existsSync(join(dir, `go-${name}`)) ? true : undefined), 120_000);

function commandLine(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
}

/** The host's side of "Host obligations": the boundary appended, each mark on its result part. */
function persist(storage: OpenParams, boundary: Message, marks: { messageId: string; callId: string; compactedAt: number }[], commit: CommitResult): void {
  storage.messages = [...(storage.messages ?? []), boundary];
  const byId = new Map((storage.messages ?? []).map((m) => [String(m.info.id), m]));
  for (const mark of marks) {
    const part = byId.get(mark.messageId)?.parts?.find((p) => (p as { callID?: string }).callID === mark.callId) as { state?: { time?: Record<string, number> } } | undefined;
    if (!part?.state) throw new Error(`no inline tool part for the mark ${mark.messageId}/${mark.callId}`);
    part.state.time = { ...(part.state.time ?? {}), compacted: mark.compactedAt };
  }
  storage.watermark = commit.watermark;
}

async function run(): Promise<void> {
  const extension = vscode.extensions.getExtension<MimoSidecarApi>('mimo-sidecar.mimo-sidecar');
  if (!extension) {
    report('activated', false, { message: 'the MiMo Sidecar extension is not installed' });
    return;
  }
  // extensionDependencies activated it before this extension; activate() hands over its API
  const api = await extension.activate();
  report('activated', true, { extensionActive: extension.isActive, state: api.state, apiVersion: api.apiVersion, version: extension.packageJSON.version });

  const sample = JSON.parse(readFileSync(process.env.MIMO_VSCODE_SAMPLE as string, 'utf8')) as OpenParams & { model: ModelLimits };
  const { model, ...params } = sample;
  const sid = params.sessionId;
  const storage: OpenParams = JSON.parse(JSON.stringify(params)) as OpenParams; // the host's own storage

  // The host opens the session with the history it had, then syncs the step that just finished.
  const all = params.messages ?? [];
  const synced = all.slice(-2);
  await step('opened', async () => {
    const opened = await api.sessionOpen({ ...params, messages: all.slice(0, -2) }, { restore: () => JSON.parse(JSON.stringify(storage)) as OpenParams });
    const state = api.state;
    return { revision: opened.revision, state, commandLine: commandLine(state.pid as number), openSessions: api.openSessions() };
  });
  await step('synced', async () => {
    const result = await api.sessionSync({ sessionId: sid, baseRevision: 1, upsertMessages: synced });
    const info = await api.sessionGet({ sessionId: sid });
    return { revision: result.revision, messageCount: info.messageCount, sessionMessages: all.length };
  });
  const before = await step('built-before', async () => {
    const built = await api.requestBuild({ sessionId: sid });
    return { messages: built.messages.length, estimatedTokens: built.estimatedTokens };
  });
  const computed = await step('computed', async () => {
    const c = await api.rebuildCompute({ sessionId: sid, model });
    return { shouldRebuild: c.trigger.shouldRebuild, count: c.trigger.count, usable: c.trigger.usable, watermark: c.watermark?.messageId, stored: c.storedWatermark };
  });
  const prepared = await step('prepared', async () => {
    const p = await api.checkpointPrepare({ sessionId: sid, format: 'anthropic' });
    return { started: p.started, watermark: p.watermark, messages: p.messages.length };
  });

  // The insert waits for the writer just registered: the status bar says so until the commit.
  const busy = once<StatusNotification>(api.onDidChangeRebuildStatus, (s) => s.sessionId === sid && s.state === 'busy', 'busy status');
  const progressBegun = once(api.onDidProgress, (p) => p.value.kind === 'begin', 'progress begin');
  const inserting = api.rebuildInsert({ sessionId: sid, reason: 'auto' });
  await step('waiting-for-writer', async () => {
    const status = await busy;
    const progress = await progressBegun;
    return { status, progress: progress.value, state: api.state.state };
  });
  await go('commit');
  const topic = `VS Code integration checkpoint ${Date.now()}`;
  const checkpoint = `# Session checkpoint\n\nTopic: ${topic}\n\n## §1 Active intent\n- Import the April bank statement, then run the full suite.\n\n## §2 Done\n- The bank import parses every statement of March.\n`;
  const committed = await api.checkpointCommit({ sessionId: sid, watermark: prepared.watermark, content: checkpoint });
  const inserted = await step('inserted', async () => {
    const result = await inserting;
    const text = JSON.stringify(result.message ?? {});
    persist(storage, result.message as unknown as Message, result.compacted ?? [], committed);
    return {
      outcome: result.outcome,
      wait: result.wait,
      watermark: result.watermark,
      committedWatermark: committed.watermark,
      boundaryId: (result.message as { info?: { id?: string } } | undefined)?.info?.id,
      firstPartType: (result.message as { parts?: { type?: string }[] } | undefined)?.parts?.[0]?.type,
      boundaryHasTopic: text.includes(topic),
      compacted: result.compacted ?? [],
    };
  });
  await step('built-after', async () => {
    const built = await api.requestBuild({ sessionId: sid });
    return { messages: built.messages.length, estimatedTokens: built.estimatedTokens, before, firstMessageHasTopic: JSON.stringify(built.messages[0] ?? {}).includes(topic) };
  });
  await step('model-tools', async () => {
    const listed = await api.toolsList({ sessionId: sid, prefix: 'mimo_' });
    const mark = inserted.compacted[0];
    if (!mark) throw new Error('the rebuild cleared no tool result to read back');
    const part = storage.messages?.flatMap((m) => m.parts ?? []).find((p) => (p as { callID?: string } | null)?.callID === mark.callId) as unknown as { state: { output: string } };
    const called = await api.toolsCall({ sessionId: sid, name: 'mimo_history', prefix: 'mimo_', arguments: { operation: 'result', callID: mark.callId } });
    const text = called.content[0]?.text ?? '';
    return { names: listed.tools.map((t) => (t as { name?: string }).name), isError: called.isError, holdsTheClearedResult: text.includes(part.state.output.slice(0, 200)), callId: mark.callId };
  });

  // A second session opened without `restore`: lost when the process dies.
  const other: OpenParams = { sessionId: 'ses_vscodeIntegrationNoRestore', messages: (params.messages ?? []).slice(0, 2).map((m) => ({ ...m, info: { ...m.info, sessionID: 'ses_vscodeIntegrationNoRestore' } })) };
  await step('opened-without-restore', async () => ({ revision: (await api.sessionOpen(other)).revision, openSessions: api.openSessions() }));

  await step('composition', async () => {
    const composition = (await vscode.commands.executeCommand('mimoSidecar.showComposition', { sessionId: sid })) as { request: { outcome: string }; sections: { heading: string }[]; title: string } | undefined;
    if (!composition) throw new Error('the command returned no composition');
    return { title: composition.title, outcome: composition.request.outcome, sections: composition.sections.map((s) => s.heading) };
  });
  await go('composition-seen');
  await step('preview', async () => {
    const result = (await vscode.commands.executeCommand('mimoSidecar.previewRebuild', { sessionId: sid })) as { preview?: { outcome: string; report: { text?: string } } } | undefined;
    const editor = vscode.window.activeTextEditor;
    return { outcome: result?.preview?.outcome, hasText: Boolean(result?.preview?.report.text), editor: editor?.document.uri.toString(), editorHasTopic: editor?.document.getText().includes(topic) ?? false };
  });

  await step('settings-change', async () => {
    await vscode.workspace.getConfiguration('mimoSidecar').update('budgets.projectMemory', 1234, vscode.ConfigurationTarget.Global);
    const cap = await until('the new project memory cap in the preview', async () => {
      const c = await api.rebuildCompute({ sessionId: sid, model, preview: true });
      const found = c.preview?.report.sections.find((s) => s.key === 'project_memory')?.cap;
      return found === 1234 ? found : undefined;
    }, 20_000);
    return { cap, pid: api.state.pid, generation: api.state.generation };
  });

  // A crash: the sidecar is killed; the extension starts a new one and reopens what it can.
  const restarted = once<RestartEvent>(api.onDidRestart, () => true, 'restart');
  const killed = await step('killed', async () => {
    const pid = api.state.pid as number;
    process.kill(pid, 'SIGKILL');
    return { pid, generation: api.state.generation };
  });
  await step('restarted', async () => {
    const event = await restarted;
    const info = await api.sessionGet({ sessionId: sid });
    let lostReason: string | undefined;
    let lostMessage: string | undefined;
    try {
      await api.sessionGet({ sessionId: other.sessionId });
    } catch (error) {
      lostReason = (error as MimoSidecarApiError).reason;
      lostMessage = (error as Error).message;
    }
    const computedAgain = await api.rebuildCompute({ sessionId: sid, model, preview: true });
    return {
      event,
      state: api.state,
      oldPid: killed.pid,
      oldPidAlive: existsSync(`/proc/${killed.pid}`),
      messageCount: info.messageCount,
      storedMessages: storage.messages?.length,
      watermark: info.watermark,
      storedWatermark: storage.watermark,
      lostReason,
      lostMessage,
      openSessions: api.openSessions(),
      projectMemoryCap: computedAgain.preview?.report.sections.find((s) => s.key === 'project_memory')?.cap,
    };
  });
  report('done', true, { computed });
}

export function activate(): void {
  if (!dir) return;
  void run().catch(() => report('done', false, {}));
}
