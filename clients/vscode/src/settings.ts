// The extension's settings (package.json `contributes.configuration`, namespace `mimoSidecar`) and
// what each becomes: a spawn option (the command, the log level), an `initialize` option (the
// memory root) or a key of the sidecar's config (protocol.md "Configuration"), sent with
// `initialize` and again with `sidecar/configure` when it changes. No `vscode` import: the
// extension passes a reader over `workspace.getConfiguration('mimoSidecar')`, the tests a map.

import type { SidecarConfig } from 'mimo-sidecar-client';

/** `get(key)` of a configuration section: the value the user set, else the manifest's default. */
export type SettingsReader = (key: string) => unknown;

export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A budget setting and the `checkpoint.push_caps` key it sets. */
export const BUDGETS: readonly { setting: string; cap: string }[] = [
  { setting: 'tasksLedger', cap: 'tasks_ledger' },
  { setting: 'checkpoint', cap: 'checkpoint' },
  { setting: 'actorLedger', cap: 'actor_ledger' },
  { setting: 'recentUser', cap: 'recent_user' },
  { setting: 'recentUserPerMessage', cap: 'recent_user_per_msg' },
  { setting: 'projectMemory', cap: 'memory' },
  { setting: 'globalMemory', cap: 'global' },
  { setting: 'notes', cap: 'notes' },
  { setting: 'memoryTitles', cap: 'memory_titles' },
  { setting: 'total', cap: 'total' },
];

/** Every named setting that sets one config key, with that key's path (`config.` + path). */
const CONFIG_SETTINGS: readonly { setting: string; path: string[] }[] = [
  { setting: 'trigger.ratio', path: ['compaction', 'trigger_ratio'] },
  { setting: 'trigger.maxContext', path: ['compaction', 'max_context'] },
  { setting: 'trigger.auto', path: ['compaction', 'auto'] },
  { setting: 'writerWait.withWatermarkMs', path: ['checkpoint', 'writer_wait_ms', 'with_watermark'] },
  { setting: 'writerWait.withoutWatermarkMs', path: ['checkpoint', 'writer_wait_ms', 'without_watermark'] },
  ...BUDGETS.map((b) => ({ setting: `budgets.${b.setting}`, path: ['checkpoint', 'push_caps', b.cap] })),
];

/** Every setting `readSettings` reads (a unit test holds the manifest to this list). */
export const READ_SETTINGS: readonly string[] = [
  'serverCommand',
  'interpreter',
  'memoryRoot',
  'logLevel',
  'config',
  'maxRestarts',
  'showProgressNotifications',
  ...CONFIG_SETTINGS.map((c) => c.setting),
];

export interface ExtensionSettings {
  /** `mimoSidecar.serverCommand`: the whole command, when set (it wins over `interpreter`). */
  serverCommand: string[];
  /** `mimoSidecar.interpreter`: a Python with mimo-sidecar installed; empty: look for one. */
  interpreter: string;
  /** `mimoSidecar.memoryRoot` as written (`~` and `${workspaceFolder}` not expanded yet). */
  memoryRoot: string;
  logLevel: LogLevel;
  /** The sidecar's config: `mimoSidecar.config` with every named setting laid over it. */
  config: SidecarConfig;
  /** Restarts allowed within RESTART_WINDOW_MS before the extension gives up. */
  maxRestarts: number;
  showProgressNotifications: boolean;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function deepCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function setPath(target: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let node = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (!isRecord(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] as string] = value;
}

/**
 * The config the sidecar gets. `mimoSidecar.config` (any key of protocol.md's Configuration) is
 * the base; each named setting that is set (not null) replaces its key. Values are passed as the
 * user wrote them: the sidecar validates them and names the key it refuses (`settingFor` turns
 * that key back into the setting to fix).
 */
export function sidecarConfig(get: SettingsReader): SidecarConfig {
  const raw = get('config');
  const config: Record<string, unknown> = isRecord(raw) ? deepCopy(raw) : {};
  for (const { setting, path } of CONFIG_SETTINGS) {
    const value = get(setting);
    if (value !== null && value !== undefined) setPath(config, path, value);
  }
  return config as SidecarConfig;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.length > 0) : [];
}

export function readSettings(get: SettingsReader): ExtensionSettings {
  const level = String(get('logLevel') ?? 'INFO').toUpperCase();
  const maxRestarts = get('maxRestarts');
  return {
    serverCommand: stringList(get('serverCommand')),
    interpreter: typeof get('interpreter') === 'string' ? (get('interpreter') as string).trim() : '',
    memoryRoot: typeof get('memoryRoot') === 'string' ? (get('memoryRoot') as string).trim() : '',
    logLevel: (LOG_LEVELS as readonly string[]).includes(level) ? (level as LogLevel) : 'INFO',
    config: sidecarConfig(get),
    maxRestarts: typeof maxRestarts === 'number' && Number.isInteger(maxRestarts) && maxRestarts >= 0 ? maxRestarts : 5,
    showProgressNotifications: get('showProgressNotifications') !== false,
  };
}

/** What a change of settings asks of a running sidecar, and the settings that ask it. */
export interface SettingsChange {
  kind: 'none' | 'configure' | 'restart';
  settings: string[];
}

/**
 * The command, the memory root and the log level are fixed when the process starts (the memory
 * root is an `initialize` option, which cannot be sent twice): changing one needs a new process.
 * A config change is sent with `sidecar/configure`, which applies from the next render.
 */
export function settingsChange(before: ExtensionSettings, after: ExtensionSettings): SettingsChange {
  const spawnKeys = ['serverCommand', 'interpreter', 'memoryRoot', 'logLevel'] as const;
  const changed = spawnKeys.filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key])).map((key) => `mimoSidecar.${key}`);
  if (changed.length) return { kind: 'restart', settings: changed };
  return JSON.stringify(before.config) === JSON.stringify(after.config) ? { kind: 'none', settings: [] } : { kind: 'configure', settings: [] };
}

/**
 * The setting to fix for a config key the sidecar refused, from the field path of its error
 * (`initializationOptions.config.compaction.trigger_ratio`, `config.checkpoint.push_caps.memory`):
 * the named setting when one sets that key and is set, else `mimoSidecar.config`.
 */
export function settingFor(field: string, get: SettingsReader): string | undefined {
  const match = /(?:^|\.)config\.(.+)$/.exec(field);
  if (!match) return undefined;
  const path = (match[1] as string).split('.');
  for (const { setting, path: keyPath } of CONFIG_SETTINGS) {
    const covers = keyPath.every((key, i) => path[i] === key);
    const value = get(setting);
    if (covers && value !== null && value !== undefined) return `mimoSidecar.${setting}`;
  }
  return `mimoSidecar.config (${path.join('.')})`;
}

/** `~` and `${workspaceFolder}` (the first folder, or `${workspaceFolder:name}`) in a path setting. */
export function expandPath(value: string, home: string, folders: readonly { name: string; path: string }[]): string | undefined {
  let unresolved = false;
  let out = value.replace(/\$\{workspaceFolder(?::([^}]+))?\}/g, (_, name: string | undefined) => {
    const folder = name === undefined ? folders[0] : folders.find((f) => f.name === name);
    if (!folder) unresolved = true;
    return folder?.path ?? '';
  });
  if (out === '~' || out.startsWith('~/')) out = home + out.slice(1);
  return unresolved ? undefined : out;
}
