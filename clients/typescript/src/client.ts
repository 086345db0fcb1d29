// A thin typed client for mimo-sidecar over vscode-jsonrpc: one method per protocol method, the
// generated wire types in and out (src/protocol.ts), typed notification handlers.
//
//   const sidecar = Sidecar.spawn({ python: '/path/to/venv/bin/python' });
//   sidecar.onRebuildStatus((s) => statusBar.set(s.state, s.message));
//   await sidecar.initialize({ processId: process.pid, capabilities: {},
//                              initializationOptions: { memoryRoot } });
//   const opened = await sidecar.sessionOpen({ sessionId, messages });   // OpenResult
//   ...
//   await sidecar.close();                                               // shutdown, exit: 0
//
// Method names follow one rule (the Python client's, in camelCase): `$/` dropped, the words of
// the method joined: `session/open` -> `sessionOpen`, `checkpoint/writerStarted` ->
// `checkpointWriterStarted`; a handler is `on` + the same name capitalised (`onRebuildStatus`).
// test/client.test.ts checks that every method of ../../schemas/methods.json has its method.

import { spawn, type ChildProcess } from 'node:child_process';
import {
  CancellationTokenSource,
  type CancellationToken,
  type Disposable,
  type MessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from 'vscode-jsonrpc/node';
import type { ClientRequests, SidecarNotifications, SidecarRequests } from './methods.js';
import type * as P from './protocol.js';

/** `data` of every error answer: `name` is the error's name in protocol.md's table. */
export interface SidecarErrorData {
  name: string;
  field?: string;
  errors?: { field: string; message: string; type: string }[];
  [key: string]: unknown;
}

/** An error answer of the sidecar's (vscode-jsonrpc's `ResponseError`, with the sidecar's `data`). */
export type SidecarError = ResponseError<SidecarErrorData>;

export function isSidecarError(error: unknown): error is SidecarError {
  return error instanceof ResponseError && typeof (error.data as { name?: unknown } | undefined)?.name === 'string';
}

/** No answer within the time allowed; the request was cancelled on the sidecar. */
export class SidecarTimeout extends Error {
  constructor(
    readonly method: string,
    readonly ms: number,
  ) {
    super(`no response to ${method} within ${ms} ms`);
    this.name = 'SidecarTimeout';
  }
}

/** The sidecar process could not be started, or its pipes failed (`processError` is Node's error, e.g.
 * ENOENT for an interpreter that does not exist). Every request after it rejects with it. */
export class SidecarUnavailable extends Error {
  constructor(readonly processError: Error) {
    super(`the sidecar process failed: ${processError.message}`);
    this.name = 'SidecarUnavailable';
  }
}

// How long to wait for each answer: as long as the sidecar itself may wait, plus a margin
// (the Python client's client/timeouts.py says why).
const MARGIN_MS = 30_000;
const DEFAULT_WITH_WATERMARK_MS = 30_000;
const DEFAULT_WITHOUT_WATERMARK_MS = 300_000;

export interface Timeouts {
  /** Most requests answer at once: enough for a session/open of tens of megabytes. */
  requestMs: number;
  /** rebuild/insert may wait for a writer: a cold start, then a promoted queued writer. */
  insertMs: number;
  /** shutdown waits for requests in flight, at most 10 s. */
  shutdownMs: number;
}

export function timeoutsFollowing(config?: P.SidecarConfig | null): Timeouts {
  const waits = config?.checkpoint?.writer_wait_ms;
  const withWatermark = waits?.with_watermark ?? DEFAULT_WITH_WATERMARK_MS;
  const withoutWatermark = waits?.without_watermark ?? DEFAULT_WITHOUT_WATERMARK_MS;
  return { requestMs: 120_000, insertMs: withWatermark + withoutWatermark + MARGIN_MS, shutdownMs: 10_000 + MARGIN_MS };
}

export interface SpawnOptions {
  /** The command that starts the sidecar. Default: `[python, '-m', 'mimo_sidecar', '--stdio']`. */
  command?: string[];
  /** The interpreter that has mimo_sidecar installed. Default: $MIMO_SIDECAR_PYTHON, else `python3`. */
  python?: string;
  /** More arguments (`--log-level`, `--log-file PATH`). */
  args?: string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Each line the sidecar logs on stderr (show it, never parse it). Default: ignored. */
  onLog?: (line: string) => void;
}

type Params<M extends keyof ClientRequests> = ClientRequests[M]['params'];
type Result<M extends keyof ClientRequests> = ClientRequests[M]['result'];
type Handler<T> = (params: T) => void;

export class Sidecar {
  timeouts: Timeouts = timeoutsFollowing();
  /** Set when the process failed to start or its pipes broke (see `SidecarUnavailable`). */
  failure?: SidecarUnavailable;

  constructor(
    readonly connection: MessageConnection,
    readonly process?: ChildProcess,
  ) {
    // Creating a progress token needs nothing of the host: answer null (the sidecar asks only a
    // client that advertised window.workDoneProgress).
    connection.onRequest('window/workDoneProgress/create', () => null);
    connection.onClose(() => connection.dispose()); // pending requests reject instead of hanging
    connection.listen();
  }

  /** Start a sidecar process and connect to it over its stdio. */
  static spawn(options: SpawnOptions = {}): Sidecar {
    const python = options.python ?? process.env.MIMO_SIDECAR_PYTHON ?? 'python3';
    const [command, ...rest] = options.command ?? [python, '-m', 'mimo_sidecar', '--stdio'];
    const child = spawn(command as string, [...rest, ...(options.args ?? [])], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: options.env ?? process.env,
      cwd: options.cwd,
    });
    let pending = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) options.onLog?.(line);
    });
    const connection = createMessageConnection(
      new StreamMessageReader(child.stdout),
      new StreamMessageWriter(child.stdin),
    );
    const sidecar = new Sidecar(connection, child);
    // Without a listener, Node throws a failed spawn (a wrong interpreter path: ENOENT) or a broken
    // stdin pipe (EPIPE, the process died) as an uncaught exception and takes the host down with
    // it. Recorded instead: pending and later requests reject with SidecarUnavailable.
    const failed = (error: Error) => {
      sidecar.failure ??= new SidecarUnavailable(error);
      options.onLog?.(sidecar.failure.message);
      connection.dispose();
    };
    child.on('error', failed);
    child.stdin.on('error', failed);
    return sidecar;
  }

  // -- lifecycle ---------------------------------------------------------------------------------
  async initialize(params: P.InitializeParams, token?: CancellationToken): Promise<P.InitializeResult> {
    const result = await this.request('initialize', params, token);
    this.timeouts = timeoutsFollowing(params.initializationOptions.config);
    return result;
  }

  async initialized(): Promise<void> {
    await this.connection.sendNotification('initialized', {});
  }

  async sidecarConfigure(params: P.ConfigureParams, token?: CancellationToken): Promise<P.ConfigureResult> {
    const result = await this.request('sidecar/configure', params, token);
    this.timeouts = timeoutsFollowing(params.config);
    return result;
  }

  shutdown(token?: CancellationToken): Promise<null> {
    return this.request('shutdown', undefined, token);
  }

  async exit(): Promise<void> {
    await this.connection.sendNotification('exit');
  }

  /** `$/cancelRequest` by ID. A request given a cancelled token is cancelled this way already. */
  async cancelRequest(params: P.CancelParams): Promise<void> {
    await this.connection.sendNotification('$/cancelRequest', params);
  }

  // -- sessions ----------------------------------------------------------------------------------
  sessionOpen(params: P.OpenParams, token?: CancellationToken): Promise<P.OpenResult> {
    return this.request('session/open', params, token);
  }

  sessionSync(params: P.SyncParams, token?: CancellationToken): Promise<P.SyncResult> {
    return this.request('session/sync', params, token);
  }

  sessionGet(params: P.SessionRef, token?: CancellationToken): Promise<P.SessionInfo> {
    return this.request('session/get', params, token);
  }

  sessionClose(params: P.SessionRef, token?: CancellationToken): Promise<P.CloseResult> {
    return this.request('session/close', params, token);
  }

  // -- checkpoint writer ---------------------------------------------------------------------------
  checkpointWriterStarted(params: P.WriterStartedParams, token?: CancellationToken): Promise<P.WriterStartedResult> {
    return this.request('checkpoint/writerStarted', params, token);
  }

  checkpointWriterFinished(
    params: P.WriterFinishedParams,
    token?: CancellationToken,
  ): Promise<P.WriterFinishedResult> {
    return this.request('checkpoint/writerFinished', params, token);
  }

  checkpointPrepare(params: P.PrepareParams, token?: CancellationToken): Promise<P.PrepareResult> {
    return this.request('checkpoint/prepare', params, token);
  }

  checkpointCommit(params: P.CommitParams, token?: CancellationToken): Promise<P.CommitResult> {
    return this.request('checkpoint/commit', params, token);
  }

  // -- rebuild -------------------------------------------------------------------------------------
  rebuildCompute(params: P.ComputeParams, token?: CancellationToken): Promise<P.ComputeResult> {
    return this.request('rebuild/compute', params, token);
  }

  /** Its default timeout covers the longest writer wait the config allows. */
  rebuildInsert(params: P.InsertParams, token?: CancellationToken): Promise<P.InsertResult> {
    return this.request('rebuild/insert', params, token);
  }

  requestBuild(params: P.BuildParams, token?: CancellationToken): Promise<P.BuildResult> {
    return this.request('request/build', params, token);
  }

  // -- model tools ---------------------------------------------------------------------------------
  /** The sidecar's model tools in a format's tool shape, for the request's `tools`. */
  toolsList(params: P.ToolsListParams = {}, token?: CancellationToken): Promise<P.ToolsListResult> {
    return this.request('tools/list', params, token);
  }

  /** One call the model made to a sidecar tool: MCP's CallToolResult (`content[0].text` goes back). */
  toolsCall(params: P.ToolsCallParams, token?: CancellationToken): Promise<P.ToolsCallResult> {
    return this.request('tools/call', params, token);
  }

  // -- what the sidecar sends ----------------------------------------------------------------------
  onWindowLogMessage(handler: Handler<SidecarNotifications['window/logMessage']>): Disposable {
    return this.connection.onNotification('window/logMessage', handler);
  }

  onRebuildStatus(handler: Handler<SidecarNotifications['rebuild/status']>): Disposable {
    return this.connection.onNotification('rebuild/status', handler);
  }

  /** Told when the sidecar asks for a progress token (the client has answered it already). */
  onWindowWorkDoneProgressCreate(
    handler: Handler<SidecarRequests['window/workDoneProgress/create']['params']>,
  ): Disposable {
    return this.connection.onRequest('window/workDoneProgress/create', (params: P.WorkDoneProgressCreateParams) => {
      handler(params);
      return null;
    });
  }

  onProgress(handler: Handler<SidecarNotifications['$/progress']>): Disposable {
    return this.connection.onNotification('$/progress', handler);
  }

  // -- the process ---------------------------------------------------------------------------------
  /** `shutdown`, `exit`, and the process's exit code (killed when it does not end in time). */
  async close(): Promise<number | null> {
    const child = this.process;
    const exited = child
      ? new Promise<number | null>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null || this.failure) resolve(child.exitCode);
          else {
            child.once('exit', (code) => resolve(code));
            child.once('error', () => resolve(child.exitCode)); // never started: no 'exit' follows
          }
        })
      : Promise.resolve(null);
    try {
      await this.shutdown();
      await this.exit();
    } catch {
      // the process is gone already, or refuses: it is killed below if it stays
    }
    const timer = setTimeout(() => child?.kill(), this.timeouts.shutdownMs);
    const code = await exited;
    clearTimeout(timer);
    this.connection.dispose();
    return code;
  }

  /** Any request by name, typed by the method table (what the named methods call). */
  async request<M extends keyof ClientRequests>(
    method: M,
    params: Params<M>,
    token?: CancellationToken,
  ): Promise<Result<M>> {
    if (this.failure) throw this.failure;
    const ms = method === 'rebuild/insert' ? this.timeouts.insertMs : method === 'shutdown' ? this.timeouts.shutdownMs : this.timeouts.requestMs;
    const source = new CancellationTokenSource();
    const cancelled = token?.onCancellationRequested(() => source.cancel());
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      source.cancel();
    }, ms);
    try {
      return params === undefined
        ? await this.connection.sendRequest<Result<M>>(method, source.token)
        : await this.connection.sendRequest<Result<M>>(method, params, source.token);
    } catch (error) {
      if (timedOut) throw new SidecarTimeout(method, ms);
      throw this.failure ?? error;
    } finally {
      clearTimeout(timer);
      cancelled?.dispose();
      source.dispose();
    }
  }
}
