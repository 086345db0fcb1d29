// What the user sees, computed from real answers: the status bar item, progress notifications,
// the composition (from `mimo-sidecar inspect --json` on the bundled sample, and from a live
// session's dry run), its HTML, and the rebuild preview document.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Sidecar, type BuildResult, type ComputeResult, type SessionInfo } from 'mimo-sidecar-client';
import type { SidecarState } from '../../src/api.js';
import { fromInspect, fromLive, type InspectJson } from '../../src/composition.js';
import { compositionHtml, escapeHtml } from '../../src/compositionHtml.js';
import { previewDocument } from '../../src/previewDocument.js';
import { ProgressTracker } from '../../src/progress.js';
import { applyStatus, statusView } from '../../src/statusView.js';
import { memoryRoot, MODEL, python, repo, session } from './fixtures.js';

const running: SidecarState = { state: 'running', pid: 4242, version: '0.1.0', generation: 1, restarts: 0 };

describe('the status bar item', () => {
  it('shows the status text of a waiting rebuild verbatim, and the idle item after it', () => {
    const busy = new Map<string, string>();
    applyStatus(busy, 'ses_a', 'busy', 'Preparing conversation context…');
    assert.equal(statusView(running, busy, 1).text, '$(sync~spin) Preparing conversation context…');
    applyStatus(busy, 'ses_b', 'busy', 'Rebuilding the conversation context from the checkpoint…');
    const two = statusView(running, busy, 2);
    assert.equal(two.text, '$(sync~spin) Rebuilding the conversation context from the checkpoint… (+1)');
    assert.equal(two.tooltip, 'ses_a: Preparing conversation context…\nses_b: Rebuilding the conversation context from the checkpoint…');
    applyStatus(busy, 'ses_a', 'idle', '');
    applyStatus(busy, 'ses_b', 'idle', '');
    const idle = statusView(running, busy, 2);
    assert.equal(idle.text, '$(check) MiMo');
    assert.equal(idle.tooltip, 'mimo-sidecar 0.1.0 running (pid 4242), 2 sessions open');
  });

  it('says when the sidecar is not started, restarting or stopped for good', () => {
    const none = new Map<string, string>();
    assert.match(statusView({ state: 'stopped', generation: 0, restarts: 0 }, none, 0).tooltip, /starts when an agent extension or a command needs it/);
    const restarting = statusView({ state: 'restarting', generation: 1, restarts: 1, detail: 'exited unexpectedly (signal SIGKILL)' }, none, 1);
    assert.deepEqual([restarting.severity, restarting.tooltip], ['warning', 'MiMo sidecar: exited unexpectedly (signal SIGKILL)']);
    const failed = statusView({ state: 'failed', generation: 6, restarts: 5, detail: 'the sidecar exited 6 times' }, none, 0);
    assert.deepEqual([failed.text, failed.severity], ['$(error) MiMo', 'error']);
    assert.match(statusView({ ...running, restarts: 2 }, none, 1).tooltip, /1 session open; restarted 2 times$/);
  });
});

describe('progress notifications', () => {
  it('opens one per token at begin, updates it at report, closes it at end or when cleared', () => {
    const log: string[] = [];
    const tracker = new ProgressTracker((title, message) => {
      log.push(`open ${title}: ${message}`);
      return { report: (m) => log.push(`report ${m}`), done: () => log.push(`done ${title}`) };
    });
    tracker.handle({ token: 'mimo-rebuild-1', value: { kind: 'begin', title: 'Rebuilding conversation context', message: 'Preparing conversation context…' } });
    tracker.handle({ token: 'mimo-rebuild-1', value: { kind: 'report', message: 'Context rebuilt' } });
    tracker.handle({ token: 'mimo-rebuild-2', value: { kind: 'begin', title: 'Second', message: 'm' } });
    tracker.handle({ token: 'mimo-rebuild-1', value: { kind: 'end' } });
    assert.equal(tracker.size, 1);
    tracker.clear();
    assert.deepEqual(log, ['open Rebuilding conversation context: Preparing conversation context…', 'report Context rebuilt', 'open Second: m', 'done Rebuilding conversation context', 'done Second']);
    assert.equal(tracker.size, 0);
  });
});

describe('the composition of a transcript (mimo-sidecar inspect --json)', () => {
  let json: InspectJson;
  before(() => {
    const out = execFileSync(python, ['-m', 'mimo_sidecar', 'inspect', join(repo, 'examples', 'sample', 'session.json'), '--memory-root', join(repo, 'examples', 'sample', 'memory'), '--json'], {
      cwd: mkdtempSync(join(tmpdir(), 'mimo-vscode-inspect-')),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    json = JSON.parse(out) as InspectJson;
  });

  it("carries inspect's numbers unchanged", () => {
    const c = fromInspect(json);
    assert.equal(c.title, json.source.sessionId);
    assert.equal(c.standing?.count, json.trigger.count);
    assert.equal(c.standing?.usable, json.trigger.usable);
    assert.equal(c.standing?.shouldRebuild, true);
    assert.equal(c.watermark.used, json.watermark.messageId);
    assert.equal(c.watermark.usedHow, "the file's stored watermark");
    assert.equal(c.request.beforeTokens, json.request.before.estimatedTokens);
    assert.equal(c.request.afterTokens, json.request.after?.estimatedTokens);
    assert.equal(c.request.afterMessages, json.request.after?.messages);
    assert.equal(c.request.outcome, 'rebuilt');
    assert.deepEqual(c.sections.map((s) => s.tokens), json.rebuild.report?.sections.map((s) => s.tokens));
    assert.equal(c.sections.find((s) => s.heading === 'Recent user input (verbatim)')?.status, 'in full');
    assert.equal(c.totalTokens, json.rebuild.report?.totalTokens);
    assert.deepEqual(c.fidelity.map((f) => [f.mark, f.label]), [
      ['ok', 'Newest user ask'],
      ['ok', 'Open tasks'],
      ['ok', 'Newest tool error'],
      ['ok', 'Sections cut'],
    ]);
    assert.equal(c.fidelity[1]?.text, `${json.fidelity?.tasks.openListed} of ${json.fidelity?.tasks.openHeld} listed in the Tasks ledger`);
    assert.equal(c.accuracy[0]?.ratio, json.estimateAccuracy[0]?.ratio);
  });

  it('renders it as static HTML, every section and figure in it', () => {
    const c = fromInspect(json);
    const html = compositionHtml(c, 'vscode-resource:');
    assert.doesNotMatch(html, /<script/i);
    assert.match(html, /Content-Security-Policy" content="default-src 'none'; style-src vscode-resource: 'unsafe-inline';"/);
    for (const s of c.sections) assert.ok(html.includes(`<td>${escapeHtml(s.heading)}</td><td class="num">${s.tokens.toLocaleString('en-US')}</td>`), s.heading);
    assert.match(html, new RegExp(`Outcome <strong>rebuilt</strong> \\(${Math.round((1 - (c.request.afterTokens ?? 0) / (c.request.beforeTokens ?? 1)) * 100)}% smaller\\)`));
  });

  it('escapes what the session holds', () => {
    const c = fromInspect({ ...json, source: { ...json.source, sessionId: '<img src=x onerror=alert(1)>' } });
    const html = compositionHtml(c, 'x');
    assert.ok(!html.includes('<img'));
    assert.ok(html.includes('&lt;img src=x onerror=alert(1)&gt;'));
  });

  it('refuses a layout it does not know', () => {
    assert.throws(() => fromInspect({ ...json, inspect: 2 }), /layout 2/);
  });
});

describe('a live session: its composition and the rebuild preview', () => {
  let sidecar: Sidecar;
  let info: SessionInfo;
  let computed: ComputeResult;
  let built: BuildResult;
  before(async () => {
    sidecar = Sidecar.spawn({ python, cwd: tmpdir() });
    await sidecar.initialize({ processId: process.pid, capabilities: {}, initializationOptions: { memoryRoot: memoryRoot() } });
    await sidecar.sessionOpen(session('ses_views'));
    await sidecar.checkpointWriterStarted({ sessionId: 'ses_views' });
    await sidecar.checkpointWriterFinished({ sessionId: 'ses_views', outcome: 'success' });
    info = await sidecar.sessionGet({ sessionId: 'ses_views' });
    computed = await sidecar.rebuildCompute({ sessionId: 'ses_views', model: MODEL, preview: true, includeText: true });
    built = await sidecar.requestBuild({ sessionId: 'ses_views' });
  });
  after(async () => {
    await sidecar.close();
  });

  it('is the dry run of rebuild/compute, with the request as request/build sends it', () => {
    const c = fromLive(info, computed, built);
    assert.match(c.source, /revision 1, 8 stored messages\): a dry run of rebuild\/compute, nothing changed/);
    assert.equal(c.request.outcome, computed.preview?.outcome);
    assert.equal(c.request.beforeMessages, built.messages.length);
    assert.equal(c.request.beforeTokens, built.estimatedTokens);
    assert.equal(c.request.afterTokens, computed.preview?.sizes?.afterTokens);
    assert.equal(c.watermark.used, info.watermark);
    assert.deepEqual(c.sections.map((s) => s.heading), computed.preview?.report.sections.map((s) => s.heading.replace(/^#+\s*/, '')));
    assert.equal(c.standing?.shouldRebuild, true);
  });

  it('previews the rebuild text the model would read, with the sections against their caps', () => {
    const text = previewDocument('ses_views', computed);
    const rebuildText = computed.preview?.report.text ?? '';
    assert.ok(rebuildText.length > 100);
    assert.ok(text.includes(rebuildText), 'the whole rebuild text');
    assert.match(text, /^# Rebuild preview: ses_views$/m);
    assert.match(text, new RegExp(`Outcome now: \\*\\*${computed.preview?.outcome}\\*\\*`));
    assert.match(text, /\| Recent user input \(verbatim\) \| [\d,]+ \| 16,000 \| in full \|/);
    assert.match(text, /- ✓ Newest user ask: verbatim in Recent user input/);
  });
});
