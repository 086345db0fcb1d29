// The checkpoint writer, as one model call through OpenCode itself.
//
// A rebuild is only as good as the session's checkpoint.md. The sidecar's writer kit gives the
// writer's request (`checkpoint/prepare`: the history up to the watermark, and the instructions);
// the plugin has the model answer it through OpenCode, with the session's own provider, model,
// credentials and retries: it opens a child session of the one it writes for, prompts it with the
// instructions, all tools off (the writer writes text and nothing else), and, when OpenCode asks
// for that session's messages (the transform hook), puts the history in front of the prompt in
// OpenCode's own shape (`hostView`). The reply is committed with `checkpoint/commit`; a writer
// that fails is settled with `checkpoint/writerFinished`, so no insert waits for it longer than
// it must. The child session is deleted afterwards, unless the user keeps writers to read them.

import type { PrepareResult, Sidecar } from 'mimo-sidecar-client';
import { describe, type Logger } from './log.js';
import type { HostMessage } from './messages.js';
import { dataOf, type OpenCodeApi } from './opencode_api.js';

export const WRITER_TITLE = 'Checkpoint writer (mimo-sidecar)';

export interface WriterRun {
  sidecar: Sidecar;
  sessionId: string;
  prepared: PrepareResult;
  model?: { providerID: string; modelID: string };
  agent?: string;
}

export type WriterResult = { outcome: 'committed'; watermark: string } | { outcome: 'failed'; reason: string };

export class CheckpointWriters {
  /** Writer session → the history it writes from (given to OpenCode in front of its prompt). */
  private readonly histories = new Map<string, HostMessage[]>();

  constructor(
    private readonly client: OpenCodeApi,
    private readonly log: Logger,
    private readonly keepSessions = false,
  ) {}

  /** The history to put in front of a writer session's messages; undefined for other sessions. */
  historyOf(sessionId: string): HostMessage[] | undefined {
    return this.histories.get(sessionId);
  }

  isWriter(sessionId: string): boolean {
    return this.histories.has(sessionId);
  }

  /** Write the checkpoint; settles the writer on the sidecar whatever happens. Never throws. */
  async run(run: WriterRun): Promise<WriterResult> {
    const { sidecar, sessionId, prepared } = run;
    const history = (prepared.view ?? []) as unknown as HostMessage[];
    let writerSession: string | undefined;
    const started = Date.now();
    try {
      if (!history.length) throw new Error('checkpoint/prepare answered no history (hostView)');
      writerSession = dataOf(
        await this.client.session.create({ body: { parentID: sessionId, title: WRITER_TITLE } }),
        'creating the writer session',
      ).id;
      this.histories.set(writerSession, history);
      const reply = dataOf(
        await this.client.session.prompt({
          path: { id: writerSession },
          body: {
            parts: [{ type: 'text', text: prepared.instructions }],
            tools: { '*': false },
            ...(run.model ? { model: run.model } : {}),
            ...(run.agent ? { agent: run.agent } : {}),
          },
        }),
        'the writer model call',
      );
      if (reply.info.error) throw new Error(`the model answered an error: ${JSON.stringify(reply.info.error)}`);
      const content = reply.parts
        .filter((part) => part.type === 'text' && !part.synthetic && typeof part.text === 'string')
        .map((part) => part.text as string)
        .join('')
        .trim();
      if (!content) throw new Error('the model wrote no text');
      const committed = await sidecar.checkpointCommit({ sessionId, watermark: prepared.watermark, content: `${content}\n` });
      this.log.log('info', `checkpoint written for ${sessionId} in ${Date.now() - started} ms: ${committed.bytesWritten} bytes, covers ${committed.watermark}`);
      return { outcome: 'committed', watermark: committed.watermark ?? prepared.watermark };
    } catch (error) {
      const reason = describe(error);
      this.log.log('warn', `checkpoint writer for ${sessionId} failed: ${reason}`);
      await sidecar
        .checkpointWriterFinished({ sessionId, outcome: 'failure', retryable: true })
        .catch((settle) => this.log.log('warn', `checkpoint/writerFinished: ${describe(settle)}`));
      return { outcome: 'failed', reason };
    } finally {
      if (writerSession) {
        this.histories.delete(writerSession);
        if (!this.keepSessions) {
          await this.client.session
            .delete({ path: { id: writerSession } })
            .catch((error) => this.log.log('warn', `deleting the writer session ${writerSession}: ${describe(error)}`));
        }
      }
    }
  }
}
