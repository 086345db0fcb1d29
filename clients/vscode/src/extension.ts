// The VS Code side: the output channel, the status bar item, progress notifications, settings, the
// commands, and `activate`'s API for agent extensions. The process itself is the supervisor's
// (supervisor.ts), the API's behaviour apiImpl.ts's; this file wires them to VS Code.

import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import type { ComputeResult, ProgressParams, StatusNotification } from 'mimo-sidecar-client';
import type { MimoSidecarApi, RestartEvent } from './api.js';
import { createApi, type ApiEvents } from './apiImpl.js';
import { fromInspect, fromLive, type Composition, type InspectJson } from './composition.js';
import { compositionHtml } from './compositionHtml.js';
import { Emitter } from './emitter.js';
import { MimoSidecarError } from './errors.js';
import { describeMiss, findSidecar, probeVersionIn, type Found } from './interpreter.js';
import { previewDocument } from './previewDocument.js';
import { ProgressTracker } from './progress.js';
import { SessionRegistry } from './sessions.js';
import { expandPath, readSettings, settingFor, settingsChange, type ExtensionSettings } from './settings.js';
import { applyStatus, statusView } from './statusView.js';
import { LaunchRefused, Supervisor, type LaunchSpec, type Logger } from './supervisor.js';

const SECTION = 'mimoSidecar';
const PREVIEW_SCHEME = 'mimo-sidecar-preview';

let stopSidecar: (() => Promise<void>) | undefined;

function settingsReader(): (key: string) => unknown {
  const config = vscode.workspace.getConfiguration(SECTION);
  return (key) => config.get(key);
}

function folders(): { name: string; path: string }[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => ({ name: f.name, path: f.uri.fsPath }));
}

/** The Python extension's interpreter for the workspace, when that extension is installed. */
async function pythonExtensionInterpreter(log: Logger): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension('ms-python.python');
  if (!extension) return undefined;
  try {
    const exports = (extension.isActive ? extension.exports : await extension.activate()) as {
      environments?: {
        getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
        resolveEnvironment(path: { path: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
      };
    };
    const environments = exports?.environments;
    if (!environments) return undefined;
    const active = environments.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
    const resolved = await environments.resolveEnvironment(active);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  } catch (error) {
    log.warn(`the Python extension's interpreter could not be read: ${String(error)}`);
    return undefined;
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<MimoSidecarApi> {
  const channel = vscode.window.createOutputChannel('MiMo Sidecar', { log: true });
  // Logging never throws: while the window closes, the channel's connection may be gone already
  // (then the line is lost, and the sidecar is stopped all the same).
  const safely = (write: (m: string) => void) => (m: string) => {
    try {
      write(m);
    } catch {
      // nowhere left to write it
    }
  };
  const log: Logger = {
    info: safely((m) => channel.info(m)),
    warn: safely((m) => channel.warn(m)),
    error: safely((m) => channel.error(m)),
    sidecar: safely((line) => channel.appendLine(`[sidecar] ${line}`)),
  };
  let settings: ExtensionSettings = readSettings(settingsReader());
  let found: Found | undefined;

  const registry = new SessionRegistry();
  const reportListener = (error: unknown) => log.error(`an API listener failed: ${String(error)}`);
  const events: ApiEvents = {
    restart: new Emitter<RestartEvent>(reportListener),
    status: new Emitter<StatusNotification>(reportListener),
    progress: new Emitter<ProgressParams>(reportListener),
  };

  // -- the status bar and progress notifications ---------------------------------------------
  const item = vscode.window.createStatusBarItem('mimoSidecar.status', vscode.StatusBarAlignment.Left, 10);
  item.name = 'MiMo Sidecar';
  item.command = 'mimoSidecar.statusActions';
  const busy = new Map<string, string>();
  const progress = new ProgressTracker((title, message) => {
    if (!settings.showProgressNotifications) return { report: () => undefined, done: () => undefined };
    let latest = message;
    let report: ((m: string) => void) | undefined;
    let finished = false;
    let finish: (() => void) | undefined;
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: false }, (p) => {
      report = (m) => p.report({ message: m });
      report(latest);
      // `end` may come before VS Code ran this task: then it ends at once
      return finished ? Promise.resolve() : new Promise<void>((resolve) => (finish = resolve));
    });
    return {
      report: (m) => {
        latest = m;
        report?.(m);
      },
      done: () => {
        finished = true;
        finish?.();
      },
    };
  });

  // -- the process -------------------------------------------------------------------------------
  /** The sidecar's working directory, and its probe's: the extension's own (interpreter.ts: why). */
  const workDir = () => {
    const dir = context.globalStorageUri.fsPath;
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  /** The command that runs mimo-sidecar, found again at each start (interpreter.ts says how). */
  const locate = async (): Promise<Found> => {
    const home = homedir();
    const interpreter = settings.interpreter ? expandPath(settings.interpreter, home, folders()) : '';
    if (interpreter === undefined) throw new LaunchRefused(`mimoSidecar.interpreter names a workspace folder this window does not have: ${settings.interpreter}`);
    const search = await findSidecar({
      serverCommand: settings.serverCommand.map((arg) => expandPath(arg, home, folders()) ?? arg),
      interpreter,
      pythonExtension: settings.serverCommand.length || interpreter ? undefined : await pythonExtensionInterpreter(log),
      trustedFolders: vscode.workspace.isTrusted ? folders().map((f) => f.path) : [],
      platform: process.platform,
    }, probeVersionIn(workDir()));
    for (const tried of search.tried) log.info(`not ${tried.candidate.command.join(' ')} (${tried.candidate.source}): ${tried.problem}`);
    if (!search.found) throw new LaunchRefused(describeMiss(search));
    found = search.found;
    return found;
  };

  const prepare = async (): Promise<LaunchSpec> => {
    const command = await locate();
    const home = homedir();
    let memoryRoot = settings.memoryRoot ? expandPath(settings.memoryRoot, home, folders()) : join(context.globalStorageUri.fsPath, 'memory');
    if (memoryRoot === undefined || !isAbsolute(memoryRoot)) {
      throw new LaunchRefused(`mimoSidecar.memoryRoot must be an absolute path (~ and \${workspaceFolder} are expanded): ${settings.memoryRoot}`);
    }
    memoryRoot = memoryRoot.replace(/[\\/]+$/, '') || memoryRoot;
    mkdirSync(memoryRoot, { recursive: true });
    return {
      command: command.command,
      version: command.version,
      memoryRoot,
      config: settings.config,
      logLevel: settings.logLevel,
      cwd: workDir(),
    };
  };

  const supervisor = new Supervisor({
    prepare,
    maxRestarts: () => settings.maxRestarts,
    log,
    afterStart: async (sidecar, generation, previousExit) => {
      busy.clear();
      progress.clear();
      if (generation === 1) return;
      const event = await registry.restoreAll(sidecar, generation, previousExit ?? 'unknown', log.info);
      return () => {
        events.restart.fire(event);
        if (previousExit && !previousExit.startsWith('restarted on request')) {
          const lost = event.lost.length ? `; ${event.lost.length} lost (${event.lost.map((l) => l.sessionId).join(', ')}): their extensions must open them again` : '';
          void vscode.window.showWarningMessage(`The MiMo sidecar ended (${previousExit}) and was restarted; ${event.restored.length} session(s) restored${lost}.`, 'Show Log').then((pick) => pick && channel.show());
        }
      };
    },
    onRebuildStatus: (status) => {
      applyStatus(busy, status.sessionId, status.state, status.message);
      log.info(`rebuild/status ${status.sessionId}: ${status.state}${status.message ? ` ${status.message}` : ''}`);
      render();
      events.status.fire(status);
    },
    onProgress: (p) => {
      progress.handle(p);
      events.progress.fire(p);
    },
    onLogMessage: (m) => log.warn(`sidecar: ${m.message}`),
  });

  const render = () => {
    const view = statusView(supervisor.state, busy, registry.ids().length);
    item.text = view.text;
    item.tooltip = view.tooltip;
    item.backgroundColor = view.severity === 'normal' ? undefined : new vscode.ThemeColor(view.severity === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground');
    item.show();
  };
  let lastFailure: string | undefined;
  supervisor.onDidChangeState((state) => {
    if (state.state !== 'running') {
      busy.clear();
      progress.clear();
    }
    render();
    if (state.state === 'failed' && state.detail !== lastFailure) {
      lastFailure = state.detail;
      void vscode.window.showErrorMessage(`MiMo sidecar: ${state.detail ?? 'it cannot start'}`, 'Show Log', 'Restart', 'Open Settings').then((pick) => {
        if (pick === 'Show Log') channel.show();
        if (pick === 'Restart') void vscode.commands.executeCommand('mimoSidecar.restart');
        if (pick === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', SECTION);
      });
    }
    if (state.state === 'running') lastFailure = undefined;
  });
  render();

  const api = createApi(supervisor, registry, { ...events, sessionsChanged: render }, log);
  stopSidecar = async () => {
    const how = await supervisor.stop();
    if (how) log.info(`the window is closing: the sidecar ended with ${how}`);
  };

  // -- settings ----------------------------------------------------------------------------------
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (change) => {
      if (!change.affectsConfiguration(SECTION)) return;
      const before = settings;
      settings = readSettings(settingsReader());
      const what = settingsChange(before, settings);
      const state = supervisor.state.state;
      if (what.kind === 'none' || state === 'stopped') return;
      if (what.kind === 'restart' || state === 'failed') {
        log.info(`settings changed (${what.kind === 'restart' ? `${what.settings.join(', ')}: fixed for the life of a process` : 'after a failure'}): restarting the sidecar`);
        await supervisor.restart();
        return;
      }
      try {
        const warnings = await supervisor.configure(settings.config);
        log.info(`settings changed: sidecar/configure sent${warnings?.length ? ` (${warnings.length} warning(s), above)` : ''}`);
      } catch (error) {
        const field = (error as { data?: { field?: unknown } }).data?.field;
        const setting = typeof field === 'string' ? settingFor(field, settingsReader()) : undefined;
        const message = `MiMo sidecar refused the new settings${setting ? ` (${setting})` : ''}: ${error instanceof Error ? error.message : String(error)}. The previous configuration stays in force.`;
        log.error(message);
        settings = { ...settings, config: before.config };
        void vscode.window.showErrorMessage(message, 'Open Settings').then((pick) => pick && vscode.commands.executeCommand('workbench.action.openSettings', SECTION));
      }
    }),
  );

  // -- commands ----------------------------------------------------------------------------------
  const previews = new Map<string, string>();
  const previewChanged = new vscode.EventEmitter<vscode.Uri>();
  context.subscriptions.push(
    previewChanged,
    vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, {
      onDidChange: previewChanged.event,
      provideTextDocumentContent: (uri) => previews.get(uri.toString()) ?? '',
    }),
  );
  const panels = new Map<string, vscode.WebviewPanel>();

  async function pickSession(placeHolder: string, withFile: boolean): Promise<{ sessionId?: string; file?: string } | undefined> {
    const sessions = registry.ids();
    const fileItem = { label: '$(file) Inspect a transcript file…', file: true };
    const items = [...sessions.map((sid) => ({ label: sid, description: 'open in the sidecar', file: false })), ...(withFile ? [fileItem] : [])];
    if (items.length === 0) {
      void vscode.window.showInformationMessage('No session is open in the MiMo sidecar: an agent extension opens sessions through its API.');
      return undefined;
    }
    const pick = items.length === 1 && !withFile ? items[0] : await vscode.window.showQuickPick(items, { placeHolder });
    if (!pick) return undefined;
    if (!pick.file) return { sessionId: pick.label };
    const uris = await vscode.window.showOpenDialog({ canSelectMany: false, title: 'A transcript or session/open params file', filters: { Transcripts: ['jsonl', 'json', 'md'], 'All files': ['*'] } });
    return uris?.[0] ? { file: uris[0].fsPath } : undefined;
  }

  function sessionArg(arg: unknown): { sessionId?: string; file?: string } | undefined {
    if (arg instanceof vscode.Uri) return { file: arg.fsPath };
    if (typeof arg === 'string') return { sessionId: arg };
    if (arg && typeof arg === 'object') return arg as { sessionId?: string; file?: string };
    return undefined;
  }

  function inspectFile(file: string): Promise<InspectJson> {
    return new Promise((resolve, reject) => {
      void Promise.resolve(found ?? locate())
        .then(({ command }) => {
          const [exe, ...args] = command as [string, ...string[]];
          execFile(exe, [...args, 'inspect', file, '--json'], { maxBuffer: 256 * 1024 * 1024, timeout: 300_000 }, (error, stdout, stderr) => {
            if (error) {
              reject(new Error(`mimo-sidecar inspect ${file}: ${String(stderr).trim() || error.message}`));
              return;
            }
            try {
              resolve(JSON.parse(stdout) as InspectJson);
            } catch (parseError) {
              reject(new Error(`mimo-sidecar inspect ${file} printed no JSON: ${String(parseError)}`));
            }
          });
        }, reject);
    });
  }

  async function liveComposition(sessionId: string): Promise<Composition> {
    const last = registry.lastCompute(sessionId) ?? {};
    const [info, computed] = await Promise.all([api.sessionGet({ sessionId }), api.rebuildCompute({ sessionId, ...last, preview: true })]);
    const built = await api.requestBuild({ sessionId, ...(last.agentId ? { agentId: last.agentId } : {}) }).catch((error: unknown) => {
      log.warn(`the composition of ${sessionId} shows no request: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    });
    return fromLive(info, computed, built);
  }

  function showPanel(key: string, composition: Composition): void {
    let panel = panels.get(key);
    if (!panel) {
      panel = vscode.window.createWebviewPanel('mimoSidecar.composition', `Composition: ${composition.title}`, vscode.ViewColumn.Active, { enableScripts: false });
      panels.set(key, panel);
      panel.onDidDispose(() => panels.delete(key));
    } else {
      panel.reveal();
    }
    panel.webview.html = compositionHtml(composition, panel.webview.cspSource);
  }

  const failed = (what: string) => (error: unknown) => {
    const message = error instanceof Error ? error.message : String(error);
    log.error(`${what}: ${message}`);
    void vscode.window.showErrorMessage(`MiMo sidecar: ${what}: ${message}`);
    return undefined;
  };

  context.subscriptions.push(
    item,
    channel,
    vscode.commands.registerCommand('mimoSidecar.showComposition', async (arg?: unknown) => {
      const target = sessionArg(arg) ?? (await pickSession('The session whose composition to show', true));
      if (!target) return undefined;
      const composition = await (target.file ? inspectFile(target.file).then(fromInspect) : liveComposition(target.sessionId as string)).catch(failed('the composition'));
      if (composition) showPanel(target.file ?? `session:${String(target.sessionId)}`, composition);
      return composition;
    }),
    vscode.commands.registerCommand('mimoSidecar.previewRebuild', async (arg?: unknown) => {
      const target = sessionArg(arg) ?? (await pickSession('The session whose rebuild to preview', false));
      if (!target?.sessionId) return undefined;
      const sessionId = target.sessionId;
      const last = registry.lastCompute(sessionId) ?? {};
      const computed: ComputeResult | undefined = await api.rebuildCompute({ sessionId, ...last, preview: true, includeText: true }).catch(failed('the rebuild preview'));
      if (!computed) return undefined;
      const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: `/${sessionId}.md` });
      previews.set(uri.toString(), previewDocument(sessionId, computed));
      previewChanged.fire(uri);
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.languages.setTextDocumentLanguage(document, 'markdown');
      await vscode.window.showTextDocument(document, { preview: true });
      return computed;
    }),
    vscode.commands.registerCommand('mimoSidecar.restart', async () => {
      const state = await supervisor.restart();
      if (state.state === 'running') void vscode.window.showInformationMessage(`MiMo sidecar restarted (pid ${String(state.pid)}).`);
      return state;
    }),
    vscode.commands.registerCommand('mimoSidecar.showLog', () => channel.show()),
    vscode.commands.registerCommand('mimoSidecar.statusActions', async () => {
      const actions = [
        { label: '$(output) Show the sidecar log', command: 'mimoSidecar.showLog' },
        { label: '$(graph) Show session composition', command: 'mimoSidecar.showComposition' },
        { label: '$(eye) Preview a rebuild', command: 'mimoSidecar.previewRebuild' },
        { label: '$(debug-restart) Restart the sidecar', command: 'mimoSidecar.restart' },
        { label: '$(settings-gear) Settings', command: 'workbench.action.openSettings', arg: SECTION },
      ];
      const pick = await vscode.window.showQuickPick(actions, { placeHolder: String(item.tooltip ?? '') });
      if (pick) await vscode.commands.executeCommand(pick.command, ...('arg' in pick ? [pick.arg] : []));
    }),
    { dispose: () => panels.forEach((p) => p.dispose()) },
  );

  log.info(`MiMo Sidecar ${String(context.extension.packageJSON.version)} active; the sidecar starts when first needed`);
  return api;
}

export async function deactivate(): Promise<void> {
  await stopSidecar?.().catch((error: unknown) => {
    if (!(error instanceof MimoSidecarError)) throw error;
  });
}
