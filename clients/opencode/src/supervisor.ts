// One sidecar process per OpenCode process, started on first use and started again when it dies.
//
// `ready()` is what every hook calls: the live sidecar, or a new one started now (spawn,
// `initialize`, `tools/list`), or null when none can be had, in which case the caller goes on
// without it (the user's turn proceeds with OpenCode's own history). A start that failed is not
// tried again before `retryAfterMs`, so a missing Python does not slow every model call down.
// Each start is a new incarnation: the sessions the plugin had opened are gone with the old
// process, and `SessionLink`s compare incarnations to know when to open them again.

import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Sidecar } from 'mimo-sidecar-client';
import type { StatusNotification } from 'mimo-sidecar-client';
import { describe, type Logger } from './log.js';

export interface SupervisorSettings {
  command: string[];
  memoryRoot: string;
  logFile: string;
  config: Record<string, unknown>;
  toolPrefix: string | null;
  startTimeoutMs: number;
  retryAfterMs: number;
}

/** One model tool as `tools/list` gives it in the `ai-sdk` (MCP) shape. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface Live {
  sidecar: Sidecar;
  incarnation: number;
  pid: number | undefined;
  tools: ToolDefinition[];
}

export class Supervisor {
  private live: Live | undefined;
  private starting: Promise<Live | null> | undefined;
  private failedAt = -Infinity;
  private incarnations = 0;
  private stopped = false;

  constructor(
    private readonly settings: SupervisorSettings,
    private readonly log: Logger,
    private readonly onStatus: (status: StatusNotification) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** The incarnation of the live sidecar (0: none yet). */
  get incarnation(): number {
    return this.live?.incarnation ?? 0;
  }

  /** The live sidecar, without starting one. */
  current(): Live | undefined {
    return this.live;
  }

  /** The live sidecar, or one started now; null when none can be had (logged). */
  async ready(): Promise<Live | null> {
    if (this.stopped) return null;
    if (this.live) return this.live;
    if (!this.starting) {
      if (this.now() - this.failedAt < this.settings.retryAfterMs) return null;
      this.starting = this.start().finally(() => {
        this.starting = undefined;
      });
    }
    return this.starting;
  }

  /** Forget the sidecar of `incarnation` (its connection failed): the next `ready()` starts one. */
  lost(incarnation: number, why: string): void {
    const live = this.live;
    if (!live || live.incarnation !== incarnation) return;
    this.live = undefined;
    this.log.log('warn', `the sidecar (pid ${live.pid}) is gone: ${why}; the next model call starts a new one`);
    live.sidecar.process?.kill('SIGKILL');
    live.sidecar.connection.dispose();
  }

  /** `shutdown` and `exit` (the sidecar also ends by itself when OpenCode does). */
  async stop(): Promise<void> {
    this.stopped = true;
    const live = this.live ?? (await this.starting?.catch(() => null)) ?? undefined;
    this.live = undefined;
    if (live) await live.sidecar.close().catch(() => undefined);
  }

  private async start(): Promise<Live | null> {
    const incarnation = this.incarnations + 1;
    const [program, ...args] = this.settings.command;
    let sidecar: Sidecar | undefined;
    try {
      await mkdir(this.settings.memoryRoot, { recursive: true });
      await mkdir(dirname(this.settings.logFile), { recursive: true });
      sidecar = Sidecar.spawn({
        command: [program as string, ...args, '--log-file', this.settings.logFile],
        // With --log-file, stderr carries only what comes before logging starts (a Python that
        // cannot import the sidecar): OpenCode's log gets it.
        onLog: (line) => this.log.log('warn', `sidecar stderr: ${line}`),
      });
      const started = sidecar;
      const child = started.process;
      // A write to a sidecar that died fails on its stdin: the connection reports it, nothing throws.
      child?.stdin?.on('error', () => undefined);
      let exitedAtStart: (code: number | null, signal: NodeJS.Signals | null) => void = () => undefined;
      const spawnFailed = new Promise<never>((_, reject) => {
        child?.on('error', (error) => reject(new Error(`cannot start ${program}: ${describe(error)}`)));
        exitedAtStart = (code, signal) => reject(new Error(`${program} exited at start (${signal ?? `code ${code}`})`));
        child?.once('exit', exitedAtStart);
      });
      spawnFailed.catch(() => undefined);
      const timeout = new Promise<never>((_, reject) => {
        const timer = setTimeout(() => reject(new Error(`no answer within ${this.settings.startTimeoutMs} ms`)), this.settings.startTimeoutMs);
        timer.unref();
      });
      timeout.catch(() => undefined);
      const handshake = (async () => {
        await started.initialize({
          processId: process.pid,
          capabilities: {},
          initializationOptions: { memoryRoot: this.settings.memoryRoot, config: this.settings.config },
        });
        await started.initialized();
        if (this.settings.toolPrefix === null) return [];
        const listed = await started.toolsList({ format: 'ai-sdk', prefix: this.settings.toolPrefix });
        return listed.tools as unknown as ToolDefinition[];
      })();
      const tools = await Promise.race([handshake, spawnFailed, timeout]);
      const live: Live = { sidecar: started, incarnation, pid: child?.pid, tools };
      this.incarnations = incarnation;
      started.onRebuildStatus((status) => this.onStatus(status));
      started.onWindowLogMessage((message) => this.log.log('warn', `sidecar: ${message.message}`));
      child?.off('exit', exitedAtStart);
      child?.on('exit', (code, signal) => this.lost(incarnation, `it exited (${signal ?? `code ${code}`})`));
      started.connection.onClose(() => this.lost(incarnation, 'its connection closed'));
      if (this.stopped) {
        await started.close().catch(() => undefined);
        return null;
      }
      this.live = live;
      this.log.log('info', `sidecar started (pid ${live.pid}, incarnation ${incarnation}): ${this.settings.command.join(' ')}`);
      return live;
    } catch (error) {
      this.failedAt = this.now();
      sidecar?.process?.kill('SIGKILL');
      sidecar?.connection.dispose();
      this.log.log(
        'error',
        `the sidecar could not be started (${describe(error)}); sessions go on unmanaged, next try in ${this.settings.retryAfterMs} ms`,
      );
      return null;
    }
  }
}
