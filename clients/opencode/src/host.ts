// The plugin's work, hook by hook. OpenCode is the host; the sidecar manages each session's context.
//
// Before every model call of a session (`transform`):
//   1. the session's copy in the sidecar is brought up to date (opened with its whole history and
//      the stored boundaries the first time in a sidecar's life, then one `session/sync` batch);
//   2. `rebuild/compute` with the model's window; when the trigger says so, a checkpoint writer
//      (when its watermark covers more than the stored one) and `rebuild/insert` at once, which
//      waits for it ("Preparing conversation context…"); a rebuilt insert's boundary and marks
//      are stored (`StateStore`);
//   3. `request/build` with `hostView`: the messages OpenCode then converts and sends, in its own
//      shape: the boundary and what follows it, never the removed history.
// Anything that fails on the way leaves OpenCode's messages as they were: the model call goes on
// with the unmanaged history, and a sidecar that died is started again at the next call.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isSidecarError, ResponseError, SidecarTimeout, type InsertResult, type ModelLimits, type Sidecar, type StatusNotification } from 'mimo-sidecar-client';
import { type CompactionConfig, type OpenCodeModel, sidecarLimits } from './limits.js';
import { describe, type Logger } from './log.js';
import { modelOf, newestUser, type HostMessage } from './messages.js';
import { Mirror } from './mirror.js';
import { dataOf, type OpenCodeApi } from './opencode_api.js';
import type { PluginSettings } from './options.js';
import { allMarks, emptyRecord, StateStore, type SessionRecord } from './store.js';
import { Supervisor, type Live } from './supervisor.js';
import { openCodeTools, type CallTool } from './tools.js';
import { unsentParts, withoutTransient, withTransient, type Transient } from './view.js';
import { CheckpointWriters } from './writer.js';

/** A session opened in one sidecar incarnation. */
interface Link {
  incarnation: number;
  mirror: Mirror;
  record: SessionRecord;
}

/** What the plugin did at one model call of a session (for the log, and the tests). */
export interface TurnReport {
  sessionId: string;
  managed: boolean;
  outcome?: InsertResult['outcome'];
  messagesBefore: number;
  messagesAfter: number;
  reason?: string;
}

const CHECKPOINT_CONTEXT_MAX = 40_000;
// OpenCode calls the transform hook for its summary right after the compacting hook; a mark older
// than this belongs to a compaction that never got that far.
const COMPACTING_WINDOW_MS = 10_000;

/** The sidecar's `warnings` explain what it did (D21's watermark…); a text naming a tool the
 * model lacks is a fault. */
function warningLevel(warning: string): 'info' | 'warn' {
  return warning.startsWith('named-tool-missing') ? 'warn' : 'info';
}

/** Whether `error` says the sidecar's connection is gone (or hangs), rather than a mistake. */
function connectionFailed(live: Live, error: unknown): boolean {
  const child = live.sidecar.process;
  if (child && (child.exitCode !== null || child.signalCode !== null)) return true;
  if (error instanceof SidecarTimeout || error instanceof ResponseError) return true; // an answer without the sidecar's data: vscode-jsonrpc's own (pending requests of a closed connection)
  return error instanceof Error && (error.name === 'ConnectionError' || /disposed|closed|EPIPE|write after end/i.test(error.message));
}

export class MimoHost {
  readonly supervisor: Supervisor;
  readonly store: StateStore;
  readonly writers: CheckpointWriters;
  private readonly links = new Map<string, Link>();
  private readonly locks = new Map<string, Promise<unknown>>();
  /** Sessions whose next model call is OpenCode's own summary, with when OpenCode said so. */
  private readonly compactingNext = new Map<string, number>();
  private readonly models = new Map<string, OpenCodeModel>();
  private compaction: CompactionConfig = {};
  private toolsOffered = false;
  /** The newest report per session. */
  readonly reports = new Map<string, TurnReport>();

  constructor(
    readonly settings: PluginSettings,
    private readonly client: OpenCodeApi,
    private readonly log: Logger,
    private readonly projectId: string | undefined,
  ) {
    this.supervisor = new Supervisor(settings, log, (status) => this.status(status));
    this.store = new StateStore(settings.stateDir);
    this.writers = new CheckpointWriters(client, log, settings.writer.keepSessions);
  }

  /** Start the sidecar; the OpenCode tools for its model tools (none when it cannot start). */
  async start(): Promise<Record<string, ReturnType<typeof openCodeTools>[string]>> {
    const live = await this.supervisor.ready();
    if (!live || this.settings.toolPrefix === null || !live.tools.length) return {};
    const call: CallTool = (sessionId, name, args) => this.callTool(sessionId, name, args);
    try {
      const tools = openCodeTools(live.tools, call);
      this.toolsOffered = true;
      return tools;
    } catch (error) {
      this.log.log('error', `the sidecar's model tools cannot be offered: ${describe(error)}`);
      return {};
    }
  }

  /** OpenCode's merged config: what its own compaction does. */
  configured(config: { compaction?: CompactionConfig }): void {
    this.compaction = config.compaction ?? {};
  }

  /** The model of a call (`chat.params`): its window, for the next calls' trigger. */
  modelSeen(model: OpenCodeModel): void {
    this.models.set(`${model.providerID}/${model.id}`, model);
  }

  async dispose(): Promise<void> {
    await this.supervisor.stop();
  }

  // -- the transform hook ----------------------------------------------------------------------
  async transform(messages: HostMessage[]): Promise<void> {
    const sessionId = messages[0]?.info.sessionID;
    if (!sessionId) return;
    const history = this.writers.historyOf(sessionId);
    if (history) {
      messages.unshift(...history); // a writer session: its history, then the writer's prompt
      return;
    }
    // OpenCode's own summary call comes right after its compacting hook: it goes as it is.
    const compacting = this.compactingNext.get(sessionId);
    this.compactingNext.delete(sessionId);
    if (compacting !== undefined && Date.now() - compacting < COMPACTING_WINDOW_MS) return;
    await this.serial(sessionId, () => this.manage(sessionId, messages));
  }

  private async manage(sessionId: string, messages: HostMessage[]): Promise<void> {
    const report: TurnReport = { sessionId, managed: false, messagesBefore: messages.length, messagesAfter: messages.length };
    this.reports.set(sessionId, report);
    await this.withSidecar(
      sessionId,
      async (live) => {
        const link = await this.open(live, sessionId);
        const transient = await this.transient(sessionId, messages, link);
        await this.sync(live.sidecar, link, withoutTransient(messages, transient));
        const inserted = await this.rebuildIfDue(live.sidecar, link, messages);
        if (inserted) report.outcome = inserted.outcome;
        const built = await live.sidecar.requestBuild({ sessionId, hostView: true });
        const view = (built.view ?? []) as unknown as HostMessage[];
        if (!view.length) throw new Error('request/build answered no view');
        messages.splice(0, messages.length, ...withTransient(view, transient));
        report.managed = true;
        report.messagesAfter = messages.length;
        for (const warning of built.warnings ?? []) this.log.log(warningLevel(warning), `${sessionId}: request/build: ${warning}`);
      },
      (why) => {
        report.reason = why;
      },
      "this model call goes with OpenCode's own history",
    );
  }

  /**
   * `work` with the live sidecar. A connection that fails on the way (the sidecar died since the
   * last call) is given up and `work` runs once more with a new sidecar, the session opened again;
   * an error answer leaves the sidecar up (the session is opened again next time, in case its copy
   * went astray). When nothing works, `fallback` says why and OpenCode goes on without.
   */
  private async withSidecar(
    sessionId: string,
    work: (live: Live) => Promise<void>,
    fallback: (why: string) => void,
    then: string,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const live = await this.supervisor.ready();
      if (!live) {
        fallback('no sidecar');
        return;
      }
      try {
        await work(live);
        return;
      } catch (error) {
        if (isSidecarError(error)) {
          this.links.delete(sessionId);
          live.sidecar.sessionClose({ sessionId }).catch(() => undefined);
          this.log.log('warn', `${sessionId}: the sidecar answered ${error.code} ${error.message}; ${then}`);
          fallback(describe(error));
          return;
        }
        if (!connectionFailed(live, error)) {
          this.log.log('warn', `${sessionId}: ${describe(error)}; ${then}`);
          fallback(describe(error));
          return;
        }
        this.supervisor.lost(live.incarnation, describe(error));
        if (attempt === 2) {
          this.log.log('warn', `${sessionId}: ${describe(error)}; ${then}`);
          fallback(describe(error));
          return;
        }
      }
    }
  }

  // -- the session's copy --------------------------------------------------------------------------
  private async open(live: Live, sessionId: string): Promise<Link> {
    const known = this.links.get(sessionId);
    if (known && known.incarnation === live.incarnation) return known;
    const record = await this.loadRecord(sessionId);
    const history = dataOf(await this.client.session.messages({ path: { id: sessionId } }), 'reading the session');
    const present = new Set(history.map((m) => m.info.id));
    const undone = record.rebuilds.findIndex((r) => r.newest !== undefined && !present.has(r.newest));
    if (undone >= 0) {
      // OpenCode went back (an undo) to before that rebuild: it, and every later one, are undone.
      const dropped = record.rebuilds.splice(undone);
      this.log.log('info', `${sessionId}: ${dropped.length} rebuild(s) undone with the messages they followed`);
      await this.store.save(record);
    }
    const mirror = new Mirror(sessionId, allMarks(record));
    const messages = mirror.opening(history, record.rebuilds.map((r) => r.boundary));
    await live.sidecar.sessionOpen({
      sessionId,
      ...(this.projectId ? { projectId: this.projectId } : {}),
      messages: messages as unknown as NonNullable<Parameters<Sidecar['sessionOpen']>[0]['messages']>,
      idsAscending: true,
      createCheckpoint: true,
      ...(record.watermark ? { watermark: record.watermark } : {}),
      toolPointers: this.toolsOffered && this.settings.toolPrefix !== null ? { sidecarTools: { prefix: this.settings.toolPrefix } } : {},
    });
    const link: Link = { incarnation: live.incarnation, mirror, record };
    this.links.set(sessionId, link);
    this.log.log(
      'info',
      `${sessionId}: opened in the sidecar (${history.length} messages, ${record.rebuilds.length} stored boundaries${record.watermark ? `, watermark ${record.watermark}` : ''})`,
    );
    return link;
  }

  private async loadRecord(sessionId: string): Promise<SessionRecord> {
    try {
      return await this.store.load(sessionId);
    } catch (error) {
      this.log.log('error', `${sessionId}: its stored boundaries cannot be read (${describe(error)}); it opens without them`);
      return emptyRecord(sessionId);
    }
  }

  /** Parts of the newest user message OpenCode added for this call only (see view.ts). */
  private async transient(sessionId: string, messages: HostMessage[], link: Link): Promise<Transient | undefined> {
    const candidates = unsentParts(messages, (m, p) => link.mirror.knows(m, p));
    const synthetic = candidates?.parts.filter((part) => part.type === 'text' && part.synthetic === true);
    if (!candidates || !synthetic?.length) return undefined;
    let stored = new Set<string>();
    try {
      const message = dataOf(await this.client.session.message({ path: { id: sessionId, messageID: candidates.messageId } }), 'reading a message');
      stored = new Set(message.parts.map((part) => part.id));
    } catch (error) {
      this.log.log('debug', `${sessionId}: ${describe(error)}; its new synthetic parts are taken as this call's own`);
    }
    const parts = synthetic.filter((part) => !stored.has(part.id));
    return parts.length ? { messageId: candidates.messageId, parts } : undefined;
  }

  private async sync(sidecar: Sidecar, link: Link, messages: HostMessage[]): Promise<void> {
    const batch = link.mirror.batch(messages);
    if (!batch) return;
    await sidecar.sessionSync(batch);
    link.mirror.applied(batch);
  }

  // -- the rebuild ---------------------------------------------------------------------------------
  private async rebuildIfDue(sidecar: Sidecar, link: Link, messages: HostMessage[]): Promise<InsertResult | undefined> {
    const sessionId = link.mirror.sessionId;
    const model = await this.limitsFor(messages);
    if (!model) return undefined;
    const computed = await sidecar.rebuildCompute({ sessionId, model, preview: false });
    if (!computed.trigger.shouldRebuild) return undefined;
    const watermark = computed.watermark?.messageId;
    let writing: Promise<unknown> | undefined;
    if (watermark && watermark !== computed.storedWatermark && !computed.writerInFlight) {
      if (this.settings.writer.enabled) {
        const prepared = await sidecar.checkpointPrepare({ sessionId, hostView: true });
        const user = newestUser(messages);
        const writerModel = this.settings.writer.model ?? modelOf(user);
        writing = this.writers
          .run({
            sidecar,
            sessionId,
            prepared,
            ...(writerModel ? { model: writerModel } : {}),
            ...(typeof user?.info.agent === 'string' ? { agent: user.info.agent } : {}),
          })
          .then(async (written) => {
            if (written.outcome !== 'committed') return;
            link.record.watermark = written.watermark;
            await this.store.save(link.record);
          });
      } else if (!computed.storedWatermark) {
        return undefined; // no writer, none ever succeeded: the insert could only say so
      }
    } else if (!computed.writerInFlight) {
      // The stored checkpoint already covers that watermark: the preview says what an insert
      // would answer now (protocol.md "When to skip the writer").
      const again = await sidecar.rebuildCompute({ sessionId, model, preview: true });
      if (again.preview?.outcome !== 'rebuilt') return undefined;
    }
    const inserted = await sidecar.rebuildInsert({ sessionId, reason: 'auto' });
    await writing;
    await this.inserted(link, inserted, messages.at(-1)?.info.id);
    return inserted;
  }

  private async inserted(link: Link, inserted: InsertResult, newest: string | undefined): Promise<void> {
    const sessionId = link.mirror.sessionId;
    if (inserted.outcome === 'rebuilt' && inserted.message) {
      const boundary = inserted.message as unknown as HostMessage;
      const marks = inserted.compacted ?? [];
      link.record.rebuilds.push({ boundary, marks, ...(newest ? { newest } : {}) });
      link.mirror.inserted(boundary, marks);
      await this.store.save(link.record);
      const sizes = inserted.sizes ? ` (~${inserted.sizes.beforeTokens} → ~${inserted.sizes.afterTokens} tokens)` : '';
      this.log.log('info', `${sessionId}: context rebuilt${sizes}: boundary ${boundary.info.id} after ${inserted.watermark}, ${marks.length} results cleared`);
      for (const warning of inserted.warnings ?? []) this.log.log(warningLevel(warning), `${sessionId}: rebuild/insert: ${warning}`);
      this.toast(inserted.statusText ?? 'Context rebuilt from the checkpoint.', 'success');
      return;
    }
    const why = inserted.detail ?? inserted.statusText ?? '';
    this.log.log('info', `${sessionId}: rebuild/insert answered ${inserted.outcome}${why ? `: ${why}` : ''}`);
    if (inserted.outcome === 'writer-failed' || inserted.outcome === 'insert-failed') {
      this.toast(`Conversation context not rebuilt (${inserted.outcome}); OpenCode compacts it if it must.`, 'warning');
    }
  }

  /** The sidecar's view of the window of the model the next call goes to. */
  private async limitsFor(messages: HostMessage[]): Promise<ModelLimits | undefined> {
    const ref = modelOf(newestUser(messages));
    if (!ref) return undefined;
    const key = `${ref.providerID}/${ref.modelID}`;
    if (!this.models.has(key)) {
      try {
        for (const provider of dataOf(await this.client.config.providers(), 'listing the providers').providers) {
          for (const model of Object.values(provider.models)) this.models.set(`${provider.id}/${model.id}`, { ...model, providerID: provider.id });
        }
      } catch (error) {
        this.log.log('warn', `${describe(error)}: the trigger waits for the model's window`);
      }
    }
    const model = this.models.get(key);
    return model ? sidecarLimits(model, this.compaction) : undefined;
  }

  // -- the other hooks -----------------------------------------------------------------------------
  /** A call of one of the sidecar's model tools, in the session the model is in. */
  async callTool(sessionId: string, name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
    return this.serial(sessionId, async () => {
      let answer = { text: '', isError: true };
      await this.withSidecar(
        sessionId,
        async (live) => {
          await this.open(live, sessionId);
          const result = await live.sidecar.toolsCall({ sessionId, name, arguments: args, prefix: this.settings.toolPrefix });
          answer = { text: result.content.map((block) => block.text).join('\n'), isError: result.isError };
        },
        (why) => {
          answer = { text: `The context manager (mimo-sidecar) cannot answer now: ${why}.`, isError: true };
        },
        'the tool call answers an error',
      );
      return answer;
    });
  }

  /** OpenCode compacts the session itself: its summary call goes as it is, told the checkpoint. */
  async compacting(sessionId: string, output: { context: string[] }): Promise<void> {
    if (this.writers.isWriter(sessionId)) return;
    this.compactingNext.set(sessionId, Date.now());
    const record = this.links.get(sessionId)?.record;
    if (!record?.watermark) return; // no writer has written this session's checkpoint
    try {
      const text = await readFile(join(this.settings.memoryRoot, 'sessions', sessionId, 'checkpoint.md'), 'utf8');
      output.context.push(
        `The session's checkpoint (kept by mimo-sidecar; it covers the conversation up to message ${record.watermark}):\n\n${text.slice(0, CHECKPOINT_CONTEXT_MAX)}`,
      );
    } catch (error) {
      this.log.log('debug', `${sessionId}: no checkpoint for OpenCode's compaction: ${describe(error)}`);
    }
  }

  /** OpenCode's bus events: removals (an undo, a deleted session) reach the sidecar's copy. */
  async event(event: { type: string; properties: Record<string, unknown> }): Promise<void> {
    const p = event.properties;
    if (event.type === 'message.removed' && typeof p.sessionID === 'string' && typeof p.messageID === 'string') {
      const [sessionId, messageId] = [p.sessionID, p.messageID];
      await this.serial(sessionId, () => this.removed(sessionId, messageId));
    } else if (event.type === 'message.part.removed' && typeof p.sessionID === 'string') {
      this.links.get(p.sessionID)?.mirror.partRemoved(String(p.messageID), String(p.partID));
    } else if (event.type === 'session.deleted') {
      const id = (p.info as { id?: unknown } | undefined)?.id;
      if (typeof id !== 'string' || this.writers.isWriter(id)) return;
      await this.serial(id, async () => {
        const link = this.links.get(id);
        this.links.delete(id);
        const live = this.supervisor.current();
        if (link && live && link.incarnation === live.incarnation) await live.sidecar.sessionClose({ sessionId: id }).catch(() => undefined);
        await this.store.remove(id).catch(() => undefined);
      });
    }
  }

  /** OpenCode removed a message (an undo): from the sidecar's copy too, with every rebuild
   * inserted after it (it summarised a history that is no longer the session's). */
  private async removed(sessionId: string, messageId: string): Promise<void> {
    const link = this.links.get(sessionId);
    if (!link) return; // not open in this process: the next open checks the history (open())
    link.mirror.messageRemoved(messageId);
    const undone = link.record.rebuilds.findIndex((r) => r.boundary.info.id > messageId);
    if (undone < 0) return;
    for (const rebuild of link.record.rebuilds.splice(undone)) link.mirror.undone(rebuild.boundary.info.id, rebuild.marks);
    this.log.log('info', `${sessionId}: the undo went back before a rebuild: its boundary is removed`);
    await this.store.save(link.record);
  }

  // -- status ----------------------------------------------------------------------------------
  private status(status: StatusNotification): void {
    if (status.state !== 'busy' || !status.message) return;
    this.log.log('info', `${status.sessionId}: ${status.message}`);
    this.toast(status.message, 'info');
  }

  private toast(message: string, variant: 'info' | 'success' | 'warning'): void {
    if (!this.settings.toasts) return;
    this.client.tui.showToast({ body: { title: 'mimo-sidecar', message, variant } }).catch(() => undefined);
  }

  /** One piece of work at a time per session (the copy, its rebuilds, its tool calls). */
  private serial<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(sessionId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(work);
    this.locks.set(sessionId, next);
    next.finally(() => {
      if (this.locks.get(sessionId) === next) this.locks.delete(sessionId);
    }).catch(() => undefined);
    return next;
  }
}
