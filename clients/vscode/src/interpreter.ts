// Finding the command that starts the sidecar. The sidecar is a Python package with compiled
// dependencies (pydantic-core, orjson, google-re2), so the extension cannot bundle it for every
// platform the way the Python-tools template bundles pure-Python libraries: it runs the
// `mimo_sidecar` of a Python the user has, found in this order:
//
//   1. `mimoSidecar.serverCommand`, as given (a wrapper script, `["mimo-sidecar"]` from pipx);
//   2. `mimoSidecar.interpreter`: `<python> -m mimo_sidecar`;
//   3. (nothing set) the Python extension's interpreter for the workspace, then each workspace
//      folder's `.venv` and `venv` (trusted workspaces only), then `mimo-sidecar` on PATH, then
//      `python3` and `python` on PATH.
//
// A candidate counts when `<command> --version` prints `mimo-sidecar <version>` within the probe
// timeout; an explicit setting that fails is an error (no silent fallback to another Python).

import { execFile } from 'node:child_process';
import { join } from 'node:path';

export type CandidateSource =
  | 'mimoSidecar.serverCommand'
  | 'mimoSidecar.interpreter'
  | 'python extension'
  | 'workspace venv'
  | 'PATH';

export interface Candidate {
  /** argv that starts the sidecar (without `--stdio` and the options the extension adds). */
  command: string[];
  source: CandidateSource;
}

export interface Found extends Candidate {
  version: string;
}

export interface Tried {
  candidate: Candidate;
  problem: string;
}

export interface Search {
  found?: Found;
  tried: Tried[];
  /** True when the command came from a setting: its failure is the user's to fix, not a miss. */
  explicit: boolean;
}

export interface CandidateInputs {
  serverCommand: string[];
  interpreter: string;
  /** The Python extension's interpreter for the workspace, when it is installed and has one. */
  pythonExtension?: string;
  /** Workspace folders whose venvs may be run (empty in an untrusted workspace). */
  trustedFolders: string[];
  platform: NodeJS.Platform;
}

export function pythonModule(python: string): string[] {
  return [python, '-m', 'mimo_sidecar'];
}

export function candidates(inputs: CandidateInputs): { list: Candidate[]; explicit: boolean } {
  if (inputs.serverCommand.length > 0) {
    return { list: [{ command: inputs.serverCommand, source: 'mimoSidecar.serverCommand' }], explicit: true };
  }
  if (inputs.interpreter) {
    return { list: [{ command: pythonModule(inputs.interpreter), source: 'mimoSidecar.interpreter' }], explicit: true };
  }
  const windows = inputs.platform === 'win32';
  const list: Candidate[] = [];
  if (inputs.pythonExtension) list.push({ command: pythonModule(inputs.pythonExtension), source: 'python extension' });
  for (const folder of inputs.trustedFolders) {
    for (const venv of ['.venv', 'venv']) {
      const python = windows ? join(folder, venv, 'Scripts', 'python.exe') : join(folder, venv, 'bin', 'python');
      list.push({ command: pythonModule(python), source: 'workspace venv' });
    }
  }
  list.push({ command: ['mimo-sidecar'], source: 'PATH' });
  for (const python of windows ? ['python', 'py'] : ['python3', 'python']) {
    list.push({ command: pythonModule(python), source: 'PATH' });
  }
  return { list, explicit: false };
}

/** Runs `<command> --version`; the version it prints, or why it is not a mimo-sidecar. */
export type Probe = (command: string[]) => Promise<{ version: string } | { problem: string }>;

export const PROBE_TIMEOUT_MS = 15_000;

/**
 * The probe, run in `cwd`. That directory must be one of the extension's own: `python -m` puts
 * its working directory first on sys.path, so in a checkout of mimo-sidecar any `python3` would
 * find the source's `mimo_sidecar` and answer `--version`, then fail on its first import of a
 * dependency when it serves. The extension spawns the sidecar in the same directory.
 */
export const probeVersionIn = (cwd: string): Probe => (command) =>
  new Promise((resolve) => {
    const [file, ...args] = command as [string, ...string[]];
    execFile(file, [...args, '--version'], { cwd, timeout: PROBE_TIMEOUT_MS, windowsHide: true }, (error, stdout, stderr) => {
      const match = /^mimo-sidecar (\S+)/m.exec(String(stdout));
      if (match) {
        resolve({ version: match[1] as string });
        return;
      }
      const errno = (error as NodeJS.ErrnoException | null)?.code;
      if (errno === 'ENOENT') resolve({ problem: 'not found' });
      else if (errno === 'EACCES') resolve({ problem: 'not executable' });
      else if ((error as { killed?: boolean } | null)?.killed) resolve({ problem: `no answer to --version within ${PROBE_TIMEOUT_MS / 1000} s` });
      else {
        const said = String(stderr).trim().split('\n').pop() || String(stdout).trim().split('\n').pop() || `exit code ${String(errno ?? error?.message)}`;
        resolve({ problem: `not a mimo-sidecar: ${said}` });
      }
    });
  });

export async function findSidecar(inputs: CandidateInputs, probe: Probe): Promise<Search> {
  const { list, explicit } = candidates(inputs);
  const tried: Tried[] = [];
  const seen = new Set<string>();
  for (const candidate of list) {
    const key = JSON.stringify(candidate.command);
    if (seen.has(key)) continue;
    seen.add(key);
    const answer = await probe(candidate.command);
    if ('version' in answer) return { found: { ...candidate, version: answer.version }, tried, explicit };
    tried.push({ candidate, problem: answer.problem });
  }
  return { tried, explicit };
}

/** One paragraph for the user: what was tried, and how to fix it. */
export function describeMiss(search: Search): string {
  const lines = search.tried.map((t) => `  ${t.candidate.command.join(' ')} (${t.candidate.source}): ${t.problem}`);
  const fix = search.explicit
    ? 'Fix the setting named above, or clear it to let the extension look for a Python.'
    : 'Install mimo-sidecar into a Python (`pip install <checkout of mimo-sidecar>`, or `pipx install` it) and set `mimoSidecar.interpreter` to that Python, or `mimoSidecar.serverCommand` to the command.';
  return `No mimo-sidecar could be started. Tried:\n${lines.join('\n')}\n${fix}`;
}
