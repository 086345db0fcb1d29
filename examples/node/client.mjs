#!/usr/bin/env node
// mimo-sidecar example client (Node, with the typed client of clients/typescript over vscode-jsonrpc 10).
//
// Copy this into your IDE extension or agent host and keep the parts you need. It drives one full
// rebuild cycle against a real sidecar process, exactly as a host would, through the typed client
// (`mimo-sidecar-client`: one method per protocol method, the wire types generated from the
// sidecar's schemas; a TypeScript host gets every params and result typed):
//
//   spawn -> initialize -> initialized -> session/open (createCheckpoint: the template)
//   -> session/sync (streamed part) -> a deliberate bad request (-32602) -> request/build (before)
//   -> rebuild/compute -> checkpoint/prepare (registers the writer, gives its one model request)
//   -> rebuild/insert (a cold start: waits for that first writer)
//   -> the stand-in model fills the template (~1 s) -> checkpoint/commit -> insert returns
//   -> request/build (after) -> cancellation demo -> shutdown -> exit
//
// Usage:
//   node client.mjs [memoryRoot] [python]
//
//   memoryRoot  directory used as the sidecar's memory root. Default: $MIMO_MEMORY_ROOT, else a
//               fresh temporary directory. Created if missing.
//   python      interpreter that has mimo_sidecar installed. Default: $MIMO_SIDECAR_PYTHON, else
//               `python3`.
//
// Everything the demo prints goes to stdout; the sidecar's own log goes to stderr, prefixed with
// "[sidecar]". The last stdout line is `RESULT {json}`: a machine-readable summary for tests.
//
// The protocol is documented in ../../protocol.md. Section names below refer to it.

import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

// The typed client (clients/typescript): it spawns the sidecar and speaks vscode-jsonrpc to it.
import { CancellationTokenSource, ErrorCodes, ResponseError, Sidecar } from 'mimo-sidecar-client';
// The AI SDK's own ModelMessage schema (zod): request/build's default output must pass it as is.
import { modelMessageSchema } from 'ai';
// The checkpoint writer's "model": a deterministic stand-in that fills the template (no network).
import { standinCheckpoint } from './standin_writer.mjs';

// ---------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------

const memoryRoot = resolve(
  process.argv[2] || process.env.MIMO_MEMORY_ROOT || mkdtempSync(join(tmpdir(), 'mimo-memory-')),
);
const python = process.argv[3] || process.env.MIMO_SIDECAR_PYTHON || 'python3';

const SESSION_ID = 'ses_nodeExampleDemo01';
const PROJECT_ID = 'prj_reports_web';

// The model this (pretend) session runs on. The sidecar needs the window to decide the trigger:
// with the default trigger_ratio 0.9 the line is floor(200000 * 0.9) = 180000 tokens.
const MODEL = {
  contextWindow: 200000,
  maxOutputTokens: 32000,
  providerId: 'anthropic',
  modelId: 'claude-sonnet-4',
};

// How long the demo's checkpoint writer (its model call) runs before its reply is committed.
const WRITER_RUNTIME_MS = 1000;
// Safety net: if the demo hangs (it should not), kill our sidecar and fail.
const OVERALL_TIMEOUT_MS = 50000;

// ---------------------------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------------------------

const log = (...args) => console.log(...args);
const section = (title) => log(`\n== ${title} ${'='.repeat(Math.max(0, 70 - title.length))}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// MiMo v2 ascending IDs (docs/data-model.md "Ordering"): prefix + 16 lowercase hex + 9 letters/digits.
// While every ID has this shape the sidecar orders messages by comparing IDs as strings ("ID
// mode"). Here the 16 hex digits are the creation time in ms (13 digits) and a counter (3 digits),
// so string order == creation order. Hosts with other ID schemes pass `idsAscending: true` or a
// `seq` number instead.
let idCounter = 0;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function mimoId(prefix, timeMs) {
  idCounter = (idCounter + 1) % 0x1000;
  const hex = timeMs.toString(16).padStart(13, '0') + idCounter.toString(16).padStart(3, '0');
  const tail = Array.from(randomBytes(9), (b) => ALNUM[b % ALNUM.length]).join('');
  return `${prefix}_g${hex}${tail}`;
}

function printTable(rows, columns) {
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells) => cells.map((s, i) => String(s ?? '').padEnd(widths[i])).join('  ');
  log(line(columns));
  log(line(widths.map((w) => '-'.repeat(w))));
  for (const r of rows) log(line(columns.map((c) => r[c])));
}

// ---------------------------------------------------------------------------------------------
// The demo session, in MiMo's inline shape (docs/data-model.md "Data model")
// ---------------------------------------------------------------------------------------------

function buildSession() {
  const t0 = Date.now() - 20 * 60 * 1000; // the conversation started 20 minutes ago
  const at = (sec) => t0 + sec * 1000;
  const messages = [];

  const turnModel = { providerID: MODEL.providerId, modelID: MODEL.modelId };

  const user = (sec, text) => {
    const id = mimoId('msg', at(sec));
    messages.push({
      info: { id, sessionID: SESSION_ID, role: 'user', time: { created: at(sec) }, agent: 'build', model: turnModel },
      parts: [{ id: mimoId('prt', at(sec)), sessionID: SESSION_ID, messageID: id, type: 'text', text }],
    });
    return id;
  };

  // One finished assistant step. `tokens` is the provider usage of that step; `finish` is the
  // mapped stop reason ("tool-calls" for a tool-use stop, "stop" for a natural end).
  const assistant = (sec, endSec, finish, tokens, makeParts) => {
    const id = mimoId('msg', at(sec));
    const part = (fields) => ({ id: mimoId('prt', at(sec)), sessionID: SESSION_ID, messageID: id, ...fields });
    messages.push({
      info: {
        id, sessionID: SESSION_ID, role: 'assistant', agent: 'build',
        time: { created: at(sec), completed: at(endSec) },
        providerID: MODEL.providerId, modelID: MODEL.modelId,
        finish, tokens,
      },
      parts: makeParts(part, (s) => at(s)),
    });
    return id;
  };

  const usage = (input, output, cacheRead) => ({ input, output, reasoning: 0, cache: { read: cacheRead, write: 0 } });

  // An inline tool part: the call and its result in one part (docs/data-model.md "Parts and tool-call shapes").
  const tool = (part, at, tool, callNo, input, output, title, startSec, endSec) =>
    part({
      type: 'tool', callID: `toolu_${String(callNo).padStart(2, '0')}`, tool,
      state: { status: 'completed', input, output, title, metadata: {}, time: { start: at(startSec), end: at(endSec) } },
    });

  const csvSource = [
    "import type { Row } from '../model';",
    "",
    "// Column order of the export; the reports page and the nightly job both read it.",
    "export const HEADER = ['id', 'customer', 'total'];",
    "",
    "// RFC 4180 quoting: a field with a comma, a quote or a line break is quoted,",
    "// and quotes inside it are doubled.",
    "export function quote(field: string): string {",
    "  if (!/[\",\\r\\n]/.test(field)) return field;",
    "  return '\"' + field.replace(/\"/g, '\"\"') + '\"';",
    "}",
    "",
    "// Totals are written with two decimals and a dot, whatever the user's locale.",
    "export function formatTotal(total: number): string {",
    "  return total.toFixed(2);",
    "}",
    "",
    "// One CSV line per row, in the order the caller gives (the page sorts by customer).",
    "export function toCsv(rows: Row[]): string {",
    "  const out = [HEADER.join(',')];",
    "  for (const r of rows) {",
    "    if (!/^[\\x20-\\x7e]*$/.test(r.name)) continue; // FIXME: why?",
    "    out.push([r.id, quote(r.name), r.total.toFixed(2)].join(','));",
    "  }",
    "  return out.join('\\n');",
    "}",
  ].join('\n');

  // What vitest prints for csv.test.ts: one line per test, then the summary.
  const csvTests = [
    'writes the header first',
    'writes one line per row, in the given order',
    'quotes a customer name holding a comma',
    'doubles the quotes inside a quoted field',
    'writes totals with two decimals',
    'writes an empty export as the header alone',
  ];
  const vitestReport = (tests, startedAt, ms) => [
    ` ✓ csv.test.ts (${tests.length} tests) ${ms}ms`,
    ...tests.map((t) => `   ✓ toCsv > ${t}`),
    '', ' Test Files  1 passed (1)', `      Tests  ${tests.length} passed (${tests.length})`,
    `   Start at  ${startedAt}`, `   Duration  ${ms + 560}ms`, '',
  ].join('\n');

  user(0, 'The CSV export on the reports page silently drops every row whose customer name has accents (e.g. "Zoë Müller"). Can you find out why and fix it?');

  assistant(4, 9, 'tool-calls', usage(2100, 160, 151000), (part, at) => [
    part({ type: 'step-start' }),
    part({ type: 'reasoning', text: 'Start with the exporter itself.', time: { start: at(4), end: at(5) } }),
    tool(part, at, 'read', 1, { filePath: 'src/reports/export/csv.ts' }, csvSource, 'src/reports/export/csv.ts', 5, 6),
    part({ type: 'step-finish', reason: 'tool-calls' }),
  ]);

  assistant(10, 24, 'tool-calls', usage(2600, 210, 153000), (part, at) => [
    part({ type: 'text', text: 'Line 4 skips any name outside printable ASCII. Let me confirm with the existing tests first.' }),
    tool(part, at, 'bash', 2, { command: 'npm test -- csv', description: 'Run the CSV tests' },
      '> reports@2.3.1 test\n> vitest run csv\n\n' + vitestReport(csvTests, '09:41:12', 41),
      'npm test -- csv', 12, 23),
  ]);

  assistant(25, 38, 'tool-calls', usage(2900, 540, 154500), (part, at) => [
    part({ type: 'text', text: 'The tests only cover ASCII names. Removing the filter and adding a regression test.' }),
    tool(part, at, 'edit', 3,
      { filePath: 'src/reports/export/csv.ts', oldString: "    if (!/^[\\x20-\\x7e]*$/.test(r.name)) continue; // FIXME: why?\n", newString: '' },
      'Edit applied successfully.', 'src/reports/export/csv.ts', 30, 31),
    tool(part, at, 'bash', 4, { command: 'npm test -- csv', description: 'Re-run the CSV tests' },
      vitestReport([...csvTests, 'keeps customer names with accents (Zoë Müller)'], '09:43:02', 44),
      'npm test -- csv', 32, 37),
  ]);

  assistant(39, 44, 'stop', usage(3300, 120, 155800), (part) => [
    part({ type: 'text', text: 'Fixed: `toCsv` skipped non-ASCII names (leftover debugging filter). Removed it and added a test with "Zoë Müller".' }),
  ]);

  user(120, 'Thanks! Excel still shows "ZoÃ« MÃ¼ller" when I open the file. Add a UTF-8 BOM and run the whole suite.');

  // The newest assistant step stopped for tool use at ~90% of the 200k window:
  // count = input + output + cache.read + cache.write = 3400 + 1200 + 176000 = 180600 >= 180000.
  // Its bash call is still running when the session is opened; we stream its result below.
  let runningBash;
  const last = assistant(125, 131, 'tool-calls', usage(3400, 1200, 176000), (part, at) => {
    const edit = tool(part, at, 'edit', 5,
      { filePath: 'src/reports/export/csv.ts', oldString: "  return out.join('\\n');", newString: "  return '\\uFEFF' + out.join('\\r\\n');" },
      'Edit applied successfully.', 'src/reports/export/csv.ts', 127, 128);
    runningBash = part({
      type: 'tool', callID: 'toolu_06', tool: 'bash',
      state: { status: 'running', input: { command: 'npm test', description: 'Run the full test suite' }, title: 'npm test', metadata: {}, time: { start: at(129) } },
    });
    return [part({ type: 'text', text: 'Adding the BOM and switching to CRLF line endings, which Excel prefers.' }), edit, runningBash];
  });

  // The part as it looks once the tool has finished (same id: the sync replaces it in place).
  const finishedBash = {
    ...runningBash,
    state: {
      ...runningBash.state,
      status: 'completed',
      output: ' ✓ csv.test.ts (7 tests)\n ✓ totals.test.ts (12 tests)\n ✓ filters.test.ts (9 tests)\n\n Test Files  3 passed (3)\n      Tests  28 passed (28)\n',
      time: { start: at(129), end: at(141) },
    },
  };

  return {
    messages,
    lastAssistantId: last,
    finishedBash,
    tasks: [
      { id: 'T1', status: 'in_progress', summary: 'Fix CSV export for non-ASCII customer names', created_at: at(3) },
    ],
    requestPrefix: {
      system: ['You are a coding agent working in the reports-web repository.'],
      tools: [{ name: 'read' }, { name: 'bash' }, { name: 'edit' }],
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------

// Every model message checked against the `ai` package's ModelMessage schema: the failures, if any.
function schemaErrors(messages) {
  const errors = [];
  messages.forEach((message, index) => {
    const parsed = modelMessageSchema.safeParse(message);
    if (!parsed.success) errors.push({ index, issue: parsed.error.issues[0]?.message ?? 'invalid' });
  });
  return errors;
}

const result = {
  ok: false,
  statuses: [],          // rebuild/status notifications: {state, message}
  progressKinds: [],     // $/progress value.kind values, in order
  logMessages: [],       // window/logMessage texts
  shouldRebuild: null,
  insertOutcome: null,
  waitResult: null,
  boundaryRole: null,
  boundaryFirstPartType: null,
  boundaryTopic: null,   // the Topic line of the checkpoint in the boundary's rebuild text
  checkpointCreated: null, // session/open created checkpoint.md from the template
  prepareStarted: null,  // checkpoint/prepare registered the writer
  instructionsLast: null, // the writer's instructions are the last content of its request
  checkpointTopic: null, // the Topic line of the committed checkpoint
  commitWatermark: null, // the watermark stored by checkpoint/commit
  buildBefore: null,     // {messages, estimatedTokens}
  buildAfter: null,
  invalidParamsCode: null,
  cancelCode: null,
  cancelKeptRevision: null, // the cancelled rebuild inserted nothing
  exitCode: null,
};

let child; // the sidecar process (module scope so a failure can stop it)

async function main() {
  mkdirSync(memoryRoot, { recursive: true });

  // --- 1. Spawn the sidecar ------------------------------------------------------------------
  // stdout carries only JSON-RPC frames; stderr carries the sidecar's log (show it, never parse it).
  section('spawn');
  log(`python: ${python}`);
  log(`memory root: ${memoryRoot}`);
  const sidecar = Sidecar.spawn({ python, onLog: (line) => console.error(`[sidecar] ${line}`) });
  child = sidecar.process;
  child.on('error', (err) => {
    // e.g. ENOENT: the interpreter does not exist. Nothing will ever answer: give up now.
    result.error = `could not start ${python}: ${err.message}`;
    console.error(`[client] ${result.error}`);
    log(`RESULT ${JSON.stringify(result)}`);
    process.exit(1);
  });

  const killTimer = setTimeout(() => {
    console.error('[client] timed out; killing the sidecar');
    child.kill('SIGKILL');
  }, OVERALL_TIMEOUT_MS);
  killTimer.unref();

  // --- 2. The sidecar -> client handlers -------------------------------------------------------
  // Busy/idle while a rebuild waits for the checkpoint writer. Show it in your status bar.
  sidecar.onRebuildStatus((p) => {
    result.statuses.push({ state: p.state, message: p.message });
    log(`  <- rebuild/status ${p.sessionId}: ${p.state} "${p.message}"`);
  });
  // Configuration warnings (unknown or unused keys).
  sidecar.onWindowLogMessage((p) => {
    result.logMessages.push(p.message);
    log(`  <- window/logMessage (type ${p.type}): ${p.message}`);
  });
  // LSP work-done progress (we advertise window.workDoneProgress in initialize). The client answers
  // window/workDoneProgress/create with null itself; the handler only hears of it.
  sidecar.onWindowWorkDoneProgressCreate((p) => {
    log(`  <- window/workDoneProgress/create token=${JSON.stringify(p.token)}`);
  });
  sidecar.onProgress((p) => {
    result.progressKinds.push(p.value?.kind);
    const v = p.value ?? {};
    log(`  <- $/progress ${v.kind}${v.title ? ` "${v.title}"` : ''}${v.message ? `: ${v.message}` : ''}${v.cancellable ? ' (cancellable)' : ''}`);
  });
  // The connection itself (vscode-jsonrpc's MessageConnection) is `sidecar.connection`. When the
  // sidecar's stdout closes (it exited, or crashed) the client disposes it, which rejects the
  // requests still waiting, so nothing awaits forever. A real extension would decide here whether
  // to restart the sidecar and re-open its sessions (the sidecar's state lives in memory only).
  sidecar.connection.onError(([err]) => console.error(`[client] connection error: ${err.message}`));
  sidecar.connection.onClose(() => log('  (connection closed)'));

  // --- 3. initialize / initialized ------------------------------------------------------------
  section('initialize');
  const init = await sidecar.initialize({
    processId: process.pid, // the sidecar exits within ~3 s if this process dies
    clientInfo: { name: 'mimo-sidecar-node-example', version: '0.1.0' },
    rootUri: null,
    capabilities: { window: { workDoneProgress: true } },
    initializationOptions: {
      memoryRoot, // must be an absolute path of an existing directory
      config: {
        checkpoint: {
          // Short writer waits for the demo (defaults: 30 s / 5 min).
          writer_wait_ms: { with_watermark: 5000, without_watermark: 10000 },
        },
      },
    },
  });
  log(`server: ${init.serverInfo?.name} ${init.serverInfo?.version}`);
  await sidecar.initialized();

  // --- 4. session/open ------------------------------------------------------------------------
  section('session/open');
  const demo = buildSession();
  const opened = await sidecar.sessionOpen({
    sessionId: SESSION_ID,
    projectId: PROJECT_ID,
    messages: demo.messages,
    tasks: demo.tasks,
    actors: [],
    requestPrefix: demo.requestPrefix,
    // A rebuild renders from the session's checkpoint.md. Ask the sidecar to create it from the
    // template when it is missing: the checkpoint writer below fills it in.
    createCheckpoint: true,
  });
  result.checkpointCreated = opened.checkpointCreated;
  log(`opened ${opened.sessionId} with ${demo.messages.length} messages, revision ${opened.revision}`);
  log(`checkpoint.md ${opened.checkpointCreated ? 'created from the template' : 'already there (kept)'}`);
  let revision = opened.revision;

  // --- 5. session/sync: stream a part ---------------------------------------------------------
  // The running bash call finished: upsert the part (same id => replaced in place). baseRevision
  // makes the batch apply only if nobody changed the session meanwhile (else error 1002).
  section('session/sync (streamed part)');
  const synced = await sidecar.sessionSync({
    sessionId: SESSION_ID,
    baseRevision: revision,
    upsertParts: [{ messageId: demo.lastAssistantId, part: demo.finishedBash }],
  });
  log(`bash part ${demo.finishedBash.id} -> completed; revision ${revision} -> ${synced.revision}`);
  revision = synced.revision;

  // --- 6. A deliberate bad request -------------------------------------------------------------
  // Values are never coerced: a string baseRevision is a schema error (-32602). The batch is
  // rejected as a whole and the revision does not change.
  section('bad request (expected to fail)');
  try {
    await sidecar.sessionSync({ sessionId: SESSION_ID, baseRevision: String(revision) });
    log('unexpected: the bad request succeeded');
  } catch (err) {
    if (!(err instanceof ResponseError)) throw err;
    result.invalidParamsCode = err.code;
    const fields = (err.data?.errors ?? []).map((e) => e.field).join(', ');
    log(`ResponseError ${err.code}${err.code === ErrorCodes.InvalidParams ? ' (InvalidParams)' : ''}: ${err.message}`);
    log(`data.name=${err.data?.name}; fields at fault: ${fields}`);
  }

  // --- 7. request/build before the rebuild ----------------------------------------------------
  section('request/build (before)');
  const before = await sidecar.requestBuild({ sessionId: SESSION_ID });
  result.buildBefore = { messages: before.messages.length, estimatedTokens: before.estimatedTokens, schemaErrors: schemaErrors(before.messages) };
  log(`${before.messages.length} model messages, ~${before.estimatedTokens} tokens, prefix ${before.prefix.hash.slice(0, 19)}…`);

  // --- 8. rebuild/compute: the trigger decision -----------------------------------------------
  // Run after each finished assistant step. Without `usage` the sidecar uses the newest finished
  // assistant message's `tokens`; `model` gives the window.
  section('rebuild/compute');
  const computed = await sidecar.rebuildCompute({ sessionId: SESSION_ID, model: MODEL });
  const t = computed.trigger;
  result.shouldRebuild = t.shouldRebuild;
  log(`usage ${t.count} (${t.usageSource}) vs line ${t.usable} of ${t.hard}: overflow=${t.overflow} shouldRebuild=${t.shouldRebuild}`);
  for (const w of t.warnings ?? []) log(`  warning: ${w}`);
  const wm = computed.watermark;
  if (!wm) throw new Error('rebuild/compute returned no watermark');
  log(`writer watermark: ${wm.messageId} (index ${wm.index}, tail ${wm.tailTokens} tokens / ${wm.tailTextBlocks} text blocks, adjusted=${wm.adjusted})`);
  log(`stored watermark: ${computed.storedWatermark ?? '(none)'}; writer in flight: ${computed.writerInFlight}`);
  if (computed.preview) log(`preview: insert would answer "${computed.preview.outcome}" right now`);

  if (!t.shouldRebuild) log('(the trigger did not fire; the demo rebuilds anyway)');

  // --- 9. Checkpoint writer (the writer kit) + rebuild/insert ---------------------------------
  // checkpoint/prepare registers the writer (covering the watermark rebuild/compute reported) and
  // returns its one model request: the conversation up to the watermark with the writer's
  // instructions as the last user turn, in the format asked for (AI SDK here, the default).
  section('checkpoint writer (prepare -> model -> commit) + rebuild/insert');
  const prepared = await sidecar.checkpointPrepare({ sessionId: SESSION_ID });
  result.prepareStarted = prepared.started;
  const lastContent = prepared.messages.at(-1)?.content;
  result.instructionsLast = Array.isArray(lastContent) && lastContent.at(-1)?.text === prepared.instructions;
  log(`prepare: writer registered=${prepared.started}, covers up to ${prepared.watermark}; ${prepared.messages.length} messages (~${prepared.estimatedTokens} tokens) + instructions (~${prepared.instructionsTokens} tokens)`);
  for (const w of prepared.warnings ?? []) log(`  warning: ${w}`);

  // The trigger fired: ask for the rebuild while the writer's model call is still running. No
  // watermark is stored yet (this is the session's first writer): a cold start. The sidecar sends
  // rebuild/status busy and waits for the writer before rendering.
  const t0 = Date.now();
  const insertPromise = sidecar.rebuildInsert({ sessionId: SESSION_ID, reason: 'auto' });

  // The model call. A real host sends `prepared.messages` to its model here (README: "A real model
  // in the writer's place"); the demo's stand-in fills the template from the conversation.
  await sleep(WRITER_RUNTIME_MS);
  const reply = standinCheckpoint(prepared);
  result.checkpointTopic = /^Topic: (.*)$/m.exec(reply)?.[1] ?? null;
  // checkpoint/commit writes the reply as checkpoint.md (atomically) and settles the writer as a
  // success: its watermark is stored. (A failed model call: checkpoint/writerFinished "failure".)
  const committed = await sidecar.checkpointCommit({ sessionId: SESSION_ID, content: reply, watermark: prepared.watermark });
  result.commitWatermark = committed.watermark;
  log(`commit after ${Date.now() - t0} ms: ${committed.bytesWritten} bytes to ${committed.path}; stored watermark=${committed.watermark}`);
  for (const w of committed.warnings ?? []) log(`  warning: ${w}`);

  const inserted = await insertPromise;
  result.insertOutcome = inserted.outcome;
  result.waitResult = inserted.wait?.result ?? null;
  log(`insert: outcome=${inserted.outcome} revision=${inserted.revision} after ${Date.now() - t0} ms`);
  if (inserted.wait) log(`writer wait: ${inserted.wait.result}, waited ${inserted.wait.waitedMs} ms (bound ${inserted.wait.boundMs} ms)`);
  if (inserted.detail) log(`detail: ${inserted.detail}`);
  for (const w of inserted.warnings ?? []) log(`  warning: ${w}`);

  if (inserted.message) {
    // Persist the boundary message and the compaction marks in your own storage.
    const { info, parts } = inserted.message;
    result.boundaryRole = info.role;
    result.boundaryFirstPartType = parts[0]?.type ?? null;
    // The rebuild text carries the committed checkpoint under "# Session checkpoint".
    const text = parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n');
    result.boundaryTopic = /^Topic: (.*)$/m.exec(text)?.[1] ?? null;
    log(`boundary ${info.id}: role=${info.role}, parts=[${parts.map((p) => p.type).join(', ')}], coveredUpTo=${parts[0]?.coveredUpTo}`);
    log(`compacted tool results: ${(inserted.compacted ?? []).length}`);
  }
  log('\nsection report:');
  printTable(
    (inserted.sections ?? []).map((s) => ({
      key: s.key,
      present: s.present ? 'yes' : 'no',
      tokens: s.tokens,
      cap: s.cap == null ? '' : `${s.cap} ${s.unit}`,
      truncated: s.truncated ? 'yes' : '',
      reason: s.reason ?? '',
    })),
    ['key', 'present', 'tokens', 'cap', 'truncated', 'reason'],
  );
  if (inserted.statusText) log(`\nstatus text: ${inserted.statusText}`);

  // --- 10. request/build after the rebuild ----------------------------------------------------
  section('request/build (after)');
  const after = await sidecar.requestBuild({ sessionId: SESSION_ID });
  result.buildAfter = { messages: after.messages.length, estimatedTokens: after.estimatedTokens, schemaErrors: schemaErrors(after.messages) };
  log(`${after.messages.length} model messages, ~${after.estimatedTokens} tokens (before: ${before.messages.length} messages, ~${before.estimatedTokens} tokens)`);
  log(`first message: role=${after.messages[0]?.role}, first text: "${after.messages[0]?.content?.[0]?.text}"`);
  log(`collapsed: ${(after.collapsedMessageIds ?? []).length} messages; reminder added: ${after.reminderAdded}; usage pending: ${after.usagePending}`);

  // --- 10b. A split-shape (Claude Code) session in the AI SDK format ------------------------------
  // One response stored as two entries sharing providerMessageID, with thinking, a user image and
  // an image inside a tool result: request/build merges the entries and keeps thinking and images.
  const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
  const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } };
  const claude = { providerID: 'anthropic', modelID: 'claude-sonnet-4-6', providerMessageID: 'msg_01' };
  await sidecar.sessionOpen({
    sessionId: 'ses_nodeSplitShape01',
    messages: [
      { info: { id: 's1', role: 'user' }, parts: [{ type: 'text', text: 'What is on the screen?' }, image] },
      { info: { id: 's2', role: 'assistant', ...claude }, parts: [{ type: 'thinking', thinking: 'Take a screenshot.', signature: 'sig' }] },
      { info: { id: 's3', role: 'assistant', finish: 'tool-calls', ...claude }, parts: [{ type: 'tool_use', id: 'toolu_1', name: 'screenshot', input: {} }] },
      { info: { id: 's4', role: 'user' }, parts: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'shot' }, image] }] },
    ],
  });
  const split = await sidecar.requestBuild({ sessionId: 'ses_nodeSplitShape01', memoryReminder: false });
  result.buildSplit = { roles: split.messages.map((m) => m.role), schemaErrors: schemaErrors(split.messages) };
  log(`split shape: ${split.messages.length} model messages (${result.buildSplit.roles.join(', ')})`);

  // --- 11. Cancellation demo -------------------------------------------------------------------
  // A user pressing Esc while "Preparing conversation context…" is shown: start another writer and
  // a manual rebuild that waits for it, then cancel the rebuild. vscode-jsonrpc sends
  // $/cancelRequest; the request fails with -32800 and nothing is inserted.
  section('cancellation');
  const again = await sidecar.rebuildCompute({ sessionId: SESSION_ID, model: MODEL, preview: false });
  if (!again.watermark) throw new Error('rebuild/compute returned no watermark after the rebuild');
  await sidecar.checkpointWriterStarted({ sessionId: SESSION_ID, watermark: again.watermark.messageId });
  const cts = new CancellationTokenSource();
  const cancelled = sidecar.rebuildInsert({ sessionId: SESSION_ID, reason: 'manual' }, cts.token);
  await sleep(300);
  cts.cancel();
  try {
    await cancelled;
    log('unexpected: the cancelled rebuild completed');
  } catch (err) {
    if (!(err instanceof ResponseError)) throw err;
    result.cancelCode = err.code;
    log(`cancelled rebuild: ResponseError ${err.code}: ${err.message}`);
  }
  await sidecar.checkpointWriterFinished({ sessionId: SESSION_ID, outcome: 'cancelled' });
  const info = await sidecar.sessionGet({ sessionId: SESSION_ID });
  result.cancelKeptRevision = info.revision === inserted.revision;
  log(`session revision still ${info.revision} (insert left it at ${inserted.revision}); writer: ${JSON.stringify(info.writer)}`);

  // --- 12. shutdown + exit ---------------------------------------------------------------------
  section('shutdown');
  result.exitCode = await sidecar.close(); // shutdown, exit, and the process's exit code
  clearTimeout(killTimer);
  log(`sidecar exited with code ${result.exitCode}`);
  result.ok = true;
}

try {
  await main();
} catch (err) {
  result.error = err instanceof ResponseError ? `${err.code}: ${err.message}` : String(err?.stack ?? err);
  console.error(`[client] failed: ${result.error}`);
  process.exitCode = 1;
  if (child) result.exitCode = child.exitCode;
  // Stop the sidecar we started. (Closing its stdin alone would also end it within ~1 s.)
  if (child && child.exitCode === null && child.signalCode === null) child.kill();
}
log(`RESULT ${JSON.stringify(result)}`);
// Do not wait for a sidecar that did not exit (e.g. after a failure).
process.exit(process.exitCode ?? 0);
