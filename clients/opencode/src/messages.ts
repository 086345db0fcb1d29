// OpenCode's messages as the plugin handles them. OpenCode stores a message as `{info, parts}` with
// inline tool parts, which is the sidecar's own data model (MiMo Code is an OpenCode fork): the
// plugin sends them to the sidecar as they are and gets the rebuilt view back in the same shape.

export interface HostPart {
  id: string;
  type: string;
  [key: string]: unknown;
}

export interface HostInfo {
  id: string;
  sessionID: string;
  role: string;
  [key: string]: unknown;
}

export interface HostMessage {
  info: HostInfo;
  parts: HostPart[];
}

/** A compaction mark of `rebuild/insert` (protocol.md "Host obligations"). */
export interface CompactionMark {
  messageId: string;
  callId: string;
  partId?: string | null;
  compactedAt: number;
}

/**
 * OpenCode's message IDs (`msg_` + 12 hex digits of the time + a counter, then 14 letters) sort as
 * they were created, and so do the IDs the sidecar mints for a boundary in the same scheme
 * (protocol.md "Ordering", legacy v1): creation order is plain string order.
 */
export function byCreation(a: HostMessage, b: HostMessage): number {
  return a.info.id < b.info.id ? -1 : a.info.id > b.info.id ? 1 : 0;
}

/** `message` with the marks that name it set on its tool parts (`state.time.compacted`), as a copy. */
export function withMarks(message: HostMessage, marks: ReadonlyMap<string, number>): HostMessage {
  let parts: HostPart[] | undefined;
  message.parts.forEach((part, index) => {
    const at = part.type === 'tool' ? marks.get(markKey(message.info.id, String(part.callID))) : undefined;
    if (at === undefined) return;
    const state = (part.state ?? {}) as Record<string, unknown>;
    const time = (state.time ?? {}) as Record<string, unknown>;
    if (time.compacted === at) return;
    parts ??= [...message.parts];
    parts[index] = { ...part, state: { ...state, time: { ...time, compacted: at } } };
  });
  return parts ? { info: message.info, parts } : message;
}

export function markKey(messageId: string, callId: string): string {
  return `${messageId}\u0000${callId}`;
}

export function markMap(marks: readonly CompactionMark[]): Map<string, number> {
  return new Map(marks.map((m) => [markKey(m.messageId, m.callId), m.compactedAt]));
}

/** The newest user message of a list in send order. */
export function newestUser<M extends HostMessage>(messages: readonly M[]): M | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message && message.info.role === 'user') return message;
  }
  return undefined;
}

/** The model a message names: a user message's `model`, an assistant's `providerID`/`modelID`. */
export function modelOf(message: HostMessage | undefined): { providerID: string; modelID: string } | undefined {
  if (!message) return undefined;
  const model = message.info.model as { providerID?: unknown; modelID?: unknown } | undefined;
  const providerID = model?.providerID ?? message.info.providerID;
  const modelID = model?.modelID ?? message.info.modelID;
  return typeof providerID === 'string' && typeof modelID === 'string' ? { providerID, modelID } : undefined;
}
