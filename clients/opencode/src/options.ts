// The plugin's settings, from its entry in opencode.json:
//
//   "plugin": [["file:///…/clients/opencode/dist/src/index.js", {
//     "command": ["mimo-sidecar"],                      // how to start the sidecar
//     "config": {"compaction": {"trigger_ratio": "85%"}}  // the sidecar's own config keys, as they are
//   }]]
//
// Every key is optional; a key of the wrong type is an error that names it (the plugin then stays
// off, and says why in OpenCode's log), an unknown key a warning.

import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export interface WriterOptions {
  /** Run a checkpoint writer (one model call through OpenCode) when a rebuild is due. */
  enabled: boolean;
  /** The writer's model, `provider/model`; default: the model of the session it writes for. */
  model?: { providerID: string; modelID: string };
  /** Keep each writer's OpenCode session (a child of the one it wrote for) instead of deleting it. */
  keepSessions: boolean;
}

export interface PluginSettings {
  /** The command that starts the sidecar over stdio. */
  command: string[];
  /** The sidecar's memory root: checkpoint.md and the memory files of each session. */
  memoryRoot: string;
  /** Where the plugin keeps what a rebuild changed in each session (boundaries, marks, watermark). */
  stateDir: string;
  /** The sidecar's own log file. */
  logFile: string;
  /** `initializationOptions.config`: the sidecar's configuration keys (protocol.md "Configuration"). */
  config: Record<string, unknown>;
  /** The model tools' name prefix (`mimo_` → `mimo_history`…); null: no model tools offered. */
  toolPrefix: string | null;
  writer: WriterOptions;
  /** Show the sidecar's status ("Preparing conversation context…") and each rebuild as toasts. */
  toasts: boolean;
  /** How long a start of the sidecar may take before it counts as failed. */
  startTimeoutMs: number;
  /** After a failed start, how long to go on without the sidecar before trying again. */
  retryAfterMs: number;
}

export class OptionsError extends Error {
  constructor(
    readonly key: string,
    problem: string,
  ) {
    super(`plugin option ${key}: ${problem}`);
    this.name = 'OptionsError';
  }
}

const KEYS = new Set([
  'command',
  'python',
  'memoryRoot',
  'stateDir',
  'logFile',
  'config',
  'tools',
  'toolPrefix',
  'writer',
  'toasts',
  'startTimeoutMs',
  'retryAfterMs',
]);
const WRITER_KEYS = new Set(['enabled', 'model', 'keepSessions']);
// The sidecar's rule for a tool-name prefix (protocol.md "Model tools": names stay within every
// provider's rule once `history`, `memory` or `task` follows).
const PREFIX = /^[A-Za-z_][A-Za-z0-9_-]{0,40}$/;

/** OpenCode's data directory (`$XDG_DATA_HOME/opencode`, else `~/.local/share/opencode`). */
export function openCodeDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_DATA_HOME && isAbsolute(env.XDG_DATA_HOME) ? env.XDG_DATA_HOME : join(homedir(), '.local', 'share');
  return join(base, 'opencode');
}

/** The settings from the plugin's options (`raw`), with `warnings` for the keys it does not know. */
export function readOptions(
  raw: unknown,
  env: NodeJS.ProcessEnv = process.env,
): { settings: PluginSettings; warnings: string[] } {
  const options = raw === undefined || raw === null ? {} : raw;
  if (!isObject(options)) throw new OptionsError('(options)', 'must be an object');
  const warnings = Object.keys(options)
    .filter((key) => !KEYS.has(key))
    .map((key) => `plugin option ${key}: unknown, ignored`);
  const home = join(openCodeDataDir(env), 'mimo-sidecar');

  let command: string[] = ['mimo-sidecar'];
  if (options.command !== undefined) {
    if (!Array.isArray(options.command) || options.command.length === 0 || !options.command.every(isText)) {
      throw new OptionsError('command', 'must be a non-empty list of strings, the program first');
    }
    command = [...options.command];
  } else if (options.python !== undefined) {
    if (!isText(options.python)) throw new OptionsError('python', 'must be the path of a Python interpreter');
    command = [options.python, '-m', 'mimo_sidecar'];
  }

  const toolsOn = optionalBoolean(options, 'tools') ?? true;
  const prefix = options.toolPrefix === undefined ? 'mimo_' : options.toolPrefix;
  if (typeof prefix !== 'string' || !PREFIX.test(prefix)) {
    throw new OptionsError('toolPrefix', 'must be letters, digits, _ or - (not a digit or - first), at most 41');
  }

  const config = options.config === undefined ? {} : options.config;
  if (!isObject(config)) throw new OptionsError('config', "must be an object of the sidecar's config keys");

  const writerRaw = options.writer === undefined ? {} : options.writer;
  if (!isObject(writerRaw)) throw new OptionsError('writer', 'must be an object');
  for (const key of Object.keys(writerRaw)) {
    if (!WRITER_KEYS.has(key)) warnings.push(`plugin option writer.${key}: unknown, ignored`);
  }
  const writer: WriterOptions = {
    enabled: optionalBoolean(writerRaw, 'enabled', 'writer.enabled') ?? true,
    keepSessions: optionalBoolean(writerRaw, 'keepSessions', 'writer.keepSessions') ?? false,
  };
  if (writerRaw.model !== undefined) writer.model = modelRef(writerRaw.model);

  return {
    settings: {
      command,
      memoryRoot: path(options, 'memoryRoot') ?? join(home, 'memory'),
      stateDir: path(options, 'stateDir') ?? join(home, 'sessions'),
      logFile: path(options, 'logFile') ?? join(home, 'sidecar.log'),
      config: { ...config },
      toolPrefix: toolsOn ? prefix : null,
      writer,
      toasts: optionalBoolean(options, 'toasts') ?? true,
      startTimeoutMs: optionalCount(options, 'startTimeoutMs') ?? 30_000,
      retryAfterMs: optionalCount(options, 'retryAfterMs') ?? 5_000,
    },
    warnings,
  };
}

function modelRef(value: unknown): { providerID: string; modelID: string } {
  const slash = typeof value === 'string' ? value.indexOf('/') : -1;
  if (typeof value !== 'string' || slash <= 0 || slash === value.length - 1) {
    throw new OptionsError('writer.model', 'must be "provider/model", as OpenCode names models');
  }
  return { providerID: value.slice(0, slash), modelID: value.slice(slash + 1) };
}

function path(options: Record<string, unknown>, key: string): string | undefined {
  const value = options[key];
  if (value === undefined) return undefined;
  if (!isText(value) || !isAbsolute(value)) throw new OptionsError(key, 'must be an absolute path');
  return value;
}

function optionalBoolean(options: Record<string, unknown>, key: string, name = key): boolean | undefined {
  const value = options[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new OptionsError(name, 'must be true or false');
  return value;
}

function optionalCount(options: Record<string, unknown>, key: string): number | undefined {
  const value = options[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new OptionsError(key, 'must be a whole number of milliseconds, 0 or more');
  }
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isText(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0;
}
