// The object `activate` returns (api.ts): each method waits for a running sidecar, refuses a lost
// session, sends one request, reports the result's warnings in the output channel and maps every
// failure onto a MimoSidecarError.

import type { CancellationToken as RpcCancellationToken, ClientRequests, OpenParams, ProgressParams, StatusNotification } from 'mimo-sidecar-client';
import type { CancellationToken, MimoSidecarApi, OpenOptions, RestartEvent, SidecarState } from './api.js';
import { Emitter } from './emitter.js';
import { apiError, MimoSidecarError } from './errors.js';
import type { SessionRegistry } from './sessions.js';
import type { Logger, Supervisor } from './supervisor.js';

/** Requests the extension keeps to itself: the settings drive the lifecycle and the config. */
const RESERVED = new Set<string>(['initialize', 'shutdown', 'sidecar/configure']);

type Method = keyof ClientRequests;
type Params<M extends Method> = ClientRequests[M]['params'];
type Result<M extends Method> = ClientRequests[M]['result'];

export interface ApiEvents {
  restart: Emitter<RestartEvent>;
  status: Emitter<StatusNotification>;
  progress: Emitter<ProgressParams>;
  /** A session was opened or closed (the status bar's tooltip counts them). */
  sessionsChanged?: () => void;
}

/** Every warning an answer carries, one line each (`trigger.warnings` of rebuild/compute too). */
export function warningsOf(result: unknown): string[] {
  if (typeof result !== 'object' || result === null) return [];
  const record = result as { warnings?: unknown; trigger?: { warnings?: unknown } };
  const lists = [record.warnings, record.trigger?.warnings];
  return lists.flatMap((list) => (Array.isArray(list) ? list.filter((w): w is string => typeof w === 'string') : []));
}

export function createApi(supervisor: Supervisor, registry: SessionRegistry, events: ApiEvents, log: Logger): MimoSidecarApi {
  async function send<M extends Method>(method: M, params: Params<M>, token?: CancellationToken, restore?: OpenOptions['restore']): Promise<Result<M>> {
    const sessionId = (params as { sessionId?: unknown } | undefined)?.sessionId;
    const sid = typeof sessionId === 'string' ? sessionId : undefined;
    if (RESERVED.has(method)) {
      throw new MimoSidecarError(`${method}: the extension sends it itself (its settings drive the sidecar's lifecycle and config)`, 'InvalidRequest', method, sid);
    }
    const lost = sid !== undefined && method !== 'session/open' ? registry.lostReason(sid) : undefined;
    if (lost) {
      throw new MimoSidecarError(
        `${method}: session ${sid} was open in a sidecar process that has exited (generation ${lost.generation - 1}), and ${lost.why}`,
        'SessionLost',
        method,
        sid,
      );
    }
    if (token?.isCancellationRequested) throw new MimoSidecarError(`${method}: cancelled before it was sent`, 'Cancelled', method, sid);
    let live;
    try {
      live = await supervisor.ready();
    } catch (error) {
      throw apiError(error, method, sid, false);
    }
    let result: Result<M>;
    try {
      result = await live.sidecar.request(method, params, token as RpcCancellationToken | undefined);
    } catch (error) {
      throw apiError(error, method, sid, live.exited || live.expected); // `expected`: being restarted
    }
    for (const warning of warningsOf(result)) log.warn(`${method}${sid ? ` ${sid}` : ''}: ${warning}`);
    if (method === 'session/open') registry.opened(params as OpenParams, live.generation, restore);
    if (method === 'session/close') registry.closed(sid as string);
    if (method === 'session/open' || method === 'session/close') events.sessionsChanged?.();
    if (method === 'rebuild/compute') registry.computed(params as Params<'rebuild/compute'>);
    return result;
  }

  return {
    apiVersion: 1,
    get state(): SidecarState {
      return supervisor.state;
    },
    onDidChangeState: supervisor.onDidChangeState,
    onDidRestart: events.restart.event,
    onDidChangeRebuildStatus: events.status.event,
    onDidProgress: events.progress.event,
    async start() {
      try {
        await supervisor.ready();
      } catch (error) {
        throw apiError(error, 'start', undefined, false);
      }
      return supervisor.state;
    },
    restart: () => supervisor.restart(),
    openSessions: () => registry.ids(),
    sessionOpen: (params: OpenParams, options?: OpenOptions, token?: CancellationToken) =>
      send('session/open', params, token, options?.restore),
    sessionSync: (params, token) => send('session/sync', params, token),
    sessionGet: (params, token) => send('session/get', params, token),
    sessionClose: (params, token) => send('session/close', params, token),
    checkpointWriterStarted: (params, token) => send('checkpoint/writerStarted', params, token),
    checkpointWriterFinished: (params, token) => send('checkpoint/writerFinished', params, token),
    checkpointPrepare: (params, token) => send('checkpoint/prepare', params, token),
    checkpointCommit: (params, token) => send('checkpoint/commit', params, token),
    rebuildCompute: (params, token) => send('rebuild/compute', params, token),
    rebuildInsert: (params, token) => send('rebuild/insert', params, token),
    requestBuild: (params, token) => send('request/build', params, token),
    toolsList: (params = {}, token) => send('tools/list', params, token),
    toolsCall: (params, token) => send('tools/call', params, token),
    request: (method, params, token) => send(method, params, token),
  };
}
