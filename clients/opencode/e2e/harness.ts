// The end-to-end test's world: the real `opencode` binary (opencode-ai, pinned in package.json),
// the plugin as a user installs it (its built dist/, named in opencode.json with options), the real
// sidecar (MIMO_SIDECAR_PYTHON, the repository's .venv), a fake model server the test owns, and a
// home of its own: HOME and every XDG directory point into a temporary folder, so the user's own
// OpenCode config and sessions are never read or touched.

import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url)); // dist/e2e
export const PLUGIN_DIR = resolve(here, '..', '..');
export const REPO = resolve(PLUGIN_DIR, '..', '..');
export const OPENCODE = join(PLUGIN_DIR, 'node_modules', '.bin', 'opencode');
export const PLUGIN_ENTRY = pathToFileURL(join(PLUGIN_DIR, 'dist', 'src', 'index.js')).href;

export function sidecarPython(): string {
  return process.env.MIMO_SIDECAR_PYTHON ?? join(REPO, '.venv', 'bin', 'python');
}

export interface World {
  root: string;
  home: string;
  project: string;
  dataDir: string;
  env: NodeJS.ProcessEnv;
}

export interface ModelLimit {
  context: number;
  output: number;
}

/** A fresh home and project under `root`, OpenCode configured for the fake model and the plugin. */
export function makeWorld(root: string, baseURL: string, limit: ModelLimit, pluginOptions: Record<string, unknown>): World {
  const home = join(root, 'home');
  const project = join(root, 'project');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    // Without these OpenCode reaches for the internet at start.
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
  };
  mkdirSync(project, { recursive: true });
  // OpenCode installs @opencode-ai/plugin into its config directory on its first start (an npm
  // install, seconds, and a stall where the registry is out of reach). It skips the install when
  // the directory has node_modules and a lockfile that lists every dependency: the test's fresh
  // config directory is given both, empty, since nothing in it needs the package (the plugin
  // brings its own, from its lockfile).
  const config = join(env.XDG_CONFIG_HOME as string, 'opencode');
  mkdirSync(join(config, 'node_modules'), { recursive: true });
  const deps = { '@opencode-ai/plugin': '1.18.33' };
  writeFileSync(join(config, 'package.json'), JSON.stringify({ dependencies: deps }));
  writeFileSync(join(config, 'package-lock.json'), JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies: deps } } }));
  writeFileSync(
    join(project, 'opencode.json'),
    JSON.stringify(
      {
        $schema: 'https://opencode.ai/config.json',
        provider: {
          fake: {
            npm: '@ai-sdk/openai-compatible',
            name: 'Fake',
            options: { baseURL, apiKey: 'e2e' },
            models: { e2e: { name: 'E2E model', limit } },
          },
        },
        model: 'fake/e2e',
        plugin: [[PLUGIN_ENTRY, pluginOptions]],
      },
      null,
      2,
    ),
  );
  return { root, home, project, dataDir: join(env.XDG_DATA_HOME as string, 'opencode'), env };
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  pid: number;
  ms: number;
}

/** `opencode run <message> [args]` in the project, its logs on stderr; killed after `timeoutMs`. */
export function opencodeRun(world: World, message: string, args: string[] = [], timeoutMs = 60_000): Promise<Run> & { pid: number } {
  const started = Date.now();
  const child = spawn(OPENCODE, ['run', message, '--model', 'fake/e2e', '--print-logs', '--log-level', 'INFO', ...args], {
    cwd: world.project,
    env: world.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<Run>((resolveRun) => {
    child.on('close', (code) => {
      clearTimeout(timer);
      // kept with the temporary home (OPENCODE_E2E_KEEP=1), to read what OpenCode logged
      if (process.env.OPENCODE_E2E_KEEP) writeFileSync(join(world.root, `run-${started}.stderr`), stderr);
      resolveRun({ code, stdout, stderr, pid: child.pid ?? -1, ms: Date.now() - started });
    });
  });
  return Object.assign(done, { pid: child.pid ?? -1 });
}

/** The processes whose parent is `pid` and whose command line holds `needle` (Linux /proc). */
export function childrenWith(pid: number, needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== pid) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      if (cmdline.includes(needle)) found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}
