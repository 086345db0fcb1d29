// The sessions agent extensions opened through the API, per sidecar process, and what becomes of
// them when that process dies: reopened from their `restore` (parents first), or lost until they
// are opened again. api.ts says why the extension does not replay what it was given instead.

import type { ComputeParams, OpenParams, Sidecar } from 'mimo-sidecar-client';
import type { RestartEvent } from './api.js';

/** How long one `restore` may take before its session counts as lost. */
export const RESTORE_TIMEOUT_MS = 60_000;

interface OpenSession {
  sessionId: string;
  parentId?: string;
  restore?: () => OpenParams | Promise<OpenParams>;
  /** The process it was opened in. */
  generation: number;
  /** The model and usage of the caller's last `rebuild/compute` (the commands' dry runs use them). */
  lastCompute?: Pick<ComputeParams, 'model' | 'usage' | 'agentId'>;
}

export interface LostSession {
  why: string;
  generation: number;
}

export class SessionRegistry {
  private readonly open = new Map<string, OpenSession>();
  private readonly lost = new Map<string, LostSession>();

  opened(params: OpenParams, generation: number, restore?: OpenSession['restore']): void {
    this.lost.delete(params.sessionId);
    this.open.set(params.sessionId, {
      sessionId: params.sessionId,
      ...(params.parent?.sessionId ? { parentId: params.parent.sessionId } : {}),
      ...(restore ? { restore } : {}),
      generation,
    });
  }

  closed(sessionId: string): void {
    this.open.delete(sessionId);
    this.lost.delete(sessionId);
  }

  computed(params: ComputeParams): void {
    const session = this.open.get(params.sessionId);
    if (!session) return;
    const { model, usage, agentId } = params;
    session.lastCompute = { ...(model ? { model } : {}), ...(usage ? { usage } : {}), ...(agentId ? { agentId } : {}) };
  }

  lastCompute(sessionId: string): OpenSession['lastCompute'] {
    return this.open.get(sessionId)?.lastCompute;
  }

  /** Why `sessionId` is lost, when it is. */
  lostReason(sessionId: string): LostSession | undefined {
    return this.lost.get(sessionId);
  }

  ids(): string[] {
    return [...this.open.keys()];
  }

  /**
   * After a new process started (`generation`): every session of an older process is reopened
   * from its `restore`, a parent before the sessions forked from it, or marked lost.
   */
  async restoreAll(sidecar: Sidecar, generation: number, exit: string, log: (line: string) => void): Promise<RestartEvent> {
    const stale = [...this.open.values()].filter((s) => s.generation < generation);
    const event: RestartEvent = { generation, exit, restored: [], lost: [] };
    const done = new Set<string>();
    const visit = async (session: OpenSession, path: Set<string>): Promise<void> => {
      if (done.has(session.sessionId)) return;
      done.add(session.sessionId);
      const parent = session.parentId ? this.open.get(session.parentId) : undefined;
      if (parent && parent.generation < generation && !path.has(parent.sessionId)) {
        await visit(parent, new Set([...path, session.sessionId]));
      }
      const why = await this.reopen(sidecar, session, generation);
      if (why === undefined) {
        event.restored.push(session.sessionId);
        log(`session ${session.sessionId} restored in the new sidecar process`);
      } else {
        this.open.delete(session.sessionId);
        this.lost.set(session.sessionId, { why, generation });
        event.lost.push({ sessionId: session.sessionId, why });
        log(`session ${session.sessionId} lost: ${why}`);
      }
    };
    for (const session of stale) await visit(session, new Set());
    return event;
  }

  /** Undefined when reopened, else why not. */
  private async reopen(sidecar: Sidecar, session: OpenSession, generation: number): Promise<string | undefined> {
    if (!session.restore) {
      return 'it was opened without `restore`, so the extension cannot reopen it: call sessionOpen again with your stored history';
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      const params = await Promise.race([
        Promise.resolve().then(() => session.restore!()),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${RESTORE_TIMEOUT_MS / 1000} s`)), RESTORE_TIMEOUT_MS);
        }),
      ]);
      if (params?.sessionId !== session.sessionId) {
        return `its restore returned params for ${JSON.stringify(params?.sessionId)}, not for this session`;
      }
      await sidecar.sessionOpen(params);
      session.generation = generation;
      return undefined;
    } catch (error) {
      return `restoring it failed: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      clearTimeout(timer);
    }
  }
}
