// A session's copy in the sidecar, kept equal to OpenCode's.
//
// Before every model call OpenCode hands the plugin the session's messages as stored (from its
// newest compaction on); `Mirror.batch` compares them with what the sidecar was last sent and
// makes one `session/sync` batch of what changed: new messages whole, a changed `info` with its
// parts, a changed or new part alone (`upsertParts`: the sidecar re-estimates that part only), a
// part that went. Messages OpenCode removed (an undo) come from its `message.removed` events.
// The boundaries the sidecar inserted are its own and never sent back, and each part a rebuild
// marked is compared with its mark set (OpenCode's copy has none), so the mark is never undone
// (protocol.md "Do not sync it back").

import type { SyncParams } from 'mimo-sidecar-client';
import { markKey, markMap, withMarks, type CompactionMark, type HostMessage, type HostPart } from './messages.js';

interface Seen {
  info: string;
  parts: Map<string, string>;
}

export class Mirror {
  private readonly seen = new Map<string, Seen>();
  private readonly boundaries = new Set<string>();
  private marks = new Map<string, number>();
  private removedMessages = new Set<string>();
  private removedParts: { messageId: string; partId: string }[] = [];

  constructor(
    readonly sessionId: string,
    marks: readonly CompactionMark[] = [],
  ) {
    this.marks = markMap(marks);
  }

  /** The history `session/open` gets: OpenCode's messages and the stored boundaries, marks set. */
  opening(history: readonly HostMessage[], boundaries: readonly HostMessage[]): HostMessage[] {
    const messages = [...history.map((m) => withMarks(m, this.marks)), ...boundaries];
    messages.sort((a, b) => (a.info.id < b.info.id ? -1 : a.info.id > b.info.id ? 1 : 0));
    for (const boundary of boundaries) this.boundaries.add(boundary.info.id);
    for (const message of messages) if (!this.boundaries.has(message.info.id)) this.remember(message);
    return messages;
  }

  /** A boundary the sidecar inserted, and its marks: never sent back, compared marked. */
  inserted(boundary: HostMessage, marks: readonly CompactionMark[]): void {
    this.boundaries.add(boundary.info.id);
    for (const [key, at] of markMap(marks)) this.marks.set(key, at);
    // The sidecar marked its copies already: what it holds is the marked part.
    for (const messageId of new Set(marks.map((mark) => mark.messageId))) {
      const seen = this.seen.get(messageId);
      if (!seen) continue;
      const parts = [...seen.parts.values()].map((text) => JSON.parse(text) as HostPart);
      const marked = withMarks({ info: { id: messageId, sessionID: this.sessionId, role: 'assistant' }, parts }, this.marks);
      seen.parts = new Map(marked.parts.map((part) => [part.id, JSON.stringify(part)]));
    }
  }

  /** Whether the sidecar holds this part of this message (as sent). */
  knows(messageId: string, partId: string): boolean {
    return this.seen.get(messageId)?.parts.has(partId) ?? false;
  }

  /** A rebuild undone (OpenCode went back before it): its boundary goes from the sidecar's copy,
   * and its marks with it, so that the next batch sends the parts it had marked as they are. */
  undone(boundaryId: string, marks: readonly CompactionMark[]): void {
    if (this.boundaries.delete(boundaryId)) this.removedMessages.add(boundaryId);
    for (const mark of marks) this.marks.delete(markKey(mark.messageId, mark.callId));
  }

  messageRemoved(messageId: string): void {
    if (this.seen.delete(messageId)) this.removedMessages.add(messageId);
  }

  partRemoved(messageId: string, partId: string): void {
    const seen = this.seen.get(messageId);
    if (seen?.parts.delete(partId)) this.removedParts.push({ messageId, partId });
  }

  /** The `session/sync` batch that makes the sidecar's copy OpenCode's; null when nothing changed. */
  batch(messages: readonly HostMessage[]): SyncParams | null {
    const upsertMessages: HostMessage[] = [];
    const upsertParts: { messageId: string; part: Record<string, unknown> }[] = [];
    const removeParts = [...this.removedParts];
    for (const raw of messages) {
      const id = raw.info.id;
      if (this.boundaries.has(id)) continue;
      const message = withMarks(raw, this.marks);
      const seen = this.seen.get(id);
      const info = JSON.stringify(message.info);
      if (!seen || seen.info !== info) {
        upsertMessages.push(message);
        continue;
      }
      const ids = new Set<string>();
      for (const part of message.parts) {
        ids.add(part.id);
        if (seen.parts.get(part.id) !== JSON.stringify(part)) upsertParts.push({ messageId: id, part });
      }
      for (const partId of seen.parts.keys()) if (!ids.has(partId)) removeParts.push({ messageId: id, partId });
    }
    const removeMessages = [...this.removedMessages];
    if (!upsertMessages.length && !upsertParts.length && !removeParts.length && !removeMessages.length) return null;
    const params: SyncParams = { sessionId: this.sessionId };
    if (upsertMessages.length) params.upsertMessages = upsertMessages as unknown as SyncParams['upsertMessages'];
    if (upsertParts.length) params.upsertParts = upsertParts as unknown as SyncParams['upsertParts'];
    if (removeParts.length) params.removeParts = removeParts;
    if (removeMessages.length) params.removeMessages = removeMessages;
    return params;
  }

  /** The batch was applied: remember what the sidecar now holds. */
  applied(batch: SyncParams): void {
    for (const message of (batch.upsertMessages ?? []) as unknown as HostMessage[]) this.remember(message);
    for (const { messageId, part } of (batch.upsertParts ?? []) as unknown as { messageId: string; part: { id: string } }[]) {
      this.seen.get(messageId)?.parts.set(part.id, JSON.stringify(part));
    }
    for (const { messageId, partId } of batch.removeParts ?? []) this.seen.get(messageId)?.parts.delete(partId);
    for (const id of batch.removeMessages ?? []) this.removedMessages.delete(id);
    this.removedParts = this.removedParts.filter((r) => !(batch.removeParts ?? []).some((b) => b.messageId === r.messageId && b.partId === r.partId));
  }

  private remember(message: HostMessage): void {
    this.seen.set(message.info.id, {
      info: JSON.stringify(message.info),
      parts: new Map(message.parts.map((part) => [part.id, JSON.stringify(part)])),
    });
  }
}
