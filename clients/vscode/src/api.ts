// The API this extension's `activate` returns: what an agent extension calls to use the sidecar
// without spawning anything itself. Types only (nothing here runs), so that an agent extension can
// compile against this file; the wire types are those of the typed client (clients/typescript,
// generated from the sidecar's schemas), imported by relative path from files that import
// nothing, so a checkout of the repository is all a consumer needs. README.md, "The API", shows
// the whole loop.
//
//   const ext = vscode.extensions.getExtension<MimoSidecarApi>('mimo-sidecar.mimo-sidecar');
//   const mimo = await ext!.activate();
//   await mimo.sessionOpen(params, { restore: () => myStorage.openParams(sessionId) });
//   const computed = await mimo.rebuildCompute({ sessionId, usage, model });
//
// Every method sends one request to the one sidecar of this window (started on the first call,
// restarted when it dies) and resolves with the sidecar's result, or rejects with a
// `MimoSidecarApiError` (see its `reason`s). Several agent extensions share that sidecar: session
// IDs are theirs to keep distinct.
//
// Restarts. The sidecar keeps sessions in memory only, so a crash loses them. The extension does
// not replay what it was given (a replay cannot be the session: the sidecar itself inserted
// boundaries, marked results and stored watermarks, which the host persisted, protocol.md "Host
// obligations"). Instead, per session:
//   - with `restore` (an `sessionOpen` option), the extension reopens the session in the new
//     process from the params `restore` returns, your storage's current state, parents first,
//     before it serves any other call; `onDidRestart` lists it under `restored`;
//   - without it, the session is lost: every later call naming it rejects with `SessionLost`
//     until you `sessionOpen` it again; `onDidRestart` lists it under `lost`.
// Requests in flight when the process died reject with `SidecarExited`. Checkpoint writers are not
// remembered by a new process (protocol.md "After a restart", step 4).

import type {
  CommitParams,
  CommitResult,
  ComputeParams,
  ComputeResult,
  BuildParams,
  BuildResult,
  CloseResult,
  InsertParams,
  InsertResult,
  OpenParams,
  OpenResult,
  PrepareParams,
  PrepareResult,
  ProgressParams,
  SessionInfo,
  SessionRef,
  StatusNotification,
  SyncParams,
  SyncResult,
  ToolsCallParams,
  ToolsCallResult,
  ToolsListParams,
  ToolsListResult,
  WriterFinishedParams,
  WriterFinishedResult,
  WriterStartedParams,
  WriterStartedResult,
} from '../../typescript/src/protocol.js';
import type { ClientRequests } from '../../typescript/src/methods.js';

export type * from '../../typescript/src/protocol.js';
export type * from '../../typescript/src/methods.js';

/** The same shape as `vscode.Disposable`, `vscode.Event` and `vscode.CancellationToken`. */
export interface Disposable {
  dispose(): unknown;
}
export type Event<T> = (listener: (event: T) => unknown) => Disposable;
export interface CancellationToken {
  readonly isCancellationRequested: boolean;
  readonly onCancellationRequested: Event<unknown>;
}

/** Why a call failed: the sidecar's error name (protocol.md "Errors"), or the extension's own. */
export type ErrorReason =
  | 'SessionLost'
  | 'SidecarExited'
  | 'SidecarUnavailable'
  | 'Timeout'
  | 'Cancelled'
  | 'SidecarError'
  | 'ParseError'
  | 'InvalidRequest'
  | 'MethodNotFound'
  | 'InvalidParams'
  | 'InternalError'
  | 'ServerNotInitialized'
  | 'SessionNotFound'
  | 'RevisionConflict'
  | 'MessageNotFound'
  | 'SessionAlreadyOpen'
  | 'InvalidSessionData'
  | 'WriterStateError'
  | 'WatermarkUnavailable'
  | 'InvalidCheckpointContent'
  | 'MemoryWriteFailed'
  | 'BoundaryIdRequired'
  | 'UnknownTool'
  | 'EmptyRequest'
  | (string & {});

/** What every API method rejects with (an `Error`; test `name` and `reason`, not `instanceof`). */
export interface MimoSidecarApiError extends Error {
  readonly name: 'MimoSidecarError';
  readonly reason: ErrorReason;
  /** The protocol method that failed (`session/sync`). */
  readonly method: string;
  readonly sessionId?: string;
  /** The sidecar's JSON-RPC error code, when the sidecar answered the error. */
  readonly code?: number;
  /** The sidecar's error `data` (`name`, `field`, `errors`…), when the sidecar answered it. */
  readonly data?: Record<string, unknown>;
  /** `data.field`: the input at fault, when the sidecar named one. */
  readonly field?: string;
}

export type SidecarStateName =
  /** Not started yet: it starts on the first call that needs it. */
  | 'stopped'
  | 'starting'
  | 'running'
  /** The process died; a new one is starting (and restoring sessions). */
  | 'restarting'
  /** No process can run until the settings change or `restart()` is called (`detail` says why). */
  | 'failed';

export interface SidecarState {
  state: SidecarStateName;
  /** The process ID of the running sidecar. */
  pid?: number;
  /** `mimo-sidecar <version>` of the command in use. */
  version?: string;
  /** The command that runs it (`[python, '-m', 'mimo_sidecar']`). */
  command?: string[];
  /** 1 for the first process of this window, +1 for each new one. */
  generation: number;
  /** Unexpected exits that were restarted, in this window. */
  restarts: number;
  /** Why it is `failed` or `restarting`; the output channel has the whole story. */
  detail?: string;
}

export interface RestartEvent {
  /** The new process's generation (`state.generation`). */
  generation: number;
  /** How the old process ended: `signal SIGKILL`, `exit code 1`, `restarted on request (…)`. */
  exit: string;
  /** Sessions reopened from their `restore`, in the order they were opened. */
  restored: string[];
  /** Sessions lost: no `restore`, or `restore` or its `session/open` failed (`why`). */
  lost: { sessionId: string; why: string }[];
}

export interface OpenOptions {
  /**
   * The session as your storage holds it now, to reopen it in a new sidecar process after a
   * crash: the `session/open` params protocol.md "After a restart" lists (every message in
   * creation order, boundaries and compaction marks included; the last stored watermark; the
   * same requestPrefix, toolNameMap, toolPointers, parent). Called once per restart.
   */
  restore?: () => OpenParams | Promise<OpenParams>;
}

export interface MimoSidecarApi {
  /** This API's version; it changes only with an incompatible change. */
  readonly apiVersion: 1;
  readonly state: SidecarState;
  readonly onDidChangeState: Event<SidecarState>;
  /** Each process after the first, once its sessions are restored. */
  readonly onDidRestart: Event<RestartEvent>;
  /** `rebuild/status` of every session (the status bar shows them too). */
  readonly onDidChangeRebuildStatus: Event<StatusNotification>;
  /** `$/progress` of rebuilds (shown as progress notifications too). */
  readonly onDidProgress: Event<ProgressParams>;

  /** Starts the sidecar if it is not running; resolves with its state once it serves requests. */
  start(): Promise<SidecarState>;
  /** A new process, restoring sessions as after a crash (not counted against the restart limit). */
  restart(): Promise<SidecarState>;
  /** The sessions open through this API in the current process. */
  openSessions(): string[];

  sessionOpen(params: OpenParams, options?: OpenOptions, token?: CancellationToken): Promise<OpenResult>;
  sessionSync(params: SyncParams, token?: CancellationToken): Promise<SyncResult>;
  sessionGet(params: SessionRef, token?: CancellationToken): Promise<SessionInfo>;
  sessionClose(params: SessionRef, token?: CancellationToken): Promise<CloseResult>;
  checkpointWriterStarted(params: WriterStartedParams, token?: CancellationToken): Promise<WriterStartedResult>;
  checkpointWriterFinished(params: WriterFinishedParams, token?: CancellationToken): Promise<WriterFinishedResult>;
  checkpointPrepare(params: PrepareParams, token?: CancellationToken): Promise<PrepareResult>;
  checkpointCommit(params: CommitParams, token?: CancellationToken): Promise<CommitResult>;
  rebuildCompute(params: ComputeParams, token?: CancellationToken): Promise<ComputeResult>;
  /** May wait for a checkpoint writer (the status bar shows "Preparing conversation context…"). */
  rebuildInsert(params: InsertParams, token?: CancellationToken): Promise<InsertResult>;
  requestBuild(params: BuildParams, token?: CancellationToken): Promise<BuildResult>;
  toolsList(params?: ToolsListParams, token?: CancellationToken): Promise<ToolsListResult>;
  toolsCall(params: ToolsCallParams, token?: CancellationToken): Promise<ToolsCallResult>;
  /**
   * Any client request by name, typed by the method table. `initialize`, `shutdown` and
   * `sidecar/configure` are the extension's (settings drive the config): they reject with
   * `InvalidRequest`. `session/open` through here registers no `restore`.
   */
  request<M extends keyof ClientRequests>(method: M, params: ClientRequests[M]['params'], token?: CancellationToken): Promise<ClientRequests[M]['result']>;
}
