// One sidecar process for the window: started on first need, restarted when it dies (a bounded
// number of times, with a growing delay), stopped with the window. Knows nothing of `vscode`: the
// extension passes how to find the command and what to initialize with, and listens to its events.
//
// States: stopped -> starting -> running; running -> (unexpected exit) -> restarting -> running,
// or -> failed once more than `maxRestarts()` exits happened within RESTART_WINDOW_MS (or when the
// command cannot be found, or `initialize` is refused). From failed, only `restart()` or a settings
// change (which calls `restart()`) starts a process again.

import type { ChildProcess } from 'node:child_process';
import { Sidecar, type SidecarConfig } from 'mimo-sidecar-client';
import type { LogMessageParams, ProgressParams, StatusNotification } from 'mimo-sidecar-client';
import type { SidecarState, SidecarStateName } from './api.js';
import { Emitter } from './emitter.js';
import { MimoSidecarError } from './errors.js';
import type { LogLevel } from './settings.js';

export const RESTART_WINDOW_MS = 3 * 60_000;
/** How long the window's end waits for `shutdown`, then for the process to end, before a kill. */
export const STOP_SHUTDOWN_MS = 3_000;
export const STOP_EXIT_MS = 2_000;

export interface Logger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** One line of the sidecar's own log (its stderr), shown as it is. */
  sidecar(line: string): void;
}

export interface LaunchSpec {
  command: string[];
  version: string;
  memoryRoot: string;
  config: SidecarConfig;
  logLevel: LogLevel;
  cwd?: string;
}

/** Why a process cannot be started at all (no command, no memory root): not worth retrying. */
export class LaunchRefused extends Error {}

export interface SupervisorOptions {
  /** Everything a start needs, read again at every start (so settings changes apply). */
  prepare: () => Promise<LaunchSpec>;
  maxRestarts: () => number;
  log: Logger;
  /**
   * After `initialize`, before the process serves callers: reopen sessions (generation > 1). What
   * it returns is called once the state is `running` (to announce the restart).
   */
  afterStart?: (sidecar: Sidecar, generation: number, previousExit: string | undefined) => Promise<(() => void) | void>;
  onRebuildStatus?: (status: StatusNotification) => void;
  onProgress?: (progress: ProgressParams) => void;
  /** `window/logMessage`: the sidecar's config warnings. */
  onLogMessage?: (message: LogMessageParams) => void;
  /** The delay before restart `attempt` (1, 2, …) after an unexpected exit. */
  backoffMs?: (attempt: number) => number;
  now?: () => number;
}

/** A started process and what the supervisor knows of it. */
export interface Live {
  readonly sidecar: Sidecar;
  readonly child: ChildProcess;
  readonly generation: number;
  readonly spec: LaunchSpec;
  /** Set when its connection closed or the process exited: every later failure is an exit. */
  exited: boolean;
  /** Set before the supervisor ends it itself (stop, restart): its exit is no crash. */
  expected: boolean;
  /** Resolves with how the process ended (`exit code 0`, `signal SIGKILL`). */
  readonly ended: Promise<string>;
}

const defaultBackoff = (attempt: number) => Math.min(500 * 2 ** (attempt - 1), 8_000);

export function describeExit(code: number | null, signal: NodeJS.Signals | null): string {
  return signal ? `signal ${signal}` : `exit code ${String(code)}`;
}

export class Supervisor {
  private live?: Live;
  private launching?: Promise<Live>;
  private generation = 0;
  private restarts = 0;
  private crashes: number[] = [];
  private disposed = false;
  private current: SidecarState = { state: 'stopped', generation: 0, restarts: 0 };
  private readonly stateEmitter: Emitter<SidecarState>;
  readonly onDidChangeState;

  constructor(private readonly options: SupervisorOptions) {
    this.stateEmitter = new Emitter((error) => options.log.error(`a state listener failed: ${String(error)}`));
    this.onDidChangeState = this.stateEmitter.event;
  }

  get state(): SidecarState {
    return { ...this.current };
  }

  /** The running process, started (or waited for) when needed; rejects when none can run. */
  async ready(): Promise<Live> {
    for (;;) {
      if (this.disposed) throw this.unavailable('the window is closing');
      if (this.live && this.current.state === 'running') return this.live;
      if (this.launching) {
        try {
          return await this.launching;
        } catch {
          continue; // a start that failed may have scheduled a restart: look again
        }
      }
      if (this.current.state === 'failed') throw this.unavailable(this.current.detail ?? 'the sidecar cannot start');
      if (this.current.state === 'starting' || this.current.state === 'restarting') {
        // a state listener calling in, before the launch that set the state is tracked
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      this.track(this.launch(undefined));
    }
  }

  /**
   * A new process now (the old one shut down first), the restart budget reset. Callers arriving
   * meanwhile wait for the new process; requests the old one still had fail as `SidecarExited`.
   */
  async restart(): Promise<SidecarState> {
    if (this.disposed) throw this.unavailable('the window is closing');
    this.crashes = [];
    await this.launching?.catch(() => undefined);
    const previous = this.live;
    this.live = undefined;
    const relaunch = (async () => {
      await null; // tracked first: a listener of the state below finds the launch under way
      this.setState('restarting', { detail: 'restarting on request' });
      const how = previous ? await this.end(previous) : undefined;
      return this.launch(how ? `restarted on request (the old process: ${how})` : this.generation > 0 ? 'restarted on request' : undefined);
    })();
    await this.track(relaunch).catch(() => undefined);
    return this.state;
  }

  /** `launching` is the launch under way (or scheduled) until it settles. */
  private track(launch: Promise<Live>): Promise<Live> {
    this.launching = launch;
    const clear = () => {
      if (this.launching === launch) this.launching = undefined;
    };
    launch.then(clear, clear);
    return launch;
  }

  /** `sidecar/configure` on the running process; nothing when none runs (the next start reads it). */
  async configure(config: SidecarConfig): Promise<string[] | undefined> {
    await this.launching?.catch(() => undefined); // a start under way may have read the old config
    const live = this.live;
    if (!live || this.current.state !== 'running') return undefined;
    const result = await live.sidecar.sidecarConfigure({ config });
    return result.warnings ?? [];
  }

  /** The window's end: `shutdown`, `exit`, the process's end (a kill when it does not come). */
  async stop(): Promise<string | undefined> {
    this.disposed = true;
    await this.launching?.catch(() => undefined);
    const live = this.live;
    this.live = undefined;
    const how = live ? await this.end(live) : undefined;
    this.setState('stopped', {});
    this.stateEmitter.dispose();
    return how;
  }

  private unavailable(why: string): MimoSidecarError {
    return new MimoSidecarError(`the sidecar is not running: ${why}`, 'SidecarUnavailable', 'start');
  }

  private setState(state: SidecarStateName, extra: Partial<SidecarState>): void {
    const live = this.live;
    this.current = {
      state,
      generation: this.generation,
      restarts: this.restarts,
      ...(live && state === 'running' ? { pid: live.child.pid, version: live.spec.version, command: live.spec.command } : {}),
      ...extra,
    };
    this.stateEmitter.fire(this.state);
  }

  private async launch(previousExit: string | undefined): Promise<Live> {
    const restarting = previousExit !== undefined;
    this.setState(restarting ? 'restarting' : 'starting', restarting ? { detail: `a new process after the last one's end (${previousExit})` } : {});
    let live: Live | undefined;
    try {
      const spec = await this.options.prepare();
      if (this.disposed) throw this.unavailable('the window is closing');
      live = this.spawn(spec);
      const { sidecar } = live;
      await sidecar.initialize({
        processId: process.pid, // the sidecar ends within 3 s of this extension host
        capabilities: { window: { workDoneProgress: true } },
        initializationOptions: { memoryRoot: spec.memoryRoot, config: spec.config },
      });
      await sidecar.initialized();
      this.options.log.info(
        `sidecar ${spec.version} started (pid ${String(live.child.pid)}, generation ${live.generation}): ${spec.command.join(' ')}; memory root ${spec.memoryRoot}`,
      );
      this.live = live;
      const announce = await this.options.afterStart?.(sidecar, live.generation, previousExit);
      if (live.exited) throw new Error('the sidecar exited during its start');
      this.setState('running', {});
      announce?.();
      return live;
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      if (this.live === live) this.live = undefined;
      if (live?.exited && !live.expected) {
        // It died while starting: a crash like any other. Its exit handler decides what follows
        // (a restart, or failed); wait for that handler to have run.
        await live.ended;
        throw this.unavailable(`the sidecar exited during its start (${await live.ended})`);
      }
      if (live) await this.end(live); // initialize refused (a config value), or afterStart failed
      this.options.log.error(`the sidecar could not start: ${why}`);
      this.setState('failed', { detail: why });
      throw error instanceof MimoSidecarError ? error : this.unavailable(why);
    }
  }

  private spawn(spec: LaunchSpec): Live {
    this.generation += 1;
    const args = ['--stdio', '--log-level', spec.logLevel];
    const sidecar = Sidecar.spawn({
      command: [...spec.command, ...args],
      cwd: spec.cwd,
      onLog: (line) => this.options.log.sidecar(line),
    });
    const child = sidecar.process as ChildProcess;
    let resolveEnded: (how: string) => void = () => undefined;
    const ended = new Promise<string>((resolve) => {
      resolveEnded = resolve;
    });
    const live: Live = { sidecar, child, generation: this.generation, spec, exited: false, expected: false, ended };
    child.on('error', (error) => this.options.log.error(`sidecar process: ${error.message}`));
    sidecar.connection.onClose(() => {
      live.exited = true;
    });
    child.on('exit', (code, signal) => {
      live.exited = true;
      const how = describeExit(code, signal);
      resolveEnded(how);
      this.exited(live, how);
    });
    if (this.options.onRebuildStatus) sidecar.onRebuildStatus(this.options.onRebuildStatus);
    if (this.options.onProgress) sidecar.onProgress(this.options.onProgress);
    if (this.options.onLogMessage) sidecar.onWindowLogMessage(this.options.onLogMessage);
    return live;
  }

  private exited(live: Live, how: string): void {
    if (live.expected || this.disposed) return;
    if (this.live === live) this.live = undefined;
    const now = (this.options.now ?? Date.now)();
    this.crashes = [...this.crashes.filter((t) => now - t < RESTART_WINDOW_MS), now];
    const limit = this.options.maxRestarts();
    if (this.crashes.length > limit) {
      const detail = `the sidecar exited ${this.crashes.length} times within ${RESTART_WINDOW_MS / 60_000} minutes (the last: ${how}); mimoSidecar.maxRestarts is ${limit}. Run "MiMo Sidecar: Restart" once the cause is fixed (the output channel has its log).`;
      this.options.log.error(detail);
      this.setState('failed', { detail });
      return;
    }
    const attempt = this.crashes.length;
    const delay = (this.options.backoffMs ?? defaultBackoff)(attempt);
    this.restarts += 1;
    this.options.log.warn(`the sidecar exited unexpectedly (${how}); restarting in ${delay} ms (restart ${attempt} of at most ${limit} within ${RESTART_WINDOW_MS / 60_000} minutes)`);
    const previous = how;
    this.setState('restarting', { detail: `exited unexpectedly (${how})` });
    this.track(
      new Promise<void>((resolve) => setTimeout(resolve, delay)).then(() => {
        if (this.disposed) throw this.unavailable('the window is closing');
        return this.launch(previous);
      }),
    ).catch(() => undefined);
  }

  /** Ends a process the supervisor no longer wants: shutdown, exit, then a kill if it stays. */
  private async end(live: Live): Promise<string> {
    live.expected = true;
    if (!live.exited) {
      const deadline = <T>(promise: Promise<T>, ms: number) =>
        Promise.race([promise, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), ms).unref())]);
      try {
        await deadline(live.sidecar.shutdown(), STOP_SHUTDOWN_MS);
        await live.sidecar.exit();
      } catch {
        // gone already, or refusing: the kill below ends it
      }
      if ((await deadline(live.ended, STOP_EXIT_MS)) === 'late') live.child.kill('SIGKILL');
    }
    const how = await live.ended;
    live.sidecar.connection.dispose();
    this.options.log.info(`sidecar (pid ${String(live.child.pid)}) stopped: ${how}`);
    return how;
  }
}
