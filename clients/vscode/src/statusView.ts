// What the status bar item shows, from the sidecar's state and the sessions it reports busy
// (`rebuild/status`). Pure, so the unit tests read exactly what a user sees.

import type { SidecarState } from './api.js';

export interface StatusView {
  text: string;
  tooltip: string;
  severity: 'normal' | 'warning' | 'error';
}

/**
 * `busy` maps each session with a rebuild under way to its status message, newest last: the item
 * shows that message verbatim (`Preparing conversation context…` while a rebuild waits for its
 * writer), with the count of other sessions busy at the same time.
 */
export function statusView(state: SidecarState, busy: ReadonlyMap<string, string>, openSessions: number): StatusView {
  if (busy.size > 0) {
    const entries = [...busy.entries()];
    const [, message] = entries[entries.length - 1] as [string, string];
    const others = busy.size > 1 ? ` (+${busy.size - 1})` : '';
    return {
      text: `$(sync~spin) ${message}${others}`,
      tooltip: entries.map(([sid, m]) => `${sid}: ${m}`).join('\n'),
      severity: 'normal',
    };
  }
  const sessions = `${openSessions} session${openSessions === 1 ? '' : 's'} open`;
  switch (state.state) {
    case 'stopped':
      return { text: '$(circle-outline) MiMo', tooltip: 'MiMo sidecar: not started; it starts when an agent extension or a command needs it', severity: 'normal' };
    case 'starting':
      return { text: '$(loading~spin) MiMo', tooltip: 'MiMo sidecar: starting…', severity: 'normal' };
    case 'restarting':
      return { text: '$(sync~spin) MiMo: restarting', tooltip: `MiMo sidecar: ${state.detail ?? 'restarting'}`, severity: 'warning' };
    case 'failed':
      return { text: '$(error) MiMo', tooltip: `MiMo sidecar stopped: ${state.detail ?? 'it cannot start'}`, severity: 'error' };
    case 'running':
      return {
        text: '$(check) MiMo',
        tooltip: `mimo-sidecar ${state.version ?? ''} running (pid ${String(state.pid)}), ${sessions}${state.restarts ? `; restarted ${state.restarts} time${state.restarts === 1 ? '' : 's'}` : ''}`,
        severity: 'normal',
      };
  }
}

/** Follows `rebuild/status`: busy sets a session's message (newest last), idle clears it. */
export function applyStatus(busy: Map<string, string>, sessionId: string, state: 'busy' | 'idle', message: string): void {
  busy.delete(sessionId);
  if (state === 'busy') busy.set(sessionId, message);
}
