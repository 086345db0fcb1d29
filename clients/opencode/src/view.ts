// What the model is sent: the sidecar's view, in OpenCode's shape, with what OpenCode adds to a
// request without storing it.
//
// Before it calls the transform hook, OpenCode may add parts to the newest user message that it
// never stores (its plan-mode and mode-switch reminders, synthetic text with fresh IDs on every
// call). They are not the session's: the plugin keeps them out of the sidecar's copy, and puts
// them back into the view it hands OpenCode, on the same message when the view holds it, else on
// the view's newest user message, so the model reads them as it would without the plugin.

import { newestUser, type HostMessage, type HostPart } from './messages.js';

export interface Transient {
  messageId: string;
  parts: HostPart[];
}

/** The candidates: parts of the newest user message the sidecar has not been sent yet. */
export function unsentParts(messages: readonly HostMessage[], known: (messageId: string, partId: string) => boolean): Transient | undefined {
  const user = newestUser(messages);
  if (!user) return undefined;
  const parts = user.parts.filter((part) => !known(user.info.id, part.id));
  return parts.length ? { messageId: user.info.id, parts } : undefined;
}

/** `messages` without the transient parts (what the sidecar is sent). */
export function withoutTransient(messages: readonly HostMessage[], transient: Transient | undefined): HostMessage[] {
  if (!transient) return [...messages];
  const ids = new Set(transient.parts.map((part) => part.id));
  return messages.map((m) => (m.info.id === transient.messageId ? { info: m.info, parts: m.parts.filter((p) => !ids.has(p.id)) } : m));
}

/** The view with the transient parts back (as a copy of the message they go on). */
export function withTransient(view: readonly HostMessage[], transient: Transient | undefined): HostMessage[] {
  const out = [...view];
  if (!transient) return out;
  let index = out.findIndex((m) => m.info.id === transient.messageId);
  if (index < 0) {
    const user = newestUser(out);
    index = user ? out.lastIndexOf(user) : -1;
  }
  const target = out[index];
  if (!target) return out;
  out[index] = { info: target.info, parts: [...target.parts, ...transient.parts] };
  return out;
}
