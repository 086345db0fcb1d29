#!/usr/bin/env node
// The integration test in a real VS Code: code-server 4.100.3 (VS Code 1.100.3, installed by
// scripts/install-code-server.mjs) serves the workbench, headless Chromium (Debian's, driven by
// playwright-core) opens it, and the extension host runs two extensions installed from their
// .vsix files: MiMo Sidecar (mimo-sidecar.vsix, `npm run package`) and the agent extension of
// test/integration/agent-extension, which uses the sidecar through the API only and reports each
// step in steps.jsonl. Each test below checks one step's report and, where a user would look,
// the window itself (the status bar, the progress notification, the webview, the output log).
//
// Needs: mimo-sidecar.vsix; Chromium at /usr/bin/chromium (or $CHROMIUM); a Python with
// mimo-sidecar ($MIMO_SIDECAR_PYTHON, else the repository's .venv); what install-code-server.mjs
// lists. On failure the run's directory (screenshots, code-server's log, the steps) is kept.

import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { codeServerBin, install } from '../../scripts/install-code-server.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..', '..');
const repo = join(pkg, '..', '..');
const python = process.env.MIMO_SIDECAR_PYTHON ?? join(repo, '.venv', 'bin', 'python');
const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';
const vsix = join(pkg, 'mimo-sidecar.vsix');
const BUSY = 'Preparing conversation context…';
const STEP_MS = 120_000;

const run = mkdtempSync(join(tmpdir(), 'mimo-vscode-it-'));
const paths = {
  userData: join(run, 'user-data'),
  extensions: join(run, 'extensions'),
  workspace: join(run, 'workspace'),
  memory: join(run, 'memory'),
  steps: join(run, 'steps'),
  xdg: join(run, 'xdg'),
};
let server;
/** Settles when code-server's process has exited (its log written). */
let serverExited = Promise.resolve();
let browser;
let page;
let failed = false;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

function steps() {
  const file = join(paths.steps, 'steps.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

/** The agent extension's report of `name`; a step it reported failed fails the test with its error. */
async function stepReport(name, ms = STEP_MS) {
  const end = Date.now() + ms;
  for (;;) {
    const all = steps();
    const found = all.find((s) => s.name === name);
    if (found) {
      assert.ok(found.ok, `the agent extension's step ${name} failed: ${JSON.stringify(found.data)}`);
      return found.data;
    }
    const failure = all.find((s) => !s.ok);
    if (failure) assert.fail(`the agent extension stopped at ${failure.name}: ${JSON.stringify(failure.data)}`);
    if (Date.now() > end) assert.fail(`no report of ${name} within ${ms / 1000} s; the steps so far: ${all.map((s) => s.name).join(', ') || 'none'}`);
    await sleep(100);
  }
}

const go = (name) => writeFileSync(join(paths.steps, `go-${name}`), '');

async function shot(name) {
  await page.screenshot({ path: join(run, `${name}.png`) });
}

/** Every file under `dir` whose name matches. */
function findFiles(dir, pattern) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? findFiles(path, pattern) : pattern.test(entry.name) ? [path] : [];
  });
}

/** What the extension wrote to its output channel (a log channel: VS Code keeps it in a file). */
function outputChannel() {
  return findFiles(join(paths.userData, 'logs'), /MiMo Sidecar\.log$/).map((f) => readFileSync(f, 'utf8')).join('\n');
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

before(async () => {
  for (const [what, path] of [['mimo-sidecar.vsix (npm run package)', vsix], ['Chromium ($CHROMIUM)', chromiumPath], ['a Python with mimo-sidecar ($MIMO_SIDECAR_PYTHON)', python]]) {
    assert.ok(existsSync(path), `${what} not found: ${path}`);
  }
  install();
  for (const dir of Object.values(paths)) mkdirSync(dir, { recursive: true });
  cpSync(join(repo, 'examples', 'sample', 'memory'), paths.memory, { recursive: true });
  writeFileSync(join(paths.workspace, 'README.md'), 'The workspace of the MiMo Sidecar integration test.\n');

  // the agent extension, packaged as a user would package it
  const agent = join(here, 'agent-extension');
  const agentVsix = join(run, 'mimo-test-agent.vsix');
  execFileSync(join(pkg, 'node_modules', '.bin', 'vsce'), ['package', '--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links', '--skip-license', '-o', agentVsix], { cwd: agent, stdio: 'pipe' });

  const env = { ...process.env, XDG_CONFIG_HOME: paths.xdg, XDG_DATA_HOME: paths.xdg, MIMO_VSCODE_TEST_DIR: paths.steps, MIMO_VSCODE_SAMPLE: join(repo, 'examples', 'sample', 'session.json') };
  delete env.MIMO_SIDECAR_PYTHON; // the extension finds its Python through its setting, as a user's does
  const cli = ['--user-data-dir', paths.userData, '--extensions-dir', paths.extensions];
  execFileSync(process.execPath, [codeServerBin, ...cli, '--install-extension', vsix, '--install-extension', agentVsix], { env, stdio: 'pipe' });
  const listed = execFileSync(process.execPath, [codeServerBin, ...cli, '--list-extensions', '--show-versions'], { env, encoding: 'utf8' });
  assert.match(listed, /mimo-sidecar\.mimo-sidecar@0\.1\.0/);
  assert.match(listed, /mimo-sidecar-tests\.mimo-test-agent@0\.0\.1/);

  // The interpreter and the memory root are paths on the machine that runs the extension host:
  // machine-overridable settings, which a remote window (code-server's is one) reads from the
  // remote machine's settings, not from the user's.
  const settings = (name, values) => {
    mkdirSync(join(paths.userData, name), { recursive: true });
    writeFileSync(join(paths.userData, name, 'settings.json'), JSON.stringify(values, null, 2));
  };
  settings('Machine', { 'mimoSidecar.interpreter': python, 'mimoSidecar.memoryRoot': paths.memory });
  settings('User', {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'telemetry.telemetryLevel': 'off',
  });

  const port = await freePort();
  const log = join(run, 'code-server.log');
  server = spawn(
    process.execPath,
    [codeServerBin, ...cli, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', paths.workspace],
    { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const out = [];
  server.stdout.on('data', (d) => out.push(d));
  server.stderr.on('data', (d) => out.push(d));
  // The log is rewritten when code-server exits; after() waits for that exit before it removes the
  // run's directory, so this write never lands in a directory already gone.
  const exited = new Promise((resolve) => server.once('exit', resolve));
  server.once('exit', () => writeFileSync(log, Buffer.concat(out)));
  serverExited = exited;
  const end = Date.now() + 30_000;
  while (!Buffer.concat(out).toString().includes('HTTP server listening')) {
    assert.ok(Date.now() < end && server.exitCode === null, `code-server did not start: ${Buffer.concat(out).toString()}`);
    await sleep(100);
  }
  writeFileSync(log, Buffer.concat(out));

  browser = await chromium.launch({
    executablePath: chromiumPath,
    // playwright gives every launch a fresh, empty profile (its own --user-data-dir)
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(paths.workspace)}`);
  await page.locator('#workbench\\.parts\\.statusbar').waitFor({ timeout: 60_000 });
});

after(async () => {
  if (page) await shot('last').catch(() => undefined);
  await browser?.close().catch(() => undefined);
  if (server && server.exitCode === null && server.signalCode === null) {
    // SIGTERM to the whole group (code-server and its extension host); SIGKILL if it has not exited
    // within 10 s. Either way the 'exit' event (and its log write) has happened before rmSync.
    const stop = (signal) => {
      try {
        process.kill(-server.pid, signal);
      } catch {
        // gone already
      }
    };
    stop('SIGTERM');
    let timer;
    const bound = new Promise((resolve) => {
      timer = setTimeout(() => resolve(true), 10_000);
    });
    const timedOut = await Promise.race([serverExited.then(() => false), bound]);
    clearTimeout(timer);
    if (timedOut) {
      stop('SIGKILL');
      await serverExited;
    }
  }
  if (failed || process.env.MIMO_KEEP_RUN) console.log(`# the run's files are kept in ${run}`);
  else rmSync(run, { recursive: true, force: true });
});

/** node:test's `it`, remembering a failure so that the run's files are kept. */
function check(name, fn) {
  it(name, async () => {
    try {
      await fn();
    } catch (error) {
      failed = true;
      if (page) await shot(`failed-${name.replace(/\W+/g, '-')}`).catch(() => undefined);
      throw error;
    }
  });
}

describe('MiMo Sidecar in a real VS Code (code-server 4.100.3)', () => {
  check('code-server runs VS Code 1.100.3', () => {
    const version = execFileSync(process.execPath, [codeServerBin, '--version'], { encoding: 'utf8', env: { ...process.env, XDG_CONFIG_HOME: paths.xdg } });
    assert.match(version, /^4\.100\.3 \S+ with Code 1\.100\.3/m);
  });

  check('the extension activates, returns its API, and has not spawned the sidecar yet', async () => {
    const activated = await stepReport('activated');
    assert.equal(activated.extensionActive, true);
    assert.equal(activated.apiVersion, 1);
    assert.equal(activated.version, '0.1.0');
    assert.equal(activated.state.state, 'stopped');
    assert.equal(activated.state.pid, undefined);
  });

  check("the agent extension's first API call spawns the sidecar with the configured Python, and a sync follows", async () => {
    const opened = await stepReport('opened');
    assert.equal(opened.revision, 1);
    assert.equal(opened.state.state, 'running');
    assert.equal(opened.state.generation, 1);
    assert.equal(opened.commandLine, `${python} -m mimo_sidecar --stdio --log-level INFO`);
    assert.deepEqual(opened.openSessions, ['ses_-ffe620dbdc4ffffeVIkc7TFwO']);
    const synced = await stepReport('synced');
    assert.equal(synced.revision, 2);
    assert.equal(synced.messageCount, synced.sessionMessages);
    const computed = await stepReport('computed');
    assert.equal(computed.shouldRebuild, true);
    const prepared = await stepReport('prepared');
    assert.equal(prepared.started, true);
  });

  check('the status bar and a progress notification show the status text during the writer wait', async () => {
    const waiting = await stepReport('waiting-for-writer');
    assert.equal(waiting.status.message, BUSY);
    assert.equal(waiting.progress.title, 'Rebuilding conversation context');
    const item = page.locator('#workbench\\.parts\\.statusbar .statusbar-item', { hasText: BUSY });
    await item.waitFor({ state: 'visible', timeout: 20_000 });
    assert.equal((await item.innerText()).trim(), BUSY);
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Rebuilding conversation context' });
    await toast.waitFor({ state: 'visible', timeout: 20_000 });
    assert.match(await toast.innerText(), /Preparing conversation context…/);
    await shot('writer-wait');
    go('commit');
  });

  check('the API call gets a rebuild that follows the writer, and the next request is built from it', async () => {
    const inserted = await stepReport('inserted');
    assert.equal(inserted.outcome, 'rebuilt');
    assert.equal(inserted.wait.result, 'success');
    assert.equal(inserted.firstPartType, 'checkpoint');
    assert.equal(inserted.boundaryHasTopic, true);
    assert.equal(inserted.watermark, inserted.committedWatermark); // D21: the writer's watermark
    assert.ok(inserted.compacted.length > 0);
    const built = await stepReport('built-after');
    assert.ok(built.messages < built.before.messages, `${built.messages} messages after, ${built.before.messages} before`);
    assert.ok(built.estimatedTokens < built.before.estimatedTokens / 2);
    assert.equal(built.firstMessageHasTopic, true);
  });

  check('the status bar goes back to the idle item once the insert answered', async () => {
    const idle = page.locator('#workbench\\.parts\\.statusbar .statusbar-item', { hasText: /MiMo$/ });
    await idle.waitFor({ state: 'visible', timeout: 20_000 });
    assert.equal(await page.locator('#workbench\\.parts\\.statusbar .statusbar-item', { hasText: BUSY }).count(), 0);
  });

  check("the model's tools read back a result the rebuild cleared", async () => {
    const tools = await stepReport('model-tools');
    assert.deepEqual(tools.names, ['mimo_history', 'mimo_memory', 'mimo_task']);
    assert.equal(tools.isError, false);
    assert.equal(tools.holdsTheClearedResult, true);
  });

  check('Show Session Composition opens a webview with the dry run of the live session', async () => {
    const composition = await stepReport('composition');
    assert.equal(composition.title, 'ses_-ffe620dbdc4ffffeVIkc7TFwO');
    assert.ok(['rebuilt', 'no-gain'].includes(composition.outcome), composition.outcome);
    assert.ok(composition.sections.includes('Recent user input (verbatim)'), composition.sections.join(', '));
    const end = Date.now() + 30_000;
    let text = '';
    while (Date.now() < end && !text.includes('Session composition')) {
      for (const frame of page.frames()) {
        const body = await frame.locator('body').innerText({ timeout: 1000 }).catch(() => '');
        if (body.includes('Session composition')) text = body;
      }
      if (!text) await sleep(250);
    }
    assert.match(text, /Session composition: ses_-ffe620dbdc4ffffeVIkc7TFwO/);
    assert.match(text, /The boundary, section by section/);
    assert.match(text, /Recent user input \(verbatim\)/);
    assert.match(text, new RegExp(`Outcome ${composition.outcome}`));
    await shot('composition');
    go('composition-seen');
  });

  check('Preview a Rebuild opens the rebuild text the model would read', async () => {
    const preview = await stepReport('preview');
    assert.equal(preview.hasText, true);
    assert.equal(preview.editor, 'mimo-sidecar-preview:/ses_-ffe620dbdc4ffffeVIkc7TFwO.md');
    assert.equal(preview.editorHasTopic, true); // rendered from the checkpoint the writer committed
  });

  check('a settings change reaches the running sidecar through sidecar/configure', async () => {
    const changed = await stepReport('settings-change');
    assert.equal(changed.cap, 1234);
    assert.equal(changed.generation, 1); // configured, not restarted
  });

  check('a killed sidecar comes back, with the restorable session reopened and the other refused', async () => {
    const killed = await stepReport('killed');
    const restarted = await stepReport('restarted');
    assert.equal(restarted.event.exit, 'signal SIGKILL');
    assert.equal(restarted.event.generation, 2);
    assert.deepEqual(restarted.event.restored, ['ses_-ffe620dbdc4ffffeVIkc7TFwO']);
    assert.deepEqual(restarted.event.lost.map((l) => l.sessionId), ['ses_vscodeIntegrationNoRestore']);
    assert.equal(restarted.state.state, 'running');
    assert.equal(restarted.state.restarts, 1);
    assert.notEqual(restarted.state.pid, killed.pid);
    assert.equal(restarted.oldPidAlive, false);
    assert.equal(restarted.messageCount, restarted.storedMessages); // the history with its boundary
    assert.equal(restarted.watermark, restarted.storedWatermark);
    assert.equal(restarted.lostReason, 'SessionLost');
    assert.match(restarted.lostMessage, /ses_vscodeIntegrationNoRestore/);
    assert.equal(restarted.projectMemoryCap, 1234); // the new process got the settings' config
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'was restarted' });
    await toast.waitFor({ state: 'visible', timeout: 20_000 });
    assert.match(await toast.innerText(), /signal SIGKILL.*1 session\(s\) restored.*1 lost \(ses_vscodeIntegrationNoRestore\)/s);
    await shot('restarted');
    await stepReport('done');
  });

  check("the output channel holds the extension's log and the sidecar's own", async () => {
    const text = outputChannel();
    assert.match(text, /sidecar \S+ started \(pid \d+, generation 1\)/);
    assert.match(text, /\[sidecar\] .*mimo-sidecar/);
    assert.match(text, /the sidecar exited unexpectedly \(signal SIGKILL\)/);
    assert.match(text, /session ses_-ffe620dbdc4ffffeVIkc7TFwO restored in the new sidecar process/);
    assert.match(text, /rebuild\/status ses_-ffe620dbdc4ffffeVIkc7TFwO: busy Preparing conversation context…/);
  });

  check('the sidecar stops with the window', async () => {
    const { state } = await stepReport('restarted');
    assert.equal(alive(state.pid), true);
    await page.close(); // the window goes; code-server ends its extension host
    const end = Date.now() + 60_000;
    while (alive(state.pid) && Date.now() < end) await sleep(200);
    assert.equal(alive(state.pid), false, `the sidecar ${state.pid} outlived the window`);
    page = undefined;
  });
});
